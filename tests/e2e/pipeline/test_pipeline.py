"""End to end: the DVC pipeline in a fresh copy of the project, reproduced twice.

The copy holds the files git tracks plus untracked, non-ignored ones (so it also runs before a
commit), with the DVC remote pointed at ../shared/dvc-store by absolute path.

The copy is built once for the module with two outputs moved by params (``ingest.out`` and ``apply.out``,
:data:`MOVED`), so that its one full `dvc repro` also shows every stage reading them where params put them
(the checkout's own layout is what `make run` reproduces, and CI checks that byte for byte). It is then
committed to its own git repository; a test that changes it puts it back with `_restore` (git for the
tracked files and the uncached outputs, `dvc checkout` for the cached ones) instead of another
`dvc repro`, and checks it is up to date.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.support.paths import ROOT, SHARED


def _project_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.org"]


def dvc(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               DVC_NO_ANALYTICS="1", MEDCALC_ROOT=str(cwd))
    return subprocess.run([str(Path(sys.executable).parent / "dvc"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=3000)


# ingest.out and apply.out in the module's copy: where every stage must then read them
MOVED = {"data/interim": "data/interim-moved", "data/maintained": "data/maintained-moved"}


@pytest.fixture(scope="module")
def fresh_project(tmp_path_factory) -> Path:
    store = SHARED / "dvc-store"
    if not store.is_dir():
        pytest.skip("../shared/dvc-store is not available")
    dst = tmp_path_factory.mktemp("clone") / "main"
    for rel in _project_files():
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    subprocess.run(["git", "init", "-q"], cwd=dst, check=True)
    git = [*GIT, "-C", str(dst)]
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "the checkout"], check=True, capture_output=True)
    r = dvc(dst, "remote", "modify", "--local", "shared", "url", str(store))
    assert r.returncode == 0, r.stderr
    r = dvc(dst, "pull", "-q", "data/upstream.dvc")
    assert r.returncode == 0, r.stdout + r.stderr
    params = (dst / "params.yaml").read_text(encoding="utf-8")
    for default, moved in MOVED.items():
        assert params.count(f"  out: {default}\n") == 1, default
        params = params.replace(f"  out: {default}\n", f"  out: {moved}\n")
    (dst / "params.yaml").write_text(params, encoding="utf-8")
    # `make repro`'s command: dvc repro, its stages timed for the summary
    r = subprocess.run([str(Path(sys.executable).parent / "medcalc-maintained"), "repro"], cwd=dst,
                       env=dict(os.environ, MEDCALC_ROOT=str(dst), DVC_NO_ANALYTICS="1",
                                PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"),
                       capture_output=True, text=True, timeout=3000)
    assert r.returncode == 0, r.stdout + r.stderr
    times = json.loads((dst / "build" / "repro" / "stage-times.json").read_text(encoding="utf-8"))
    assert [t["stage"] for t in times["stages"] if t["ran"]] == _running(r.stdout, ordered=True)
    # every stage is timed: those that ran, and those DVC skipped (outputs committed to git that the run
    # reproduced unchanged upstream of them, e.g. compare-report)
    assert {t["stage"] for t in times["stages"]} == ALL_STAGES and times["exit_code"] == 0
    assert 0 < sum(t["seconds"] for t in times["stages"]) <= times["total_seconds"]
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "pipeline outputs"], check=True, capture_output=True)
    return dst


def _restore(project: Path, *extra_dirs: str) -> None:
    """Put the copy back to the committed, reproduced state: tracked files (params, dvc.lock, the
    uncached outputs) from git's HEAD (DVC's autostage has put its changes in the index), new
    untracked files removed, ``extra_dirs`` deleted, the cached outputs from DVC's cache; then
    `dvc status` must say it is up to date."""
    subprocess.run([*GIT, "reset", "-q", "--hard", "HEAD"], cwd=project, check=True, capture_output=True)
    subprocess.run([*GIT, "clean", "-qfd"], cwd=project, check=True, capture_output=True)
    for rel in extra_dirs:
        shutil.rmtree(project / rel, ignore_errors=True)
    r = dvc(project, "checkout", "-q")
    assert r.returncode == 0, r.stdout + r.stderr
    status = dvc(project, "status")
    assert "up to date" in status.stdout, status.stdout


def _running(stdout: str, ordered: bool = False):
    """The stages a `dvc repro` output says it ran ("Running stage 'name':"), as a set (or a list in order)."""
    names = [line.split("'")[1] for line in stdout.splitlines() if line.startswith("Running stage")]
    return names if ordered else set(names)


def test_repro_builds_outputs_and_is_then_up_to_date(fresh_project):
    assert (fresh_project / MOVED["data/interim"] / "instances.parquet").is_file()
    status = dvc(fresh_project, "status")
    assert status.returncode == 0
    assert "up to date" in status.stdout, status.stdout
    again = dvc(fresh_project, "repro")
    assert again.returncode == 0
    assert "Running stage" not in again.stdout, again.stdout


def test_changed_param_reruns_its_stage(fresh_project):
    params = fresh_project / "params.yaml"
    original = params.read_text()
    try:
        params.write_text(original.replace("max_quarantine: 0", "max_quarantine: 1"))
        status = dvc(fresh_project, "status")
        assert "ingest" in status.stdout
        r = dvc(fresh_project, "repro")
        assert r.returncode == 0, r.stderr
        assert "Running stage 'ingest'" in r.stdout
    finally:
        params.write_text(original)
        _restore(fresh_project)


def test_changed_ledger_reruns_only_what_depends_on_it(fresh_project):
    import yaml

    maintained = pd.read_parquet(fresh_project / MOVED["data/maintained"] / "instances.parquet")
    target = maintained[(maintained["Label Status"] == "unverified") & (maintained["Output Type"] == "integer")].iloc[0]
    new_value = str(int(float(target["Ground Truth Answer"])) + 1)
    batch = fresh_project / "data" / "corrections" / "2026-01-test.yaml"
    batch.write_text(yaml.safe_dump({"corrections": [{
        "id": "TEST-0001", "uid": int(target["uid"]), "split": "test",
        "old_value": str(target["Ground Truth Answer"]), "new_value": new_value,
        "decision": "accepted", "label_status": "corrected", "error_type": "extraction",
        "rationale": "test", "evidence": "test", "source": "contributor",
        "reviewer": {"id": "t", "role": "physician", "specialty": None}, "blinded": True,
        "decided_at": "2026-01-01"}]}))
    try:
        # which stages the new batch makes stale (`--dry` runs nothing): those that read the ledger,
        # never the stages before it
        dry = dvc(fresh_project, "repro", "--dry")
        assert dry.returncode == 0, dry.stdout + dry.stderr
        stale = _running(dry.stdout)
        assert {"apply", "release-tables", "release"} <= stale, stale
        assert not stale & {"ingest", "recompute", "import-campaign", "audit", "relabel"}, stale
        # then the pipeline up to `apply` (the stages after it rerun on its new output: the moved-outputs
        # test below runs the whole pipeline)
        r = dvc(fresh_project, "repro", "apply")
        assert r.returncode == 0, r.stdout + r.stderr
        ran = _running(r.stdout)
        assert ran == {"apply"}, ran
        after = pd.read_parquet(fresh_project / MOVED["data/maintained"] / "instances.parquet").set_index("uid")
        assert after.at[int(target["uid"]), "Ground Truth Answer"] == new_value
        assert after.at[int(target["uid"]), "Correction IDs"] == "TEST-0001"
    finally:
        batch.unlink()
        _restore(fresh_project)


def _outputs(lock: str) -> dict[str, tuple[str, str, int]]:
    """{output path, moved ones named by their default path: (stage, md5, size)} of a dvc.lock's text."""
    import yaml

    out = {}
    for name, stage in yaml.safe_load(lock)["stages"].items():
        for o in stage.get("outs", []):
            path = o["path"]
            for default, moved in MOVED.items():
                path = path.replace(f"{moved}/", f"{default}/")
            out[path] = (name, o["md5"], o["size"])
    return out


