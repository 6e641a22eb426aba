"""Messages that state the violation (issue 27): contract failures name what they observed, and the
publish note on N warnings names exactly N.

The end-to-end tests of this subject; the fast ones are in tests/contracts/test_messages.py."""

from __future__ import annotations


def test_validate_prints_the_gcs_18_warning_as_a_violation(pipeline_project):
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    r = CliRunner().invoke(app, ["validate"], env={"MEDCALC_ROOT": str(pipeline_project)})
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert ("unverified_label_in_range): 1 row(s) break the rule" in text and "split=test uid 862: Label Status "
            "'unverified', Ground Truth Answer '18', range_problem '18 is outside the range of Glasgow Coma Score "
            "(GCS) (3 to 15 points)'") in text
    for line in [x for x in r.output.splitlines() if x.startswith("WARNING")]:
        assert "break the rule" in line or "observed" in line, line
