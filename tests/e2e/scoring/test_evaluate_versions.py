"""evaluate against release directories and versions, --subset, and hostile prediction files.

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_evaluate_versions.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def real_configs(tables_project):
    """config(version, name): the configs of releases 1.0.0 and 2.0.0 of the pipeline project (its
    release tables) for the expected values of the tests that run ``evaluate`` on a copy of it."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.tables import load_config

    project = Project.load(tables_project)
    return lambda version, config: load_config(project, version, config)


def test_readme_subset_mini_command_on_the_real_releases(tables_root, real_configs, tmp_path, monkeypatch):
    """docs/evaluating.md's `evaluate PRED --against v1.0 --against v2.0 --subset mini` on real labels:
    1.0.0 has no mini rows, so both versions are scored on 2.0.0's mini rows."""
    mini = real_configs("2.0.0", "mini")
    assert len(real_configs("1.0.0", "mini")) == 0 and len(mini) > 0
    full1 = real_configs("1.0.0", "full")
    preds = tmp_path / "gold-v1.jsonl"  # every row answers its v1.0 label
    preds.write_text("".join(json.dumps({"uid": int(u), "output": f"<answer>{a}</answer>"}) + "\n"
                             for u, a in zip(full1["uid"], full1["Ground Truth Answer"])))
    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))
    out = tmp_path / "ev"
    res = runner.invoke(app, ["evaluate", str(preds), "--against", "v1.0", "--against", "v2.0", "--subset", "mini",
                              "--out", str(out), "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "evaluation.json").read_text())
    acc = {a["label_set"]: a for a in data["accuracy"]}
    assert acc["v1.0.0"]["n"] == acc["v2.0.0"]["n"] == len(mini)
    assert acc["v1.0.0"]["correct"] == len(mini)  # the v1.0 labels answered under v1.0
    assert any("v1.0.0 has an empty 'mini' config" in n for n in data["notes"])
    assert "empty 'mini' config" in " ".join(res.output.split())


def test_all_rows_against_v1_v2_and_a_built_release(tables_root, real_configs, tmp_path, monkeypatch):
    """Predictions for all 1,047 rows (each answers its v1.0 label) against v1.0, v2.0 and the
    built 2.0.0 release directory of the real pipeline outputs."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.build import build

    project = Project.load(tables_root)
    built = build(project, tables_root / "build" / "release", version="2.0.0")
    full1 = real_configs("1.0.0", "full")
    full2 = real_configs("2.0.0", "full").set_index("uid")
    preds = tmp_path / "all.jsonl"
    preds.write_text("".join(json.dumps({"uid": int(u), "output": f"<answer>{a}</answer>"}) + "\n"
                             for u, a in zip(full1["uid"], full1["Ground Truth Answer"])))
    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))
    out = tmp_path / "ev"
    res = runner.invoke(app, ["evaluate", str(preds), "--against", "v1.0", "--against", "v2.0",
                              "--against", str(tables_root / "build" / "release"), "--out", str(out),
                              "--n-boot", "500"])
    assert res.exit_code == 0, res.output
    data = json.loads((out / "evaluation.json").read_text())
    acc = {a["label_set"]: a for a in data["accuracy"]}
    verified = full2[full2["Label Status"] != "unverified"]
    assert acc["v1.0.0"]["n"] == 1047 and acc["v1.0.0"]["correct"] == 1047
    assert acc["v2.0.0"]["n"] == len(verified) == 887
    assert acc["v2.0.0"]["skipped_unlabelled_in_this_version"] == 1047 - 887
    # answers equal to the v1.0 label are right under 2.0.0 where 2.0.0 confirmed it
    confirmed = int((verified["Label Status"] == "confirmed").sum())
    assert acc["v2.0.0"]["correct"] >= confirmed
    assert acc["release"]["correct"] == acc["v2.0.0"]["correct"]
    flips = pd.read_csv(out / "flips.csv")
    assert len(flips) == 887 - acc["v2.0.0"]["correct"] == data["comparisons"][0]["a_only"]
    assert built is not None


def test_a_pending_proposal_never_blocks_grading_against_a_published_release(tables_root, real_configs, tmp_path,
                                                                              monkeypatch):
    """Issue 48, item 5: after a contributor's `propose` (a deferred record without a release in
    data/corrections), `evaluate --against 2.2.0` and `regrade` grade the published release with the
    same numbers as before: a record of no release is in no release's tables. A record given a
    release still makes the tables stale."""
    full = real_configs("1.0.0", "full")
    preds = tmp_path / "gold-v1.jsonl"  # every row answers its v1.0 label
    preds.write_text("".join(json.dumps({"uid": int(u), "output": f"<answer>{a}</answer>"}) + "\n"
                             for u, a in zip(full["uid"], full["Ground Truth Answer"])))
    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))

    def graded(name: str, *against: str) -> dict:
        res = runner.invoke(app, ["evaluate", str(preds), *against, "--out", str(tmp_path / name), "--n-boot", "200"])
        assert res.exit_code == 0, res.output
        data = json.loads((tmp_path / name / "evaluation.json").read_text())
        return {k: data[k] for k in ("label_sets", "accuracy", "common_rows", "comparisons", "flips")}

    against = ("--against", "2.2.0", "--against", "v1.0")
    before = graded("before", *against)
    for uid, value, etype in (("3", "25.017", "none"), ("41", "N/A", "unanswerable")):  # a new file, then appended
        res = runner.invoke(app, ["propose", "--uid", uid, "--new-value", value, "--error-type", etype,
                                  "--rationale", "a contributor's reading", "--date", "2026-12-02"])
        assert res.exit_code == 0, res.output
    proposals = tables_root / "data" / "corrections" / "2026-12-proposals.yaml"
    text = proposals.read_text()
    assert text.count("\n  decision: deferred\n") == 2 and "release:" not in text
    assert graded("after", *against) == before
    res = runner.invoke(app, ["regrade", str(preds), *against, "--out", str(tmp_path / "regrade"), "--n-boot", "200"])
    assert res.exit_code == 0, res.output
    regraded = json.loads((tmp_path / "regrade" / "evaluation.json").read_text())
    assert regraded["accuracy"] == before["accuracy"]

    # given a release, the record is one of that release's records: its tables are stale until rebuilt
    proposals.write_text(text.replace("\n  decision: deferred\n", "\n  decision: deferred\n  release: 2.2.0\n", 1))
    res = runner.invoke(app, ["evaluate", str(preds), *against, "--out", str(tmp_path / "stale"), "--n-boot", "200"])
    assert res.exit_code == 2 and "release tables of 2.2.0 are stale" in " ".join(res.output.split())
    assert "dvc repro release-tables" in res.output and not (tmp_path / "stale").exists()
