"""The release commands on a small project, end to end through the CLI: `release next-version` across the
releases that changed behaviour, and `release build --draft` (a preview publish refuses), each building the
release tables from the ledger (moved from tests/release/test_release.py: the slow tier)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from medcalc_maintained import ledger
from medcalc_maintained.project import Project
from medcalc_maintained.release import build
from tests.support.release_support import entry, invoke, make_project, rec, write_releases


@pytest.fixture(scope="module")
def instances(real_instances) -> pd.DataFrame:
    return real_instances


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
    # after 2.3.0, 2.3.1 and 2.3.2 (card-only patches) the next release ships config inputs
    # (core/versions.INPUTS_CONFIG_FROM): a new config, a minor release whatever the card does
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.4.0 (minor)" in r.output and "config 'inputs' added" in r.output, \
        r.output
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major"),
                                            entry("2.1.0", "minor"), entry("2.2.0", "minor"), entry("2.3.0", "minor"),
                                            entry("2.3.1", "patch"), entry("2.3.2", "patch")])
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.4.0 (minor) after 2.3.2" in r.output, r.output
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major"),
                                            entry("2.1.0", "minor"), entry("2.2.0", "minor"), entry("2.3.0", "minor"),
                                            entry("2.3.1", "patch"), entry("2.3.2", "patch"), entry("2.4.0", "minor")])
    # after 2.4.0 the card shows a real model's step-wise breakdown (core/versions.CARD_STEPS_FROM): a patch
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.4.1 (patch) after 2.4.0" in r.output, r.output
    assert "the dataset card changed" in r.output, r.output
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all"), entry("2.0.0", "major"),
                                            entry("2.1.0", "minor"), entry("2.2.0", "minor"), entry("2.3.0", "minor"),
                                            entry("2.3.1", "patch"), entry("2.3.2", "patch"), entry("2.4.0", "minor"),
                                            entry("2.4.1", "patch"), entry("2.4.2", "patch")])
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 1 and "nothing changed since 2.4.2" in r.output, r.output
    assert build.next_release(Project.load(root)) == build.NextVersion("2.4.2", None, None, [])  # the library call
    # an unreleased accepted correction of another row -> minor
    (root / "data" / "corrections" / "more.yaml").write_text(ledger.dump(
        [rec(id="T-0002", uid=2, release=None, old_value="38", new_value="40")], root))
    r = invoke(root, "release", "next-version")
    assert r.exit_code == 0 and "next version: 2.5.0 (minor)" in r.output, r.output


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