def test_moved_outputs_follow_params_through_the_whole_pipeline(fresh_project):
    """With ingest.out and apply.out moved, the whole pipeline ran from the moved files (nothing was
    ever written to the default paths in the copy) and every stage's outputs are the committed ones, byte for
    byte, but for the moved paths a report names (compare-report's note names the instances file it read)."""
    for default, moved in MOVED.items():
        # (each default folder holds only the .gitignore git tracks there)
        assert [p.name for p in (fresh_project / default).iterdir()] == [".gitignore"], default
        assert (fresh_project / moved / "instances.parquet").is_file(), moved
    lock = (fresh_project / "dvc.lock").read_text(encoding="utf-8")
    assert "path: data/interim-moved/instances.parquet" in lock and "path: data/interim/" not in lock
    committed = subprocess.run([*GIT, "show", "HEAD~1:dvc.lock"], cwd=fresh_project, check=True,
                               capture_output=True, text=True).stdout
    ours, theirs = _outputs(lock), _outputs(committed)
    assert ours.keys() == theirs.keys()
    # every output is the committed one byte for byte, but for one that names where it read an input: that file is
    # tracked by git (so its committed bytes are at hand) and differs only in the moved paths it names
    changed = subprocess.run([*GIT, "diff", "--name-only", "HEAD~1", "HEAD"], cwd=fresh_project, check=True,
                             capture_output=True, text=True).stdout.split()
    differ = {path for path in ours if ours[path] != theirs[path]}
    assert differ <= set(changed), (differ, changed)
    for path in differ:
        text = (fresh_project / path).read_text(encoding="utf-8")
        assert any(moved in text for moved in MOVED.values()), path
        for default, moved in MOVED.items():
            text = text.replace(moved, default)
        was = subprocess.run([*GIT, "show", f"HEAD~1:{path}"], cwd=fresh_project, check=True, capture_output=True,
                             text=True).stdout
        assert text == was, path
    assert set(changed) == {"params.yaml", "dvc.lock", *differ, *(f"{m}/.gitignore" for m in MOVED.values())}, changed
    v = subprocess.run([str(Path(sys.executable).parent / "medcalc-maintained"), "validate", "--no-docs"],
                       cwd=fresh_project, env=dict(os.environ, MEDCALC_ROOT=str(fresh_project)),
                       capture_output=True, text=True)
    assert v.returncode == 0, v.stdout + v.stderr


