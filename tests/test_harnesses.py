"""The harness adapters end to end, through the real harness packages and their own mock models,
against releases 1.0.0 and 2.0.0 published to a local Hub mirror (olah, offline) and loaded at
their tags: gold answers (each row's own released label) score 100% on every config; answering
with the other release's label is wrong on exactly the rows `evaluate` reports as flips; a wrong
answer scores 0. Each test skips when its harness extra is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

# the published releases and the local Hub mirror of test_release_e2e (module-scoped fixtures)
from test_release_e2e import builds, hub, project, published  # noqa: F401

from medcalc_maintained.scoring.evaluate import evaluate

pytestmark = pytest.mark.slow
REVISIONS = {"1.0.0": "v1.0", "2.0.0": "v2.0"}
WRONG = "-987654"  # a number no label of any calculator is near, and unparsable as a date


def hub_env(url: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=url, HF_HOME=str(home / "hf"), HF_HUB_OFFLINE="0", HF_DATASETS_OFFLINE="0",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1",
               INSPECT_CACHE_DIR=str(home / "inspect-cache"), INSPECT_LOG_DIR=str(home / "inspect-logs"),
               XDG_CACHE_HOME=str(home / "cache"), INSPECT_DISPLAY="none", TQDM_DISABLE="1", NO_COLOR="1", COLUMNS="160")
    return env


def run_script(script: str, args: dict, env: dict[str, str], cwd: Path) -> dict:
    (cwd / "args.json").write_text(json.dumps(args))
    proc = subprocess.run([sys.executable, "-c", script, str(cwd / "args.json")], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-6000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def config_rows(builds, version: str, config: str) -> pd.DataFrame:
    return pq.read_table(builds[version] / "data" / config / "test-00000-of-00001.parquet").to_pandas()


@pytest.fixture(scope="module")
def cases(builds):
    """Every (release, config) with rows, each with the answer tables the mock models give:
    ``gold`` (the row's own label), ``other`` (the other release's label: its ``full`` config
    labels every row) and ``wrong``; plus the flip counts ``evaluate`` reports for the other
    release's labels, on the rows of ``default``."""
    labels = {v: dict(zip(config_rows(builds, v, "full")["Row Number"].astype(int),
                          config_rows(builds, v, "full")["Ground Truth Answer"])) for v in REVISIONS}
    default = {v: config_rows(builds, v, "default").assign(uid=lambda d: d["Row Number"].astype(int))
               for v in REVISIONS}
    flips = {}
    for version, other in (("1.0.0", "2.0.0"), ("2.0.0", "1.0.0")):
        preds = {int(u): f"<answer>{labels[other][int(u)]}</answer>" for u in default[version]["uid"]}
        report = evaluate(preds, {f"own {version}": default[version], f"other {other}": default[other]},
                          n_boot=200, seed=0)
        flips[version] = len(report.flips)
    plan = []
    for version, rev in REVISIONS.items():
        other = "2.0.0" if version == "1.0.0" else "1.0.0"
        for config in ("default", "full", "mini"):
            uids = [int(u) for u in config_rows(builds, version, config)["Row Number"]]
            if not uids:
                continue  # mini of 1.0.0 has no rows (no verified row in the baseline)
            plan.append({"revision": rev, "config": config, "n": len(uids), "answers": {
                "gold": {str(u): labels[version][u] for u in uids},
                "wrong": {str(u): WRONG for u in uids},
                **({"other": {str(u): labels[other][u] for u in uids}} if config == "default" else {})}})
    return {"plan": plan, "flips": flips, "labels": labels}


def check(cases, got: dict) -> None:
    """The harness's per-(revision, config, answers) accuracy and sample count against the cases."""
    flips = {"v1.0": cases["flips"]["1.0.0"], "v2.0": cases["flips"]["2.0.0"]}
    for case in cases["plan"]:
        key = f"{case['revision']}/{case['config']}"
        assert got[f"{key}/gold"]["n"] == case["n"], key
        assert got[f"{key}/gold"]["acc"] == 1.0, key
        assert got[f"{key}/wrong"]["acc"] == 0.0, key
        if "other" in case["answers"]:
            n_wrong = round(case["n"] * (1 - got[f"{key}/other"]["acc"]))
            assert n_wrong == flips[case["revision"]], key
    # not vacuous: both releases and the three configs of 2.0 ran, and labels do flip between them
    assert {c["revision"] + "/" + c["config"] for c in cases["plan"]} >= {"v1.0/default", "v1.0/full", "v2.0/default",
                                                                          "v2.0/full", "v2.0/mini"}
    assert min(cases["flips"].values()) > 100


