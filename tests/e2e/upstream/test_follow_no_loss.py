"""Following an upstream version loses nothing silently (issue 27, item 2): quarantined rows are
counted with their reasons in the changelog and the card, the rebase has ingest's quarantine
ceiling, and a calculator of the previous release that the next one lacks blocks it, by name.

The end-to-end tests of this subject; the fast ones are in tests/upstream/test_follow_no_loss.py."""

from __future__ import annotations

import json

import yaml

from medcalc_maintained.project import Project
from tests.upstream.test_follow_no_loss import _base_stages, _project


# rebase + release tables + a release build
def test_a_dropped_calculator_blocks_and_quarantine_is_counted(tmp_path):
    from medcalc_maintained.contracts.validate import validate
    from medcalc_maintained.stages import ledger_rebase, release, release_tables

    project = _project(tmp_path, max_quarantine=3)
    _base_stages(project)
    summary = ledger_rebase.run(project)
    assert summary["rows"] == 1 and summary["quarantined_rows"] == 1
    release_tables.run(project)
    built = release.run(project, out=tmp_path / "build" / "release")
    assert built.release.version == "2.0.0"
    man = json.loads((built.out / "manifest.json").read_text(encoding="utf-8"))
    assert man["previous"] == {"version": "1.0.0", "calculators": {"test": ["2:Score 2", "3:Score 3"]}}
    changelog = (built.out / "CHANGELOG.md").read_text(encoding="utf-8")
    section = changelog.split("## 2.0.0 (")[1].split("\n## ")[0]
    card = (built.out / "README.md").read_text(encoding="utf-8")
    for text in (section, card):
        assert "1 row(s) of upstream MedCalc-Bench b are quarantined" in text
        assert "| Ground Truth Answer | cannot parse as decimal: not a number, date, gestational age or N/A | 1 |" in text
    rep = validate(built.out, project=project, gate_overrides={"max_unverified_rate": {"max": 1.0}})
    gate = [f for f in rep.blocking if f.expectation == "expect_column_values_to_be_between(gradable_rows)"]
    assert gate and gate[0].offending == ["split=test Calculator ID=3 Calculator Name=Score 3"]


# release tables + a release build
def test_the_base_release_says_nothing_is_quarantined(tmp_path):
    from medcalc_maintained.contracts.validate import validate
    from medcalc_maintained.stages import release, release_tables

    project = _project(tmp_path, max_quarantine=0)
    params = yaml.safe_load((tmp_path / "params.yaml").read_text(encoding="utf-8"))
    params["upstream"]["version"] = "a"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    project = Project.load(tmp_path)
    _base_stages(project)
    release_tables.run(project)
    built = release.run(project, out=tmp_path / "build" / "release")
    card = (built.out / "README.md").read_text(encoding="utf-8")
    assert "Every row of upstream MedCalc-Bench a parsed: no row is quarantined" in card
    assert "previous" not in json.loads((built.out / "manifest.json").read_text(encoding="utf-8"))
    rep = validate(built.out, project=project)
    assert rep.evaluated and not [f for f in rep.failures if "gradable_rows" in f.expectation]
