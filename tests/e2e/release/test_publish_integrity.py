"""`release publish` refuses a release whose manifest was edited after the build (its version is not
what releases.yaml declares) and a file:// target that is not a bare repository (a working copy's
.git); the target is left unchanged."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.release_support import built_copy, cli


def snapshot(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.rglob("*")) if p.is_file()} if path.exists() else {}


@pytest.fixture(scope="module")
def built(tmp_path_factory, pipeline_project) -> tuple[Path, Path]:
    return built_copy(tmp_path_factory, pipeline_project, "2.0.0", "publish-integrity")


@pytest.mark.parametrize("edit, words", [
    ({"version": "9.9.9"}, "version '9.9.9' is not a release of"),
    ({"kind": "patch"}, "field(s) kind differ from release 2.0.0"),
    ({"releases": ["2.0.0"]}, "field(s) releases differ from release 2.0.0"),
])
def test_an_edited_manifest_is_not_published(built, tmp_path, edit, words):
    root, out = built
    edited = tmp_path / "release"
    shutil.copytree(out, edited)
    man = json.loads((edited / "manifest.json").read_text())
    man.update(edit)
    (edited / "manifest.json").write_text(json.dumps(man, indent=2))
    repo = tmp_path / "repo.git"
    r = cli(root, "release", "publish", "--release-dir", str(edited), "--target", f"file://{repo}")
    assert r.exit_code == 1, r.output
    assert words in " ".join(r.output.split()) and "manifest.json" in r.output, r.output
    assert not repo.exists()


def test_a_non_bare_repository_is_not_a_target(built, tmp_path):
    root, out = built
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "keep.txt").write_text("mine\n")
    before = snapshot(work)
    for target in (work / ".git", work):
        r = cli(root, "release", "publish", "--release-dir", str(out), "--target", f"file://{target}")
        assert r.exit_code == 1, r.output
        assert "is not a bare git repository" in " ".join(r.output.split()), r.output
    assert snapshot(work) == before
    bare = tmp_path / "ok.git"  # a bare repository passes this check (2.0.0 then waits for 1.0.0 to be published)
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    r = cli(root, "release", "publish", "--release-dir", str(out), "--target", f"file://{bare}")
    assert "is not a bare git repository" not in r.output and "1.0.0" in r.output, r.output


def test_the_target_is_checked_before_the_data_contracts(built, tmp_path):
    """The data contracts, the slowest check (seconds), run only once the manifest and the target pass:
    2.0.0 on an empty target is refused for the missing 1.0.0 without validating anything."""
    from medcalc_maintained.release import publish

    root, out = built

    def contracts():
        raise AssertionError("the data contracts ran before the target was checked")

    with pytest.raises(publish.PublishRefused, match="release 1.0.0 of releases.yaml is not published"):
        publish.publish(out, f"file://{tmp_path / 'empty.git'}", contracts, releases=root / "releases.yaml")
    assert not (tmp_path / "empty.git").exists()