LM_EVAL = r"""
import json, sys
import lm_eval
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager

class TableLM(LM):
    '''Answers every request with the table's answer for the request's row.'''
    def __init__(self, table):
        super().__init__()
        self.table = table
    def generate_until(self, requests, disable_tqdm=False):
        return [f"Computing... <answer>{self.table[str(r.doc['Row Number'])]}</answer>" for r in requests]
    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError
    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError

args = json.loads(open(sys.argv[1]).read())
out = {}
for case in args["plan"]:
    task = {"default": "medcalc_maintained", "full": "medcalc_maintained_full", "mini": "medcalc_maintained_mini"}[case["config"]]
    manager = TaskManager(include_path=args["tasks"][case["revision"]])
    for name, table in case["answers"].items():
        res = lm_eval.simple_evaluate(model=TableLM(table), tasks=[task], task_manager=manager)
        out[f"{case['revision']}/{case['config']}/{name}"] = {"acc": res["results"][task]["acc,none"],
                                                              "n": res["n-samples"][task]["effective"]}
print(json.dumps(out))
"""


def test_lm_eval_task_directory(hub, cases, tmp_path):
    pytest.importorskip("lm_eval")
    exe = Path(sys.executable).parent
    tasks = {}
    for rev in REVISIONS.values():
        tasks[rev] = tmp_path / f"tasks-{rev}"
        # the README's command
        proc = subprocess.run([str(exe / "medcalc-maintained"), "harness", "lm-eval", "--revision", rev,
                               "--out", str(tasks[rev])], capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert f"revision: {rev}" in (tasks[rev] / "medcalc_maintained.yaml").read_text()
    env = hub_env(hub, tmp_path)
    start = time.perf_counter()
    got = run_script(LM_EVAL, {"plan": cases["plan"], "tasks": {k: str(v) for k, v in tasks.items()}}, env, tmp_path)
    check(cases, got)
    # the lm_eval command line with its own dummy model (it answers "lol"): scores 0
    task_dir = tasks["v2.0"]
    proc = subprocess.run(
        [str(exe / "lm_eval"), "--model", "dummy", "--include_path", str(task_dir), "--tasks", "medcalc_maintained_mini",
         "--output_path", str(tmp_path / "lm-eval-out")], env=env, cwd=tmp_path, capture_output=True, text=True,
        timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(l for l in proc.stdout.splitlines() if "medcalc_maintained_mini" in l and "acc" in l)
    assert "|0|" in line.replace(" ", "").replace("0.0000", "0"), line
    print(f"lm-eval: {time.perf_counter() - start:.1f}s")


INSPECT = r"""
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from medcalc_maintained.harnesses.inspect_task import medcalc_maintained

args = json.loads(open(sys.argv[1]).read())
out = {}
for case in args["plan"]:
    task = medcalc_maintained(revision=case["revision"], config=case["config"])
    by_prompt = {s.input[-1].content: str(s.id) for s in task.dataset}
    for name, table in case["answers"].items():
        def answer(messages, tools, tool_choice, config, table=table):
            uid = by_prompt[messages[-1].text]
            output = ModelOutput.from_content(model="mockllm", content=f"<answer>{table[uid]}</answer>")
            # given usage: else mockllm counts tokens with tiktoken, which downloads its encoding
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return output
        model = get_model("mockllm/model", custom_outputs=answer)
        (log,) = inspect_eval(task, model=model, log_dir=args["logs"], display="none")
        assert log.status == "success", log.error
        (metrics,) = [s.metrics for s in log.results.scores]
        out[f"{case['revision']}/{case['config']}/{name}"] = {"acc": metrics["accuracy"].value,
                                                              "n": log.results.completed_samples}
print(json.dumps(out))
"""


def test_inspect_task(hub, cases, tmp_path):
    pytest.importorskip("inspect_ai")
    env = hub_env(hub, tmp_path)
    start = time.perf_counter()
    got = run_script(INSPECT, {"plan": cases["plan"], "logs": str(tmp_path / "inspect-logs")}, env, tmp_path)
    check(cases, got)
    print(f"inspect: {time.perf_counter() - start:.1f}s")

