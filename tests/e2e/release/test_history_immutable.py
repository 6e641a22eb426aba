"""A published release cannot be rewritten (issue: history-immutable): once `release freeze` has
recorded what a release carried, a record that claims it without having been published in it, a
published record edited or removed, or a record decided after its release's date is refused by
`apply` and by the contracts, naming the record; a release whose labels were edited after the build
(manifest re-hashed) fails `validate`, naming the row and column; and a published release keeps the
evidence verdicts it published whatever the verifier says later."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support.ledger_support import record
from tests.support.release_support import cli

VERSIONS = ("1.0.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.3.1", "2.3.2")


@pytest.fixture(scope="module")
def frozen_project(tables_project, tmp_path_factory) -> Path:
    """:func:`tables_project` with every release frozen from its own tables (as after publishing)."""
    root = tmp_path_factory.mktemp("frozen") / "project"
    shutil.copytree(tables_project, root)
    shutil.rmtree(root / "data" / "released", ignore_errors=True)
    for v in VERSIONS:
        r = cli(root, "release", "freeze", v, "--from", str(root / "data" / "releases" / v))
        assert r.exit_code == 0, r.output
        assert f"froze release {v}" in r.output
    return root


@pytest.fixture
def project(frozen_project, tmp_path) -> Path:
    return shutil.copytree(frozen_project, tmp_path / "project")


def one_line(text: str) -> str:
    return " ".join(text.split())


def add_records(root: Path, *records: dict) -> None:
    (root / "data" / "corrections" / "2026-12-test.yaml").write_text(
        yaml.safe_dump({"corrections": list(records)}, sort_keys=False, allow_unicode=True))


def test_the_frozen_history_names_each_release_its_records_and_its_verdicts(frozen_project):
    doc = json.loads((frozen_project / "data" / "released" / "published.json").read_text())
    assert list(doc["releases"]) == list(VERSIONS)
    assert doc["releases"]["1.0.0"]["records"] == {}
    assert len(doc["releases"]["2.0.0"]["records"]) == 887  # the published audit's records
    assert all(len(h) == 64 for h in doc["releases"]["2.1.0"]["records"].values())
    assert doc["releases"]["2.1.0"]["verdicts"] == {}  # the evidence gate starts at 2.2.0
    again = cli(frozen_project, "release", "freeze", "2.1.0", "--from", str(frozen_project / "data" / "releases" / "2.1.0"))
    assert again.exit_code == 0 and "already frozen, unchanged" in again.output, again.output


def test_a_new_record_cannot_claim_a_published_release(project):
    before = (project / "data" / "maintained" / "instances.parquet").read_bytes()
    add_records(project, record(id="T-LATE-1", uid=200, release="2.1.0", old_value="x", new_value="5",
                                decided_at="2026-11-30"))
    r = cli(project, "apply")
    assert r.exit_code == 2, r.output
    text = one_line(r.output)
    assert "T-LATE-1" in text and "claims release 2.1.0, which is published without it" in text, text
    assert "decided_at 2026-11-30 is after release 2.1.0's date 2026-11-24" in text, text
    assert (project / "data" / "maintained" / "instances.parquet").read_bytes() == before
    v = cli(project, "validate")
    assert v.exit_code == 1, v.output
    assert "history" in v.output and "T-LATE-1" in one_line(v.output), v.output


def test_a_published_record_cannot_be_edited_or_removed(project):
    policy = project / "data" / "harmonize" / "policy-2.1.0.yaml"
    doc = yaml.safe_load(policy.read_text())
    edited, removed = doc["corrections"][0], doc["corrections"][1]
    edited["rationale"] += " (edited)"
    doc["corrections"] = [c for c in doc["corrections"] if c is not removed]
    policy.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    r = cli(project, "apply")
    assert r.exit_code == 2, r.output
    text = one_line(r.output)
    assert f"{edited['id']}" in text and "differs from the record release 2.1.0 published" in text, text
    assert f"record {removed['id']}, published in release 2.1.0, is missing from the ledger" in text, text


def test_a_frozen_entry_is_never_changed(project):
    path = project / "data" / "released" / "published.json"
    doc = json.loads(path.read_text())
    doc["releases"]["2.0.0"]["date"] = "2026-11-21"
    path.write_text(json.dumps(doc))
    before = path.read_bytes()
    r = cli(project, "release", "freeze", "2.0.0", "--from", str(project / "data" / "releases" / "2.0.0"))
    assert r.exit_code == 2, r.output
    assert "already holds release 2.0.0, frozen otherwise" in one_line(r.output), r.output
    assert path.read_bytes() == before


def test_a_published_release_keeps_the_verdicts_it_published(project):
    """The verdict recorded for an input at freezing time is what a rebuild of that release shows,
    whatever the verifier says of the same quote today."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.table_builder import build_tables

    path = project / "data" / "released" / "published.json"
    doc = json.loads(path.read_text())
    verdicts = doc["releases"]["2.2.0"]["verdicts"]
    assert verdicts, "release 2.2.0 of the fixture records inputs"
    key = sorted(verdicts)[0]
    verdicts[key] = {**verdicts[key], "reason": "as published (frozen)"}
    path.write_text(json.dumps(doc))
    p = Project.load(project)
    t = build_tables(p, load_releases(p.releases_file).get("2.2.0"))
    derivations = " ".join(t.combined("full")["Derivation"].dropna())
    assert "as published (frozen)" in derivations


