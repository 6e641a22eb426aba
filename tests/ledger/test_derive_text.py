"""What `ledger derive` prints for a computed value: the text a label would carry, never "-0"."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medcalc_maintained.calculators.base import format_value
from medcalc_maintained.cli import app
from tests.support.ledger_support import minimal_project

runner = CliRunner()


@pytest.mark.parametrize("value, text", [(-0.0001, "0"), (-0.0, "0"), (0.0004, "0"), (-0.0005, "-0.001"), (-1.5, "-1.5")])
def test_a_decimal_that_rounds_to_zero_is_zero(value, text):
    assert format_value(value, "decimal")[0] == text


def test_ledger_derive_prints_zero_for_a_delta_ratio_that_rounds_to_zero(tmp_path, real_instances):
    root: Path = minimal_project(tmp_path / "p", real_instances)
    # uid 766 (Delta Ratio): upstream's entities give a ratio that rounds to zero from below
    r = runner.invoke(app, ["ledger", "derive", "--uid", "766"], env={"MEDCALC_ROOT": str(root)})
    said = " ".join(r.output.split())
    assert "delta-ratio-ag12-hco3-24 gives 0" in said and "gives -0" not in said, r.output
