"""Release rules: the declared kind is the derived bump (build and publish), releases are
published in order, publishing writes branch `main` whatever the target's HEAD says."""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

import hub_mirror
from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from paths import ROOT
from test_release import entry, make_project, rec, write_releases
from test_release_e2e import load_through_hub

runner = CliRunner()


def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def tree(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()} if path.exists() else {}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", f"--git-dir={repo}", *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def project(tmp_path, real_instances) -> Path:
    """1.0.0 (all rows, no record) and 2.0.0 (uid 1 corrected 25.238 -> 30)."""
    root = make_project(tmp_path / "p", real_instances, [rec()])
    shutil.copytree(ROOT / "expectations", root / "expectations")  # publishing validates the release
    plan(root)
    return root


OPEN = {"max_unverified_rate": {"max": 1.0}}  # a synthetic ledger verifies one or two rows only


def plan(root: Path, *extra: dict) -> None:
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all", gates=OPEN),
                                            entry("2.0.0", "major", gates=OPEN), *extra])


def add_next(root: Path, version: str, kind: str) -> None:
    """A release ``version`` declared ``kind`` with one accepted record: uid 2, 38 -> 40."""
    (root / "data" / "corrections" / "next.yaml").write_text(ledger.dump(
        [rec(id="T-0002", uid=2, release=version, old_value="38", new_value="40", rationale="Two points missed.")],
        root), encoding="utf-8")
    plan(root, entry(version, kind, default_rows="verified", gates=OPEN))


def test_patch_that_changes_a_label_is_refused_by_build(project, tmp_path):
    add_next(project, "2.0.1", "patch")
    out = tmp_path / "out"
    r = invoke(project, "release", "build", "--out", str(out))
    text = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "release 2.0.1 is declared patch but changes the label of test uid 2 (38 -> 40)" in text
    assert "a minor change since 2.0.0" in text and "releases.yaml" in text and "'kind'" in text
    assert not out.exists()


@pytest.mark.slow
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


@pytest.mark.slow  # GX validates each release before publishing
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


@pytest.mark.slow
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


# --- through the local Hub mirror (olah) ------------------------------------------------------

@pytest.fixture
def olah(tmp_path):
    """Start olah on 127.0.0.1 (offline, serving tmp_path/mirrors) once the test has published."""
    with contextlib.ExitStack() as stack:
        yield lambda repo_id: stack.enter_context(hub_mirror.olah(tmp_path, repo_id, "main"))


@pytest.mark.slow
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