def test_a_published_release_keeps_every_rows_evidence_it_published(project):
    """From 2.3.0 a release publishes every verified row's `Evidence` (each input's verdict and quote): frozen, a
    rebuild ships those cells whatever stage certify (a later verifier or search) reads now, and the evidence
    contract holds the release to them instead of re-reading the notes."""
    from medcalc_maintained.contracts.release_evidence import evidence_view
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.table_builder import build_tables

    path = project / "data" / "released" / "published.json"
    doc = json.loads(path.read_text())
    cells = doc["releases"]["2.3.0"]["evidence"]
    assert len(cells) == 887 and not doc["releases"]["2.2.0"].get("evidence")  # every verified row; none before 2.3.0
    cell = json.loads(cells["test:215"])
    cell["inputs"][0]["reason"] = "as published (frozen)"
    cells["test:215"] = json.dumps(cell, sort_keys=True)
    path.write_text(json.dumps(doc))
    # stage certify's reading of today, if the project has one, is gone: a build would certify every row anew
    (project / "data" / "evidence" / "inputs.parquet").unlink(missing_ok=True)
    p = Project.load(project)
    full = build_tables(p, load_releases(p.releases_file).get("2.3.0")).combined("full")
    shipped = {f"test:{u}": c for u, c in zip(full["uid"], full["Evidence"]) if isinstance(c, str)}
    assert shipped == cells and "as published (frozen)" in shipped["test:215"]
    assert evidence_view(full, "2.3.0", cells)["verdicts_reverify"].all()
    other = full.copy()
    other.loc[other["uid"] == 211, "Evidence"] = cells["test:215"]  # another cell than the one published
    view = evidence_view(other, "2.3.0", cells).set_index("uid")
    assert not view.at[211, "verdicts_reverify"]
    assert "differs from the cell the release published" in view.at[211, "evidence_problem"]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_release_edited_after_its_build_fails_validate(project):
    out = project / "build" / "v2.2.0"
    r = cli(project, "release", "build", "--out", str(out), "--version", "2.2.0")
    assert r.exit_code == 0, r.output
    ok = cli(project, "validate", str(out))
    assert ok.exit_code == 0, ok.output
    # the forgery: one label of `default` changed, the manifest re-hashed to match
    part = next((out / "data" / "default").glob("*.parquet"))
    df = pd.read_parquet(part)
    uid = int(df.loc[0, "Row Number"])
    df.loc[0, "Ground Truth Answer"] = "999"
    df.to_parquet(part, index=False)
    man = json.loads((out / "manifest.json").read_text())
    man["files"] = {f: (_sha(out / f) if f == part.relative_to(out).as_posix() else h) for f, h in man["files"].items()}
    (out / "manifest.json").write_text(json.dumps(man, indent=2))
    bad = cli(project, "validate", str(out))
    assert bad.exit_code == 1, bad.output
    text = one_line(bad.output)
    assert "history" in text and f"row=test:{uid}" in text and "column 'Ground Truth Answer': release '999'" in text, text


def test_publish_refuses_a_feed_that_rewrites_a_published_release(tmp_path):
    from medcalc_maintained.release.semver import history_problem

    data = "data/default/test-00000-of-00001.parquet"
    feed = {"releases": [{"version": "2.1.0", "configs": {"default": {"files": {data: "a" * 64}}}},
                         {"version": "2.2.0", "configs": {"default": {"files": {data: "c" * 64}}}}]}
    (tmp_path / "releases.json").write_text(json.dumps(feed))

    def target(published: str):
        return lambda tag, path: json.dumps({"files": {data: published, "README.md": "0" * 64}}).encode()

    assert history_problem(tmp_path, ["2.1.0"], target("a" * 64)) is None
    why = history_problem(tmp_path, ["2.1.0"], target("b" * 64))
    assert why is not None and "the entry for 2.1.0 differs from what the target published at v2.1.0" in why, why
    assert "aaaaaaaaaaaa here, bbbbbbbbbbbb there" in why
