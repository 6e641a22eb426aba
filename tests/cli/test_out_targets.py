"""No command deletes what it did not write (issue 46): every command that writes a folder (`audit`,
`relabel`, `regrade`, `evaluate`, `harness lm-eval`, `harness helm-model`, `release build`) refuses an
`--out` that is a repository's `.git`, `src`, `tests`, DVC's cache, the release tables or a user's
folder of chapters, with or without `--force`: exit 2, one line, the project unchanged (before: `audit`
and `relabel` exited 0 and deleted every sub-folder of it). The stage's own directory still updates."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from tests.scoring.test_evaluate import ORIGINAL, PREDICTIONS, frame, write_jsonl
from tests.support.llm_helpers import stage_params
from tests.support.paths import ROOT

runner = CliRunner()

# the folders of a checkout (and a user's) that no command writes: path -> files in sub-folders
TARGETS = {
    ".git": {"HEAD": "ref: refs/heads/main\n", "objects/pack/pack-1.pack": "PACK", "refs/heads/main": "abc\n"},
    "src": {"medcalc_maintained/__init__.py": "", "medcalc_maintained/core/io.py": "x = 1\n"},
    "tests": {"conftest.py": "", "core/test_io.py": "def test(): pass\n"},
    ".dvc/cache": {"files/md5/ab/cdef0123": "cached", "runs/00/11": "run"},
    "data/releases": {"2.2.0/full.parquet": "PAR1", "2.2.0/mini.parquet": "PAR1"},
    "chapters": {"notes.md": "outline\n", "one/draft.md": "# One\n", "two/figures/plot.svg": "<svg/>"},
}


@pytest.fixture(scope="module")
def targets_project(tmp_path_factory, real_instances, campaign_workbooks) -> Path:
    """A project with this checkout's params (the LLM stages offline, writing ``stage-out/<stage>``),
    the real instances, a predictions file and a label file, and every folder of :data:`TARGETS`."""
    root = tmp_path_factory.mktemp("targets") / "project"
    root.mkdir()
    for name in ("releases.yaml", "dataset_card.md"):
        shutil.copy(ROOT / name, root / name)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    sampled, final = campaign_workbooks
    params["campaign"].update(sampled=str(sampled), final=str(final))
    params["audit"], params["relabel"] = stage_params("audit"), stage_params("relabel")
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    real_instances.to_parquet(root / "instances.parquet", index=False)
    frame(ORIGINAL).to_parquet(root / "labels.parquet")
    write_jsonl(root / "preds.jsonl", PREDICTIONS)
    (root / "model").mkdir()
    (root / ".dvc" / "config").parent.mkdir()
    (root / ".dvc" / "config").write_text("[core]\n")
    for target, files in TARGETS.items():
        for rel, text in files.items():
            (root / target / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / target / rel).write_text(text)
    return root


def snapshot(root: Path) -> dict[str, str]:
    """Every entry under ``root``: a folder, or a file's sha256."""
    return {str(p.relative_to(root)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))}


def cli(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def command(name: str, root: Path, out: Path) -> list[str]:
    o = ["--out", str(out)]
    return {
        "audit": ["audit", "--backend", "rules", "--limit", "3", "--instances", str(root / "instances.parquet"), *o],
        "relabel": ["relabel", "--limit", "3", "--instances", str(root / "instances.parquet"), *o],
        "regrade": ["regrade", str(root / "preds.jsonl"), "--against", str(root / "labels.parquet"), *o, "--force"],
        "evaluate": ["evaluate", str(root / "preds.jsonl"), "--against", str(root / "labels.parquet"), *o, "--force"],
        "harness lm-eval": ["harness", "lm-eval", "--revision", "v2.0", *o, "--force"],
        "harness helm-model": ["harness", "helm-model", str(root / "model"), *o, "--force"],
        "release build": ["release", "build", *o],
    }[name]


COMMANDS = ["audit", "relabel", "regrade", "evaluate", "harness lm-eval", "harness helm-model", "release build"]


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("name", COMMANDS)
def test_no_command_writes_over_a_folder_it_did_not_write(targets_project, monkeypatch, name, target):
    monkeypatch.chdir(targets_project)
    before = snapshot(targets_project)
    r = cli(targets_project, *command(name, targets_project, targets_project / target))
    flat = " ".join(r.output.split())
    assert r.exit_code == 2 and "Traceback" not in flat, flat
    assert target.split("/")[-1] in flat and ("not an earlier output" in flat or "not a release build" in flat), flat
    assert snapshot(targets_project) == before  # nothing written, nothing deleted, no scratch folder left


@pytest.mark.parametrize("stage, tables", [("audit", ("verdicts", "flags")), ("relabel", ("labels", "votes"))])
def test_the_stage_still_replaces_its_own_directory(targets_project, tmp_path, stage, tables):
    root = tmp_path / "project"
    shutil.copytree(targets_project, root)
    out = root / "stage-out" / stage  # the stage's own output directory (params <stage>.out)
    args = [stage, "--limit", "3", "--instances", str(root / "instances.parquet")]
    assert cli(root, *args).exit_code == 0
    (out / ".gitignore").write_text(f"/{tables[0]}.parquet\n")  # as DVC leaves it beside its outputs
    r = cli(root, *args[:2], "4", *args[3:])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "run.json").read_text())["rows"] == 4  # replaced
    assert sorted(p.name for p in out.iterdir()) == sorted([".gitignore", "metrics.json", "run.json",
                                                            *(f"{t}.parquet" for t in tables)])
    assert [p.name for p in out.parent.iterdir()] == [stage]  # no scratch folder left
    other = "relabel" if stage == "audit" else "audit"  # the other stage's output is not its own
    before = snapshot(out)
    r = cli(root, other, "--limit", "3", "--instances", str(root / "instances.parquet"), "--out", str(out))
    assert r.exit_code == 2 and f"not an earlier output of `{other}`" in " ".join(r.output.split()), r.output
    assert snapshot(out) == before


def test_evaluate_removes_the_scratch_folder_a_killed_run_left(targets_project, tmp_path):
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import evaluate_example as stage
    from tests.core.test_replace_dirs import dead_pid

    out = tmp_path / "runs" / "one"
    killed = tmp_path / "runs" / f".one.{dead_pid()}-k1ll"  # the scratch folder of an evaluate killed mid-write
    killed.mkdir(parents=True)
    (killed / "evaluation.json").write_text("{")
    stage.evaluate(Project.load(targets_project), targets_project / "preds.jsonl",
                   [str(targets_project / "labels.parquet")], out_dir=out, n_boot=100)
    assert [p.name for p in out.parent.iterdir()] == ["one"] and (out / "evaluation.json").is_file()
