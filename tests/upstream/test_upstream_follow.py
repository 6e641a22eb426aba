"""Following a new upstream version through the pipeline: instance_key, the stages upstream-diff
and ledger-rebase, apply and release-tables on the followed version, and the MAJOR release whose
changelog lists upstream's changes apart from ours."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained.project import Project


def _set_version(root: Path, version: str) -> Project:
    params = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    params["upstream"]["version"] = version
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    return Project.load(root)


# ------------------------------------------------------------------------------------ instance_key


def test_instance_key_in_ingest_output(real_instances, v1_test_csv, old_test_csv):
    from medcalc_maintained.stages.ingest import ingest

    keys = real_instances["instance_key"]
    assert keys.notna().all() and keys.is_unique and keys.str.match(r"^k-[0-9a-f]{16}").all()
    old = ingest([("test", old_test_csv)]).instances
    # rows whose calculator, note and question did not change keep their key across versions
    shared = set(keys) & set(old["instance_key"])
    assert len(shared) > 700
    a = real_instances.set_index("instance_key").loc[sorted(shared)[:20]]
    b = old.set_index("instance_key").loc[sorted(shared)[:20]]
    from medcalc_maintained.upstream.identity import normalise

    assert (a["Calculator ID"] == b["Calculator ID"]).all()
    assert [normalise(q) for q in a["Question"]] == [normalise(q) for q in b["Question"]]
    assert [normalise(n) for n in a["Patient Note"]] == [normalise(n) for n in b["Patient Note"]]


def test_instance_key_contract_fact():
    from medcalc_maintained.contracts.views import instance_key_facts

    df = pd.DataFrame({"split": ["test", "test", "test", "train"],
                       "instance_key": ["k-0123456789abcdef", "k-0123456789abcdef", "bad", "k-0123456789abcdef~n1#2"]})
    assert instance_key_facts(df) == [False, False, False, True]
    assert instance_key_facts(df.drop(columns="instance_key")) == [True] * 4


# ------------------------------------------------------------------------------------ the plan


def test_plan_adds_a_major_release_only_for_another_upstream(tmp_path):
    from medcalc_maintained.release.upstream import plan_for, upstream_of

    root = tmp_path
    (root / "releases.yaml").write_text(yaml.safe_dump({"releases": [
        {"version": "1.0.0", "date": "2026-01-01", "kind": "major", "description": "base"},
        {"version": "1.1.0", "date": "2026-02-01", "kind": "minor", "description": "fixes"}]}), encoding="utf-8")
    (root / "params.yaml").write_text("upstream:\n  version: v1.0\n", encoding="utf-8")
    plan = plan_for(Project.load(root))
    assert [r.version for r in plan.releases] == ["1.0.0", "1.1.0"]
    p = _set_version(root, "2024-06")
    plan = plan_for(p)
    new = plan.latest
    assert (new.version, new.kind, new.upstream) == ("2.0.0", "major", "2024-06")
    assert upstream_of(p, plan.releases[0]) == "v1.0" and "2024-06" in new.description
    # apply works on upstream.base: only the new major release is on another upstream
    from medcalc_maintained.release.upstream import on_another_upstream

    assert [on_another_upstream(p, r) for r in plan.releases] == [False, False, True]


def test_release_upstream_field_is_checked(tmp_path):
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.release.plan import load_releases

    path = tmp_path / "releases.yaml"
    path.write_text(yaml.safe_dump({"releases": [
        {"version": "1.0.0", "date": "2026-01-01", "kind": "major", "description": "x", "upstream": "../v1.0"}]}),
        encoding="utf-8")
    with pytest.raises(DataError) as e:
        load_releases(path)
    assert "upstream" in str(e.value) and "1.0.0" in str(e.value)


# ------------------------------------------------------------------------------------ a made-up project


def _upstream_csv(path: Path, rows) -> None:
    from medcalc_maintained.stages.ingest import UPSTREAM_COLUMNS

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"Row Number": rn, "Calculator ID": calc, "Calculator Name": f"calc {calc}", "Category": "lab",
                   "Output Type": "decimal", "Note ID": nid, "Note Type": "Extracted", "Patient Note": note,
                   "Question": f"What is score {calc}?", "Relevant Entities": "{}", "Ground Truth Answer": label,
                   "Lower Limit": label, "Upper Limit": label, "Ground Truth Explanation": ""}
                  for rn, calc, nid, note, label in rows], columns=UPSTREAM_COLUMNS).to_csv(path, index=False)


def _record(id_, uid, old, new):
    return {"id": id_, "uid": uid, "split": "test", "old_value": old, "new_value": new, "decision": "accepted",
            "label_status": "corrected", "error_type": "aggregation", "rationale": "made up for the follow test",
            "evidence": ["test"], "source": "contributor", "reviewer": {"id": "tester", "role": "contributor"},
            "blinded": False, "decided_at": "2026-01-01", "release": "1.1.0"}


def test_synthetic_project_follows_a_new_upstream(tmp_path, monkeypatch):
    from medcalc_maintained.ledger.records import dump
    from medcalc_maintained.release.tables import load_config
    from medcalc_maintained.stages import apply, ingest, ledger_rebase, release_tables, upstream_diff
    from tests.support.paths import ROOT

    root = tmp_path
    _upstream_csv(root / "up" / "a" / "test_data.csv", [
        (1, 2, "n1", "First note: sodium 140, glucose 90.", "1.5"),
        (2, 2, "n2", "Second note: a removed row about potassium 5.1.", "2.5"),
        (3, 3, "n3", "Third note: heart rate 100 and age 70.", "3")])
    _upstream_csv(root / "up" / "b" / "test_data.csv", [
        (1, 9, "n9", "An added row about a new calculator.", "7"),
        (2, 3, "n3", "Third note: heart rate 100 and age 70.", "4"),
        (3, 2, "n1", "First note: sodium 140, glucose 90.", "1.5")])
    ledger = root / "ledger" / "fixes.yaml"
    ledger.parent.mkdir()
    recs = [_record("S-1", 1, "1.5", "1.6"), _record("S-2", 2, "2.5", "2.1"), _record("S-3", 3, "3", "4")]
    ledger.write_text(dump(recs, ledger, batch={"name": "t", "description": "made up"}), encoding="utf-8")
    (root / "params.yaml").write_text(yaml.safe_dump({
        "upstream": {"dir": "up", "version": "a", "base": "a", "splits": {"test": {"path": "up/a/test_data.csv"}}},
        "apply": {"ledger": ["ledger"]}}), encoding="utf-8")
    (root / "releases.yaml").write_text(yaml.safe_dump({"releases": [
        {"version": "1.0.0", "date": "2026-01-01", "kind": "major", "description": "base", "default_rows": "all"},
        {"version": "1.1.0", "date": "2026-01-02", "kind": "minor", "description": "fixes", "default_rows": "all"}]}),
        encoding="utf-8")
    (root / "dataset_card.md").write_text((ROOT / "dataset_card.md").read_text(encoding="utf-8"), encoding="utf-8")
    project = Project.load(root)
    ingest.run(project)
    assert upstream_diff.run(project)["test"].summary["matched_unchanged"] == 3
    assert ledger_rebase.run(project)["noop"]
    base_labels = dict(zip(*(apply.run(project)[0][c] for c in ("uid", "Ground Truth Answer"))))
    assert base_labels == {1: "1.6", 2: "2.1", 3: "4"}

    project = _set_version(root, "b")
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    monkeypatch.setenv("MEDCALC_ROOT", str(root))
    r = CliRunner().invoke(app, ["upstream", "diff"])   # the stage form: base -> followed version
    assert r.exit_code == 0, r.output
    assert "matched unchanged" in r.output and (project.upstream_diff_dir / "test" / "row_map.csv").is_file()
    r = CliRunner().invoke(app, ["ledger", "rebase"])
    assert r.exit_code == 0 and "carried 1, upstreamed 1, conflict 0, orphaned 1" in r.output, r.output
    r = CliRunner().invoke(app, ["upstream", "diff", "a"])
    assert r.exit_code == 2
    s = ledger_rebase.run(project)
    assert (s["carried"], s["upstreamed"], s["orphaned"], s["conflict"]) == (1, 1, 1, 0)
    assert dict(zip(*(apply.run(project)[0][c] for c in ("uid", "Ground Truth Answer")))) == base_labels  # apply: base
    release_tables.run(project)
    m = load_config(project, "2.0.0", "full").set_index("uid")
    assert m.loc[3, "Ground Truth Answer"] == "1.6" and m.loc[3, "Label Status"] == "corrected"   # carried
    assert m.loc[2, "Ground Truth Answer"] == "4" and m.loc[2, "Label Status"] == "unverified"    # upstreamed: held
    assert m.loc[1, "Label Status"] == "unverified" and m["instance_key"].is_unique               # added
    full = load_config(project, "2.0.0", "full").set_index("uid")
    assert full.loc[3, "Ground Truth Answer"] == "1.6" and len(full) == 3
    old = load_config(project, "1.1.0", "full").set_index("uid")
    assert dict(old["Ground Truth Answer"]) == base_labels   # the listed releases stay on the base upstream
