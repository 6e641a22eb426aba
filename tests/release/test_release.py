"""Release mechanics on small cases: version derivation, releases.yaml checks, `propose`, and
building an older release from the ledger pinned at a git ref."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import bump, full_tag, short_tag, version_key
from medcalc_maintained.project import Project
from medcalc_maintained.release import build
from medcalc_maintained.release.plan import load_releases
from medcalc_maintained.release.state import derive_bump, next_version, release_state
from medcalc_maintained.release.table_builder import build_tables
from tests.support.paths import ROOT

runner = CliRunner()


# ---------------------------------------------------------------- versions and derivation


def test_bump_and_tags():
    assert bump("2.0.0", "major") == "3.0.0"
    assert bump("2.3.4", "minor") == "2.4.0"
    assert bump("2.3.4", "patch") == "2.3.5"
    assert (full_tag("2.1.0"), short_tag("2.1.0")) == ("v2.1.0", "v2.1")
    with pytest.raises(ValueError):
        version_key("2.0")


def tables(rows: list[tuple], extra_column: bool = False) -> dict[str, dict[str, pd.DataFrame]]:
    """A tiny release: rows of (uid, calculator id, output type, label, status)."""
    full = pd.DataFrame([{
        "split": "test", "uid": uid, "Calculator ID": str(cid), "Calculator Name": f"calc {cid}",
        "Output Type": ot, "Ground Truth Answer": lab, "Lower Limit": lab, "Upper Limit": lab, "Label Status": st,
    } for uid, cid, ot, lab, st in rows])
    if extra_column:
        full["Reviewer Note"] = ""
    return {"full": {"test": full}, "default": {"test": full[full["Label Status"] != "unverified"]}}


BASE = [(1, 2, "decimal", "25.238", "unverified"), (2, 4, "integer", "3", "unverified"), (3, 13, "date", "04/12/2021", "unverified")]
CARD = "---\nlicense: cc-by-sa-4.0\n---\n# card\n"


def state(rows=BASE, card=CARD, **kw):
    return release_state(tables(rows, **kw), card)


@pytest.mark.parametrize("rows, card, extra, kind, reason", [
    (BASE, CARD, False, None, None),
    # a label correction with a value of an existing class -> minor
    ([BASE[0], (2, 4, "integer", "5", "corrected"), BASE[2]], CARD, False, "minor", "labels"),
    # confirming a label changes its status only -> minor
    ([(1, 2, "decimal", "25.238", "confirmed"), *BASE[1:]], CARD, False, "minor", "labels"),
    # the first N/A of integer outputs is a new label class -> major
    ([BASE[0], (2, 4, "integer", "N/A", "abstain"), BASE[2]], CARD, False, "major", "label space of integer"),
    # a new column is backward compatible -> minor (a removed or retyped one is major: test_release_2_1.py)
    (BASE, CARD, True, "minor", "config 'default' adds column(s)"),
    # a row removed -> major
    (BASE[:2], CARD, False, "major", "set of rows"),
    # the card template only -> patch
    (BASE, CARD + "\nMore words.\n", False, "patch", "card"),
])
def test_derive_bump(rows, card, extra, kind, reason):
    got, reasons = derive_bump(state(), state(rows, card, extra_column=extra))
    assert got == kind
    if reason:
        assert any(reason in r for r in reasons), reasons
    else:
        assert reasons == []


def test_decimal_label_that_happens_to_be_whole_is_not_a_label_space_change():
    # 25.238 -> 25 is a correction inside the numeric class of decimal outputs
    after = [(1, 2, "decimal", "25", "corrected"), *BASE[1:]]
    assert next_version("2.0.0", state(), state(after))[:2] == ("2.1.0", "minor")


def test_major_wins_over_minor_and_patch():
    after = [(1, 2, "decimal", "N/A", "abstain"), (2, 4, "integer", "5", "corrected"), BASE[2]]
    assert next_version("2.0.0", state(), state(after, CARD + "x"))[:2] == ("3.0.0", "major")


# ---------------------------------------------------------------- releases.yaml


def write_releases(path: Path, entries: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"releases": entries}, sort_keys=False))
    return path


def entry(version, kind, date="2026-01-01", **kw):
    return {"version": version, "date": date, "kind": kind, "description": "d", **kw}


def test_project_releases_file_is_valid():
    plan = load_releases(ROOT / "releases.yaml")
    assert [r.version for r in plan.releases][:2] == ["1.0.0", "2.0.0"]
    assert plan.get("1.0.0").default_rows == "all" and plan.get("v2.0.0").default_rows == "verified"


@pytest.mark.parametrize("entries, field, words", [
    ([entry("1.0.0", "major"), entry("1.2.0", "minor")], "kind", "is 1.1.0, not 1.2.0"),
    ([entry("1.0.0", "major"), entry("2.0.0", "minor")], "kind", "is 1.1.0"),
    ([entry("1.0.0", "major"), entry("1.0.0", "patch")], "version", "must increase"),
    ([entry("1.0.0", "major", date="2026-02-01"), entry("1.0.1", "patch", date="2026-01-01")], "date", "before"),
    ([entry("1.0", "major")], "version", "MAJOR.MINOR.PATCH"),
    ([entry("1.0.0", "huge")], "kind", "not one of"),
    ([entry("1.0.0", "major", default_rows="some")], "default_rows", "not one of"),
    ([entry("1.0.0", "major", colour="red")], None, "unknown field"),
    ([entry("1.0.0", "minor")], "kind", "first release"),
])
def test_bad_releases_file_names_release_and_field(tmp_path, entries, field, words):
    with pytest.raises(DataError) as exc:
        load_releases(write_releases(tmp_path / "releases.yaml", entries))
    assert words in str(exc.value)
    if field:
        assert exc.value.field == field


# ---------------------------------------------------------------- a small project on disk


@pytest.fixture(scope="module")
def instances(real_instances) -> pd.DataFrame:
    return real_instances


def rec(**kw) -> dict:
    base = {"id": "T-0001", "uid": 1, "split": "test", "release": "2.0.0", "old_value": "25.238", "new_value": "30",
            "decision": "accepted", "label_status": "corrected", "error_type": "extraction",
            "rationale": "Weight from an earlier admission.", "evidence": ["note"], "source": "physician",
            "reviewer": {"id": "md-1", "role": "physician", "specialty": "nephrology"}, "blinded": True,
            "decided_at": "2026-01-15"}
    base.update(kw)
    if base["release"] is None:  # unreleased: no release field
        del base["release"]
    return base


def make_project(root: Path, instances: pd.DataFrame, records: list[dict]) -> Path:
    (root / "data" / "interim").mkdir(parents=True)
    instances.to_parquet(root / "data" / "interim" / "instances.parquet", index=False)
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "data" / "corrections" / "batch.yaml").write_text(ledger.dump(records, root), encoding="utf-8")
    (root / "params.yaml").write_text(yaml.safe_dump({"apply": {"ledger": ["data/corrections"], "out": "data/maintained"}}))
    shutil.copy(ROOT / "dataset_card.md", root / "dataset_card.md")
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major")])
    return root


def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def test_propose_writes_a_deferred_record_against_the_current_label(tmp_path, instances):
    root = make_project(tmp_path / "p", instances, [rec(), rec(id="C-0007", uid=2, release=None, old_value="38",
                                                                new_value="38", label_status="confirmed", error_type=None,
                                                                decision="rejected")])
    r = invoke(root, "propose", "--uid", "1", "--new-value", "N/A", "--error-type", "unanswerable",
               "--rationale", "No weight in the note.", "--evidence", "note, paragraph 1", "--reviewer-id", "md-9",
               "--date", "2026-03-02")
    assert r.exit_code == 0, r.output
    target = root / "data" / "corrections" / "2026-03-proposals.yaml"
    doc = yaml.safe_load(target.read_text())
    (new,) = doc["corrections"]
    # old_value is the maintained label after T-0001 (30), not the upstream 25.238
    assert new["old_value"] == "30" and new["new_value"] == "N/A"
    assert new["label_status"] == "abstain" and new["decision"] == "deferred"
    assert new["id"] == "C-0008"  # after C-0007, which is in the ledger
    assert new["reviewer"] == {"id": "md-9", "role": "contributor", "specialty": None}
    assert new["decided_at"] == "2026-03-02" and "release" not in new
    ledger.load([root / "data" / "corrections"])  # the ledger still loads
    # a second proposal appends to the same file with the next id; agreeing values are a confirmation
    r = invoke(root, "propose", "--uid", "2", "--new-value", "38.0", "--error-type", "none",
               "--rationale", "Recomputed by hand.", "--date", "2026-03-05")
    assert r.exit_code == 0, r.output
    recs = yaml.safe_load(target.read_text())["corrections"]
    assert [x["id"] for x in recs] == ["C-0008", "C-0009"]
    assert recs[1]["label_status"] == "confirmed" and recs[1]["error_type"] is None


@pytest.mark.parametrize("args, words", [
    (["--uid", "99999", "--new-value", "3", "--error-type", "other"], "uid 99999 does not exist"),
    (["--uid", "1", "--new-value", "three", "--error-type", "other"], "not a valid decimal answer"),
    (["--uid", "1", "--new-value", "26", "--error-type", "typo"], "not one of"),
    (["--uid", "1", "--new-value", "25.3", "--error-type", "extraction"], "is a confirmation"),
    (["--uid", "1", "--new-value", "40", "--error-type", "none"], "needs an error type"),
])
def test_bad_proposal_is_rejected_and_nothing_written(tmp_path, instances, args, words):
    root = make_project(tmp_path / "p", instances, [])
    before = sorted(p.name for p in (root / "data" / "corrections").iterdir())
    r = invoke(root, "propose", *args, "--rationale", "because", "--date", "2026-03-02")
    assert r.exit_code != 0
    assert words in " ".join(r.output.split()), r.output
    assert sorted(p.name for p in (root / "data" / "corrections").iterdir()) == before


def git(root: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "PATH": "/usr/bin:/bin", "HOME": str(root)}
    return subprocess.run(["git", *args], cwd=root, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_ids_are_never_reused_even_after_deletion(tmp_path, instances):
    root = make_project(tmp_path / "p", instances, [rec(id="C-0003", release=None, decision="deferred")])
    git(root, "init", "-q")
    git(root, "add", "data/corrections")
    git(root, "commit", "-qm", "proposal")
    (root / "data" / "corrections" / "batch.yaml").write_text(ledger.dump([], root))  # withdrawn
    r = invoke(root, "propose", "--uid", "1", "--new-value", "40", "--error-type", "other", "--rationale", "x",
               "--date", "2026-03-02")
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((root / "data/corrections/2026-03-proposals.yaml").read_text())["corrections"][0]["id"] == "C-0004"


def test_older_release_uses_the_ledger_at_its_git_ref(tmp_path, instances):
    """2.0.0 pins the commit where uid 1 was corrected to 30; the working tree has since moved the
    record to 31. Building 2.0.0 reads the pinned ledger, building 2.1.0 (unpinned) the working tree."""
    root = make_project(tmp_path / "p", instances, [rec()])
    git(root, "init", "-q")
    git(root, "add", "data/corrections")
    git(root, "commit", "-qm", "ledger of 2.0.0")
    ref = git(root, "rev-parse", "HEAD")
    (root / "data" / "corrections" / "batch.yaml").write_text(ledger.dump([rec(new_value="31")], root))
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"),
                                            entry("2.0.0", "major", ledger_ref=ref), entry("2.1.0", "minor")])
    project = Project.load(root)
    plan = load_releases(project.releases_file)
    label = {}
    for v in ("1.0.0", "2.0.0", "2.1.0"):
        t = build_tables(project, plan.get(v))
        full = t.tables["full"]["test"].set_index("uid")
        label[v] = full.at[1, "Ground Truth Answer"]
        assert len(t.tables["default"]["test"]) == (1047 if v == "1.0.0" else 1)
    assert label == {"1.0.0": "25.238", "2.0.0": "30", "2.1.0": "31"}
    # the working tree was only read
    assert "31" in (root / "data" / "corrections" / "batch.yaml").read_text()
    bad = [entry("1.0.0", "major"), entry("2.0.0", "major", ledger_ref="no-such-ref")]
    write_releases(root / "releases.yaml", bad)
    with pytest.raises(DataError, match="does not exist"):
        build_tables(project, load_releases(project.releases_file).get("2.0.0"))


def test_build_refuses_to_replace_a_directory_that_is_not_a_release(tmp_path, instances):
    root = make_project(tmp_path / "p", instances, [rec()])
    out = tmp_path / "somewhere"
    out.mkdir()
    (out / "precious.txt").write_text("keep me")
    r = invoke(root, "release", "build", "--out", str(out))
    assert r.exit_code != 0 and "not a release build" in r.output
    assert (out / "precious.txt").read_text() == "keep me"
    # a ledger problem: nothing is written
    (root / "data" / "corrections" / "batch.yaml").write_text(ledger.dump([rec(old_value="99")], root))
    r = invoke(root, "release", "build", "--out", str(tmp_path / "new"))
    assert r.exit_code != 0 and "old_value" in r.output
    assert not (tmp_path / "new").exists()


def test_next_version_of_the_working_tree(tmp_path, instances):
    root = make_project(tmp_path / "p", instances, [rec()])
    # after 2.0.0 the next release ships derivations (core/versions.DERIVATIONS_FROM): new columns, minor
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.1.0 (minor)" in r.output and "adds column(s)" in r.output, r.output
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major"),
                                            entry("2.1.0", "minor")])
    # after 2.1.0 the next release states each verified row's evidence (core/versions.EVIDENCE_ROWS_FROM)
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.2.0 (minor)" in r.output and "Evidence Status" in r.output, r.output
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major"),
                                            entry("2.1.0", "minor"), entry("2.2.0", "minor"), entry("2.3.0", "minor")])
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 1 and "nothing changed since 2.3.0" in r.output, r.output
    assert build.next_release(Project.load(root)) == build.NextVersion("2.3.0", None, None, [])  # the library call
    # an unreleased accepted correction of another row -> minor
    (root / "data" / "corrections" / "more.yaml").write_text(ledger.dump(
        [rec(id="T-0002", uid=2, release=None, old_value="38", new_value="40")], root))
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.4.0 (minor)" in r.output, r.output


def test_draft_build_previews_the_next_release_and_cannot_be_published(tmp_path, instances):
    root = make_project(tmp_path / "p", instances, [rec()])
    (root / "data" / "corrections" / "more.yaml").write_text(ledger.dump(
        [rec(id="T-0002", uid=2, release=None, old_value="38", new_value="40", rationale="Two points missed.")], root))
    out = tmp_path / "preview"
    r = invoke(root, "release", "build", "--draft", "--out", str(out))
    assert r.exit_code == 0, r.output
    man = yaml.safe_load((out / "manifest.json").read_text())
    assert man["draft"] is True and man["version"] == "2.1.0" and man["kind"] == "minor"
    assert man["rows"]["default"] == {"test": 2}  # uid 1 (released in 2.0.0) and uid 2 (unreleased)
    log = (out / "CHANGELOG.md").read_text()
    assert log.index("## 2.1.0") < log.index("## 2.0.0") < log.index("## 1.0.0")
    assert ("| T-0002 | 2 | " in log and "38 → 40 | L1 | unverified → corrected | extraction | md-1 (physician, nephrology) "
            "| 2026-01-15 | Two points missed. |" in log)
    assert "### Proposed (deferred, not in this release) (0)" in log[:log.index("## 2.1.0")]
    # the 2.0.0 section still lists only its own record
    section = log[log.index("## 2.0.0"):log.index("## 1.0.0")]
    assert "25.238 → 30" in section and "38 → 40" not in section
    r = invoke(root, "release", "publish", "--release-dir", str(out), "--target", f"file://{tmp_path / 'r.git'}")
    assert r.exit_code == 1 and "draft" in r.output
    assert not (tmp_path / "r.git").exists()


def test_draft_build_lists_a_deferred_proposal_and_leaves_its_label(tmp_path, instances):
    """A contributor's `propose` writes a deferred record; the CI preview (`release build --draft`)
    lists it under its own section of the changelog and of the output, applies no label of it, and
    is a draft publish refuses (here the version moves on: the derivation columns of 2.1.0 are new;
    ``test_release_e2e.py`` previews the real project, where nothing else changed)."""
    root = make_project(tmp_path / "p", instances, [rec()])
    why = ("The note gives no weight at admission; the weight of an earlier admission was used, so the "
           "clearance cannot be computed from this note.")
    r = invoke(root, "propose", "--uid", "1", "--new-value", "N/A", "--error-type", "unanswerable",
               "--rationale", why, "--evidence", "note, paragraph 1", "--reviewer-id", "md-9", "--date", "2026-03-02")
    assert r.exit_code == 0, r.output
    (proposal,) = yaml.safe_load((root / "data" / "corrections" / "2026-03-proposals.yaml").read_text())["corrections"]
    assert proposal["decision"] == "deferred"
    calculator = instances.set_index("uid").loc[1, "Calculator Name"]
    out = tmp_path / "preview"
    r = invoke(root, "release", "build", "--draft", "--out", str(out))
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "Proposed (deferred, not in this release): 1 record(s)" in text
    assert f"{proposal['id']} uid 1 ({calculator}): 30 → N/A" in text and "md-9, 2026-03-02" in text
    man = yaml.safe_load((out / "manifest.json").read_text())
    assert man["draft"] is True and man["version"] == "2.1.0"
    log = (out / "CHANGELOG.md").read_text()
    section = log[log.index("## Draft preview"):log.index("## 2.1.0")]
    assert "### Proposed (deferred, not in this release) (1)" in section
    (row,) = [x for x in section.splitlines() if x.startswith(f"| {proposal['id']} |")]
    cells = [c.strip() for c in row.strip("|").split(" | ")]
    assert cells[:4] == [proposal["id"], "1", calculator, "30 → N/A"]
    assert cells[4].endswith("…") and why.startswith(cells[4][:-1]) and len(cells[4]) < len(why)
    assert cells[5:] == ["md-9", "2026-03-02"]
    assert proposal["id"] not in log[log.index("## 2.1.0"):]  # in no release, the draft's included
    # the label stays the accepted one: 30, corrected, record T-0001 only
    full = pd.read_parquet(out / "data" / "full" / "test-00000-of-00001.parquet").set_index("uid")
    assert full.loc[1, ["Ground Truth Answer", "Label Status", "Correction IDs"]].tolist() == ["30", "corrected", "T-0001"]
    r = invoke(root, "release", "publish", "--release-dir", str(out), "--target", f"file://{tmp_path / 'r.git'}")
    assert r.exit_code == 1 and "draft" in r.output
    assert not (tmp_path / "r.git").exists()
