"""``--help`` shows placeholders as written and boolean flags without a value type (issue 27, item 4)."""

from __future__ import annotations

from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.cli.help_format import escape_placeholders


def _help(*command: str) -> str:
    r = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "250", "TERMINAL_WIDTH": "250"})
    assert r.exit_code == 0, r.output
    return " ".join(r.output.split())


def test_placeholders_are_rendered():
    assert "data/corrections/<yyyy-mm>-proposals.yaml" in _help("propose")
    assert "data/<config>/<split>-00000-of-00001.parquet" in _help("release", "build")


def test_boolean_flags_show_no_value_type():
    text = _help("propose")
    assert "--blinded The label was derived" in text and "<bool>" not in text
    assert "<bool>" not in _help("release", "build") and "--draft Preview" in _help("release", "build")
    assert "--file <path>" in text   # options that take a value keep their type


def test_escaping_leaves_code_spans_and_comparisons_alone():
    assert escape_placeholders("a <b> `c <d>` 1 < 2 > 0") == "a \\<b> `c <d>` 1 < 2 > 0"