def _stale_stages(project: Path) -> set[str]:
    out = dvc(project, "status").stdout
    return {line.rstrip(":").strip() for line in out.splitlines() if line and not line.startswith("\t")
            and line.rstrip().endswith(":")}


ALL_STAGES = {"ingest", "upstream-diff", "ledger-rebase", "recompute", "import-campaign", "apply", "certify", "physician-agreement",
              "recompute-report", "audit", "relabel", "triage", "triage-simulate", "release-tables", "compare",
              "evaluate-example", "grader-check", "release", "harmonize", "compare-report", "errata"}


# every stage runs core/answers.py, core/rows.py and project.py (tests/architecture/test_dvc_deps.py: the import closure)
@pytest.mark.parametrize("module, expected", [
    ("src/medcalc_maintained/core/answers.py", ALL_STAGES),
    ("src/medcalc_maintained/project.py", ALL_STAGES),
    ("src/medcalc_maintained/scoring/noise.py", {"compare"}),
    ("src/medcalc_maintained/cli/pipeline.py", set()),
    ("src/medcalc_maintained/cli/__init__.py", set()),
])
def test_dependencies_are_the_modules_a_stage_runs(fresh_project, module, expected):
    path = fresh_project / module
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n# touched by a test\n")
        assert _stale_stages(fresh_project) == expected
    finally:
        path.write_bytes(original)


