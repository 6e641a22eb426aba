"""Release rules: the declared kind is the derived bump (build and publish), releases are
published in order, publishing writes branch `main` whatever the target's HEAD says.

The end-to-end tests of this subject; the fast ones are in tests/release/test_release_rules.py."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.release import test_release_rules as fast_tests
from tests.release.test_release_rules import add_next, invoke
from tests.support import hub_mirror
from tests.support.hub_mirror import load_through_hub

# shared with the fast tests
project = fast_tests.project


def tree(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()} if path.exists() else {}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True).stdout.strip()


def test_major_declared_for_a_label_change_is_refused_and_minor_builds(project, tmp_path):
    add_next(project, "3.0.0", "major")
    r = invoke(project, "release", "build", "--out", str(tmp_path / "a"))
    assert r.exit_code == 2 and "declared major but changes the label of test uid 2" in " ".join(r.output.split())
    # the same change declared minor builds
    add_next(project, "2.1.0", "minor")
    r = invoke(project, "release", "build", "--out", str(tmp_path / "b"))
    assert r.exit_code == 0, r.output
    log = (tmp_path / "b" / "CHANGELOG.md").read_text()
    section = log[log.index("## 2.1.0"):log.index("## 2.0.0")]
    assert "Rows per config since 2.0.0:" in section and "| default | 1 | 2 | +1; changed: 1 row in |" in section
    assert "| T-0002 | 2 | " in section and "38 → 40 | L1 | unverified → corrected |" in section


def build(root: Path, version: str, out: Path) -> Path:
    r = invoke(root, "release", "build", "--out", str(out), "--version", version)
    assert r.exit_code == 0, r.output
    return out


# GX validates each release before publishing
def test_publish_in_order_and_declared_kind(project, tmp_path):
    add_next(project, "2.1.0", "minor")
    b = {v: build(project, v, tmp_path / v) for v in ("1.0.0", "2.0.0", "2.1.0")}
    repo = tmp_path / "t.git"
    # 2.0.0 before 1.0.0: refused, nothing created
    r = invoke(project, "release", "publish", "--release-dir", str(b["2.0.0"]), "--target", f"file://{repo}")
    assert r.exit_code == 1 and "release 1.0.0 of releases.yaml is not published" in " ".join(r.output.split())
    assert not repo.exists()
    assert invoke(project, "release", "publish", "--release-dir", str(b["1.0.0"]), "--target", f"file://{repo}").exit_code == 0
    # 2.1.0 while 2.0.0 is not on the target: refused, target unchanged
    before = tree(repo)
    r = invoke(project, "release", "publish", "--release-dir", str(b["2.1.0"]), "--target", f"file://{repo}")
    assert r.exit_code == 1 and "release 2.0.0 of releases.yaml is not published" in " ".join(r.output.split())
    assert tree(repo) == before
    assert invoke(project, "release", "publish", "--release-dir", str(b["2.0.0"]), "--target", f"file://{repo}").exit_code == 0
    # a manifest edited to declare 2.1.0 a patch: refused, its kind is not the one of releases.yaml (a
    # patch that changes a label cannot be declared there or built: test_patch_that_changes_a_label_is_refused_by_build)
    bad = tmp_path / "bad"
    shutil.copytree(b["2.1.0"], bad)
    man = json.loads((bad / "manifest.json").read_text())
    man["kind"] = "patch"
    (bad / "manifest.json").write_text(json.dumps(man))
    before = tree(repo)
    r = invoke(project, "release", "publish", "--release-dir", str(bad), "--target", f"file://{repo}", "--dry-run")
    assert r.exit_code == 1
    assert "field(s) kind differ from" in " ".join(r.output.split()) and "releases.yaml" in r.output
    assert tree(repo) == before
    r = invoke(project, "release", "publish", "--release-dir", str(b["2.1.0"]), "--target", f"file://{repo}")
    assert r.exit_code == 0, r.output
    assert set(git(repo, "tag", "-l").split()) == {"v1.0.0", "v1.0", "v2.0.0", "v2.0", "v2.1.0", "v2.1"}


def test_publish_to_a_bare_repo_with_head_master_writes_main(project, tmp_path):
    b = build(project, "1.0.0", tmp_path / "v1")
    repo = tmp_path / "bare.git"
    subprocess.run(["git", "-c", "init.defaultBranch=master", "init", "--bare", "-q", str(repo)], check=True)
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/master"
    r = invoke(project, "release", "publish", "--release-dir", str(b), "--target", f"file://{repo}")
    assert r.exit_code == 0, r.output
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(repo, "rev-parse", "main") == git(repo, "rev-parse", "v1.0.0^{commit}")
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/heads") == "refs/heads/main"


@pytest.fixture
def olah(tmp_path):
    """Start olah on 127.0.0.1 (offline, serving tmp_path/mirrors) once the test has published."""
    with contextlib.ExitStack() as stack:
        yield lambda repo_id: stack.enter_context(hub_mirror.olah(tmp_path, repo_id, "main"))


def test_bare_repo_with_head_master_loads_without_revision_and_at_main(pipeline_project, tmp_path, olah):
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import release as release_stage

    repo = tmp_path / "mirrors" / "datasets" / "org" / "medcalc-maintained"
    repo.parent.mkdir(parents=True)
    subprocess.run(["git", "-c", "init.defaultBranch=master", "init", "--bare", "-q", str(repo)], check=True)
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/master"
    for v in ("1.0.0", "2.0.0"):
        out = tmp_path / f"v{v}"
        release_stage.run(Project.load(pipeline_project), out=out, version=v)
        r = invoke(pipeline_project, "release", "publish", "--release-dir", str(out), "--target", f"file://{repo}")
        assert r.exit_code == 0, r.output
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    url = olah("org/medcalc-maintained")
    got = load_through_hub(url, tmp_path / "hf-home", [("default", None), ("default", "main"), ("full", "main")])
    for key in ("default@None", "default@main"):
        assert len(got[key]) == 887 and set(got[key]["Label Status"]) == {"confirmed", "corrected", "abstain"}
    assert len(got["full@main"]) == 1047
