"""Release mechanics on small cases: version derivation, releases.yaml checks, `propose`, and
building an older release from the ledger pinned at a git ref."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained import ledger
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import bump, full_tag, short_tag, version_key
from medcalc_maintained.project import Project
from medcalc_maintained.release.plan import load_releases
from medcalc_maintained.release.state import derive_bump, next_version, release_state
from medcalc_maintained.release.table_builder import build_tables
from tests.support.paths import ROOT
from tests.support.release_support import entry, invoke, make_project, rec, write_releases

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


def state(rows=BASE, card=CARD, version="2.2.0", **kw):
    return release_state(tables(rows, **kw), card, version)


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
    # a block only a leading card (2.3.0 on) shows is no change of a 2.2.0 card
    (BASE, CARD + "<!-- if lead -->\nMore words.\n<!-- end -->\n", False, None, None),
    # a block only the earlier layout shows is
    (BASE, CARD + "<!-- if not lead -->\nMore words.\n<!-- end -->\n", False, "patch", "card"),
])
def test_derive_bump(rows, card, extra, kind, reason):
    got, reasons = derive_bump(state(), state(rows, card, extra_column=extra))
    assert got == kind
    if reason:
        assert any(reason in r for r in reasons), reasons
    else:
        assert reasons == []


def test_a_leading_cards_block_changes_the_state_of_the_releases_that_lead():
    lead_only = CARD + "<!-- if lead -->\nMore words.\n<!-- end -->\n"
    assert derive_bump(state(version="2.3.0"), state(card=lead_only, version="2.3.0")) == ("patch", ["the dataset card changed"])


def test_decimal_label_that_happens_to_be_whole_is_not_a_label_space_change():
    # 25.238 -> 25 is a correction inside the numeric class of decimal outputs
    after = [(1, 2, "decimal", "25", "corrected"), *BASE[1:]]
    assert next_version("2.0.0", state(), state(after))[:2] == ("2.1.0", "minor")


def test_major_wins_over_minor_and_patch():
    after = [(1, 2, "decimal", "N/A", "abstain"), (2, 4, "integer", "5", "corrected"), BASE[2]]
    assert next_version("2.0.0", state(), state(after, CARD + "x"))[:2] == ("3.0.0", "major")


# ---------------------------------------------------------------- releases.yaml


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