def test_following_another_upstream_version_is_one_experiment(fresh_project, tmp_path):
    """`dvc exp run -S upstream.version=2024-06` rebases the ledger and builds the next MAJOR release
    on 2024-06, whose changelog lists upstream's changes apart from ours (issue: following upstream).
    The experiment runs up to its target `release` (docs/upstream.md's command, without a target, also
    reruns the compare stages on the new release tables; the moved-outputs test runs those). What the
    stages wrote is then checked (the end-to-end test of following upstream; the fast ones are in
    tests/upstream/test_upstream_follow.py): the diff and the rebase, apply still on the base version, the
    held records' rows unverified with upstream's new labels, nothing lost or quarantined, and the release's
    contracts, which block it on one QC gate only."""
    from medcalc_maintained.contracts.validate import validate
    from medcalc_maintained.project import Project
    from medcalc_maintained.release import upstream as follow
    from medcalc_maintained.release.tables import load_config

    # the release stage's output is neither cached nor tracked by git: keep the base one to put back
    release = fresh_project / "build" / "release"
    shutil.copytree(release, tmp_path / "release")
    try:
        r = dvc(fresh_project, "exp", "run", "-S", "upstream.version=2024-06", "release")
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
        assert "Running stage 'ingest'" not in r.stdout      # the base version's stages stay cached
        project = Project.load(fresh_project)
        assert project.upstream_version == "2024-06"
        man = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
        assert (man["version"], man["kind"]) == ("3.0.0", "major")
        assert man["releases"] == ["1.0.0", "2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.3.1", "2.3.2", "2.4.0", "2.4.1",
                                   "2.4.2", "3.0.0"]
        assert follow.plan_for(project).get("3.0.0").upstream == "2024-06"
        assert len(man["previous"]["calculators"]["test"]) == 55
        # upstream-diff: every row of the base version paired with one of 2024-06
        s = json.loads((project.upstream_diff_dir / "test" / "summary.json").read_text(encoding="utf-8"))
        assert s["old_rows"] == 1047 and s["new_rows"] == 1047 and s["base"] == "v1.0" and s["version"] == "2024-06"
        assert (project.upstream_diff_dir / "test" / "row_map.csv").is_file()
        # ledger-rebase: every record in one class, some carried and some held
        summary = json.loads((project.rebase_dir / "rebase_summary.json").read_text(encoding="utf-8"))
        assert not summary["noop"] and summary["records"] == sum(summary[c] for c in
                                                                 ("carried", "upstreamed", "conflict", "orphaned"))
        assert summary["carried"] > 0 and summary["conflict"] + summary["orphaned"] > 0
        report = pd.read_csv(project.rebase_dir / "rebase_report.csv")
        held = report[report["class"] != "carried"]
        # apply (and every analysis stage joined with it) stays on the base upstream version
        base_maintained = pd.read_parquet(project.maintained)  # apply.out
        assert len(base_maintained) == 1047 and set(base_maintained["uid"]) == set(range(1, 1048))
        assert validate(None, project=project).success
        # every held record's row (if it still exists) keeps the new upstream label, unverified
        new = pd.read_parquet(project.rebase_dir / "instances.parquet").set_index("uid")
        m = load_config(project, "3.0.0", "full").set_index("uid")
        carried_rows = set(report.loc[report["class"] == "carried", "new_uid"].dropna().astype(int))
        for uid in held["new_uid"].dropna().astype(int):
            if uid in carried_rows:
                continue
            assert m.loc[uid, "Label Status"] == "unverified"
            assert m.loc[uid, "Ground Truth Answer"] == new.loc[uid, "Ground Truth Answer"]
        assert len(carried_rows) and (m.loc[sorted(carried_rows), "Label Status"] != "unverified").any()
        # the changelog's section of 3.0.0: upstream's changes apart from ours
        changelog = (release / "CHANGELOG.md").read_text(encoding="utf-8")
        section = changelog.split("## 3.0.0 (")[1].split("\n## ")[0]
        assert "### Upstream changes (MedCalc-Bench v1.0 -> 2024-06, test split)" in section
        assert "| matched changed | 119 |" in section and "| added | 120 |" in section
        assert (s["matched_changed"], s["added"]) == (119, 120)
        assert "### Our corrections carried to 2024-06" in section
        assert f"{summary['carried']} carried" in section and "## 2.0.0 (" in changelog
        assert "Upstream changes" not in changelog.split("## 2.0.0 (")[1]
        # nothing is lost: the 20 gestational-age rows (typed `date` in 2024-06) are read, not quarantined
        full = pd.read_parquet(next((release / "data" / "full").glob("*.parquet")))
        assert summary["rows"] + summary["quarantined_rows"] == 1047
        assert (project.rebase_dir / "quarantine.csv").is_file()
        assert full["instance_key"].is_unique and len(full) == summary["rows"]
        assert (len(full), full["Calculator ID"].nunique(), summary["quarantined_rows"]) == (1047, 55, 0)
        assert (full["Calculator Name"] == "Estimated Gestational Age").sum() == 20
        assert "Every row of upstream MedCalc-Bench 2024-06 parsed: no row is quarantined" in section
        assert "Every row of upstream MedCalc-Bench 2024-06 parsed" in (release / "README.md").read_text(encoding="utf-8")
        # the release's contracts pass but for one QC gate: the held records leave more rows unverified
        # than the 20% ceiling (publishing waits for them to be re-decided, or declares its gates)
        rep = validate(release, project=project)
        assert [f.expectation for f in rep.blocking] == ["expect_column_mean_to_be_between(is_unverified)"]
        assert 0.2 < float(rep.blocking[0].observed) < 0.5
        rep = validate(release, project=project, gate_overrides={"max_unverified_rate": {"max": 1.0}})
        assert rep.success, [(f.expectation, f.offending[:5]) for f in rep.blocking]
    finally:
        shutil.rmtree(release)
        shutil.copytree(tmp_path / "release", release)
        _restore(fresh_project)
