"""The harness adapters end to end, through the real harness packages and their own mock models,
against releases 1.0.0 and 2.0.0 published to a local Hub mirror (olah, offline) and loaded at
their tags: gold answers (each row's own released label) score 100% on every config; answering
with the other release's label is wrong on exactly the rows `evaluate` reports as flips; a wrong
answer scores 0. The latest release is also read from its local build directory (the offline form,
``mini`` with gold answers), and each mock model checks that it is handed the shared chat messages and
decoding. Each test skips when its harness extra is not installed (HELM: when ``.venv-helm``, built
by ``make harness-env H=helm``, is absent)."""

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

from medcalc_maintained.harnesses.common import MAX_NEW_TOKENS
from medcalc_maintained.scoring.evaluate import evaluate
from tests.e2e.release import test_release_e2e as e2e
from tests.support.paths import ROOT
from tests.support.release_support import RELEASES

# the published releases and the local Hub mirror of test_release_e2e (module-scoped fixtures, bound
# here so pytest finds them in this module too)
project, builds, published, hub = e2e.project, e2e.builds, e2e.published, e2e.hub

REVISIONS = {"1.0.0": "v1.0", "2.0.0": "v2.0"}
LOCAL = "local"  # the cases that read the latest release from its build directory
WRONG = "-987654"  # a number no label of any calculator is near, and unparsable as a date
NO_PREDICTION = "no prediction"  # what a mock model says for a row the predictions file lacks


def hub_env(url: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_ENDPOINT=url, HF_HOME=str(home / "hf"), HF_HUB_OFFLINE="0", HF_DATASETS_OFFLINE="0",
               HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1",
               INSPECT_CACHE_DIR=str(home / "inspect-cache"), INSPECT_LOG_DIR=str(home / "inspect-logs"),
               XDG_CACHE_HOME=str(home / "cache"), INSPECT_DISPLAY="none", TQDM_DISABLE="1", NO_COLOR="1", COLUMNS="160")
    return env


def run_script(script: str, args: dict, env: dict[str, str], cwd: Path, python: Path | str = sys.executable) -> dict:
    """Run ``script`` with ``python`` (a harness's own venv where it has one) on ``args``; its last
    stdout line is the JSON result."""
    (cwd / "args.json").write_text(json.dumps(args))
    proc = subprocess.run([str(python), "-c", script, str(cwd / "args.json")], env=env, cwd=cwd,
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
    full = {v: config_rows(builds, v, "full") for v in REVISIONS}
    labels = {v: dict(zip(f["Row Number"].astype(int), f["Ground Truth Answer"])) for v, f in full.items()}
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
    latest = RELEASES[-1]
    mini = config_rows(builds, latest, "mini")
    plan.append({"revision": LOCAL, "release": str(builds[latest]), "config": "mini", "n": len(mini),
                 "answers": {"gold": {str(int(u)): a for u, a in zip(mini["Row Number"], mini["Ground Truth Answer"])}}})
    return {"plan": plan, "flips": flips, "labels": labels}


def check(cases, got: dict) -> None:
    """The harness's per-(revision, config, answers) accuracy and sample count against the cases."""
    flips = {"v1.0": cases["flips"]["1.0.0"], "v2.0": cases["flips"]["2.0.0"]}
    for case in cases["plan"]:
        key = f"{case['revision']}/{case['config']}"
        assert got[f"{key}/gold"]["n"] == case["n"], key
        assert got[f"{key}/gold"]["acc"] == 1.0, key
        if "wrong" in case["answers"]:  # (the local build's case has gold answers only)
            assert got[f"{key}/wrong"]["acc"] == 0.0, key
        if "other" in case["answers"]:
            n_wrong = round(case["n"] * (1 - got[f"{key}/other"]["acc"]))
            assert n_wrong == flips[case["revision"]], key
    # not vacuous: both releases and the three configs of 2.0 ran, and labels do flip between them
    assert {c["revision"] + "/" + c["config"] for c in cases["plan"]} >= {"v1.0/default", "v1.0/full", "v2.0/default",
                                                                          "v2.0/full", "v2.0/mini", f"{LOCAL}/mini"}
    assert min(cases["flips"].values()) > 100


LM_EVAL = r"""
import json, sys
import lm_eval
from lm_eval.api.model import LM
from lm_eval.tasks import TaskManager
from medcalc_maintained.harnesses.common import prompt_messages

class TableLM(LM):
    '''Answers every request with the table's answer for the request's row, after checking the prompt's
    chat messages (our system message and user turn) and the decoding.'''
    tokenizer_name = "table"
    def __init__(self, table):
        super().__init__()
        self.table = table
    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        return json.dumps(chat_history)
    def generate_until(self, requests, disable_tqdm=False):
        for r in requests:
            assert json.loads(r.arguments[0]) == prompt_messages(r.doc), r.arguments[0][:300]
            assert r.arguments[1] == {"until": [], "do_sample": False, "temperature": 0.0,
                                      "max_gen_toks": args["max_new_tokens"]}, r.arguments[1]
        return [f"Computing... <answer>{self.table[str(r.doc['Row Number'])]}</answer>" for r in requests]
    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError
    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError

args = json.loads(open(sys.argv[1]).read())
out = {}
# one manager per task directory, indexing only it (lm-eval's own ~14k task YAMLs are not read)
managers = {rev: TaskManager(include_path=path, include_defaults=False) for rev, path in args["tasks"].items()}
for case in args["plan"]:
    task = {"default": "medcalc_maintained", "full": "medcalc_maintained_full", "mini": "medcalc_maintained_mini"}[case["config"]]
    manager = managers[case["revision"]]
    for name, table in case["answers"].items():
        res = lm_eval.simple_evaluate(model=TableLM(table), tasks=[task], task_manager=manager, apply_chat_template=True)
        out[f"{case['revision']}/{case['config']}/{name}"] = {"acc": res["results"][task]["acc,none"],
                                                              "n": res["n-samples"][task]["effective"]}
print(json.dumps(out))
"""


def test_lm_eval_task_directory(hub, cases, relabel, tmp_path):
    pytest.importorskip("lm_eval")
    exe = Path(sys.executable).parent
    tasks = {}
    for rev in (*REVISIONS.values(), "v2.1"):
        tasks[rev] = tmp_path / f"tasks-{rev}"
        # docs/harnesses.md's command: for v2.0 (the directory the lm_eval command line reads below) as the installed
        # console script in its own process, for the other tags in this process (the same command)
        if rev == "v2.0":
            proc = subprocess.run([str(exe / "medcalc-maintained"), "harness", "lm-eval", "--revision", rev,
                                   "--out", str(tasks[rev])], capture_output=True, text=True, cwd=tmp_path)
            assert proc.returncode == 0, proc.stderr
        else:
            r = e2e.cli(tmp_path, "harness", "lm-eval", "--revision", rev, "--out", str(tasks[rev]))
            assert r.exit_code == 0, r.output
        assert f"revision: {rev}" in (tasks[rev] / "medcalc_maintained.yaml").read_text()
    (local,) = [c for c in cases["plan"] if c["revision"] == LOCAL]
    tasks[LOCAL] = tmp_path / "tasks-local"
    r = e2e.cli(tmp_path, "harness", "lm-eval", "--release", local["release"], "--out", str(tasks[LOCAL]))
    assert r.exit_code == 0, r.output
    env = hub_env(hub, tmp_path)
    start = time.perf_counter()
    got = run_script(LM_EVAL, {"plan": cases["plan"] + tagged(relabel), "tasks": {k: str(v) for k, v in tasks.items()},
                               "max_new_tokens": MAX_NEW_TOKENS}, env, tmp_path)
    check(cases, got)
    check_relabel(relabel, got, "lm-eval")
    # the lm_eval command line without --apply_chat_template: refused, saying what to add (its dummy model
    # has no chat template it can load offline; tests/e2e/scoring/test_harness_real_model.py runs the command line with one)
    proc = subprocess.run(
        [str(exe / "lm_eval"), "--model", "dummy", "--include_path", str(tasks["v2.0"]), "--tasks",
         "medcalc_maintained_mini", "--output_path", str(tmp_path / "lm-eval-out")], env=env, cwd=tmp_path,
        capture_output=True, text=True, timeout=900)
    assert proc.returncode != 0 and "run lm_eval with --apply_chat_template" in proc.stderr, proc.stderr[-4000:]
    print(f"lm-eval: {time.perf_counter() - start:.1f}s")


INSPECT = r"""
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from medcalc_maintained.harnesses.inspect_task import medcalc_maintained
from medcalc_maintained.grading.prompts import SYSTEM_PROMPT

args = json.loads(open(sys.argv[1]).read())
out = {}
for case in args["plan"]:
    where = {"release": case["release"]} if "release" in case else {"revision": case["revision"]}
    task = medcalc_maintained(config=case["config"], **where)
    by_prompt = {s.input[-1].content: str(s.id) for s in task.dataset}
    for name, table in case["answers"].items():
        def answer(messages, tools, tool_choice, config, table=table):
            uid = by_prompt[messages[-1].text]
            assert [m.role for m in messages] == ["system", "user"] and messages[0].text == SYSTEM_PROMPT
            assert (config.temperature, config.max_tokens) == (0.0, args["max_new_tokens"]), config
            output = ModelOutput.from_content(model="mockllm", content=f"<answer>{table[uid]}</answer>")
            # given usage: else mockllm counts tokens with tiktoken, which downloads its encoding
            output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
            return output
        model = get_model("mockllm/model", custom_outputs=answer)
        # the eval's results without its per-sample record: no samples in the log file and no realtime
        # event buffer (together ~60% of the run's time on 13k mock samples)
        (log,) = inspect_eval(task, model=model, log_dir=args["logs"], display="none", log_samples=False,
                              log_realtime=False, score_display=False)
        assert log.status == "success", log.error
        (metrics,) = [s.metrics for s in log.results.scores]
        out[f"{case['revision']}/{case['config']}/{name}"] = {"acc": metrics["accuracy"].value,
                                                              "n": log.results.completed_samples}
print(json.dumps(out))
"""


def test_inspect_task(hub, cases, relabel, tmp_path):
    pytest.importorskip("inspect_ai")
    env = hub_env(hub, tmp_path)
    start = time.perf_counter()
    got = run_script(INSPECT, {"plan": cases["plan"] + tagged(relabel), "logs": str(tmp_path / "inspect-logs"),
                               "max_new_tokens": MAX_NEW_TOKENS}, env, tmp_path)
    check(cases, got)
    check_relabel(relabel, got, "inspect")
    print(f"inspect: {time.perf_counter() - start:.1f}s")


@pytest.fixture(scope="module")
def relabel(builds, project, tmp_path_factory):
    """The relabel stage's 887 predictions as answers on ``default`` of v1.0 and of the latest
    release (v2.1; rows without a prediction are answered with a text that is no answer: verifiers
    aborts a rollout on an empty reply), and the correct counts
    ``evaluate`` reports for them. The predictions are made as the pipeline makes them (``relabel``
    with its offline replay backend, then ``compare predictions``) on the test's project copy, not
    read from the checkout, whose pipeline outputs exist only after ``make run``."""
    from medcalc_maintained.grading.predictions import read_predictions
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages.evaluate_example import write_predictions

    work = tmp_path_factory.mktemp("relabel")
    proj = Project.load(project)
    r = e2e.cli(project, "relabel", "--instances", str(proj.instances), "--out", str(work / "relabel"))
    assert r.exit_code == 0, r.output
    path = write_predictions(proj, labels=work / "relabel" / "labels.parquet", out=work / "predictions.jsonl").target
    preds = read_predictions(path)
    assert len(preds) == 887
    plan, correct = [], {}
    for version, rev in (("1.0.0", "v1.0"), ("2.1.0", "v2.1")):
        rows = config_rows(builds, version, "default").assign(uid=lambda d: d["Row Number"].astype(int))
        report = evaluate(preds, {version: rows}, n_boot=200, seed=0)
        correct[rev] = int(report.accuracy["correct"].iloc[0])
        plan.append({"revision": rev, "config": "default", "n": len(rows),
                     "answers": {"relabel": {str(u): preds.get(int(u), NO_PREDICTION) for u in rows["uid"]}}})
    return {"plan": plan, "correct": correct}


def tagged(relabel) -> list[dict]:
    """The relabel plan for the mock models of lm-eval and Inspect, which put the table's answer inside
    <answer> tags: each output's graded answer (its last <answer>, else the whole output), so the reply
    carries the answer ``evaluate`` grades."""
    from medcalc_maintained.core.answers import graded_answer

    return [{**c, "answers": {"relabel": {u: graded_answer(a) for u, a in c["answers"]["relabel"].items()}}}
            for c in relabel["plan"]]


def check_relabel(relabel, got: dict, harness: str) -> None:
    for case in relabel["plan"]:
        key = f"{case['revision']}/default/relabel"
        assert got[key]["n"] == case["n"], key
        assert round(got[key]["acc"] * case["n"]) == relabel["correct"][case["revision"]], key
        print(f"{harness}: relabel predictions on {case['revision']} default: "
              f"{round(got[key]['acc'] * case['n'])}/{case['n']} = {got[key]['acc']:.4f}")


def answers_in_tags(cases, relabel) -> list[dict]:
    """The plan for the mock models of verifiers and HELM, whose outputs are the table's text itself:
    every answer of ``cases`` inside <answer> tags, plus the relabel predictions as they are."""
    plan = [{**c, "answers": {k: {u: f"<answer>{a}</answer>" for u, a in t.items()} for k, t in c["answers"].items()}}
            for c in cases["plan"]]
    return plan + [{**c, "answers": {"relabel": c["answers"]["relabel"]}} for c in relabel["plan"]]


def check_rewards(cases, rewards: dict, lam: float) -> None:
    """Eq. 2: 1 for every gold answer; lam for a parsable wrong number (0 where the row is a date,
    which "-987654" is not), so the wrong answers earn lam on some rows and never more."""
    for case in cases["plan"]:
        key = f"{case['revision']}/{case['config']}"
        assert rewards[f"{key}/gold"] == [1.0], key
        if "wrong" in case["answers"]:
            assert set(rewards[f"{key}/wrong"]) <= {0.0, lam} and lam in rewards[f"{key}/wrong"], key


VERIFIERS = r"""
import json, sys
import httpx
import openai
import verifiers as vf
from medcalc_maintained.grading.prompts import SYSTEM_PROMPT

args = json.loads(open(sys.argv[1]).read())
out, rewards = {}, {}
for case in args["plan"]:
    where = {"release": case["release"]} if "release" in case else {"revision": case["revision"]}
    env = vf.load_environment("medcalc_maintained.harnesses.verifiers_env", config=case["config"], lam=args["lam"],
                              **where)
    assert isinstance(env.parser, vf.XMLParser) and isinstance(env.rubric, vf.Rubric)
    rows = env.get_eval_dataset()
    by_prompt = {r["prompt"][-1]["content"]: str(r["info"]["Row Number"]) for r in rows}
    for name, table in case["answers"].items():
        def reply(request, table=table):
            body = json.loads(request.content)
            assert [m["role"] for m in body["messages"]] == ["system", "user"], body["messages"]
            assert body["messages"][0]["content"] == SYSTEM_PROMPT
            assert body["temperature"] == 0.0 and body["max_completion_tokens"] == args["max_new_tokens"], body
            text = table[by_prompt[body["messages"][-1]["content"]]]
            return httpx.Response(200, json={
                "id": "cmpl", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        client = openai.AsyncOpenAI(api_key="none", base_url="http://table.invalid/v1",
                                    http_client=httpx.AsyncClient(transport=httpx.MockTransport(reply)))
        res = env.evaluate_sync(client=client, model="table", max_concurrent=32)
        outputs = res["outputs"]
        assert all(o.get("error") is None for o in outputs), outputs[0].get("error")
        key = f"{case['revision']}/{case['config']}/{name}"
        out[key] = {"acc": sum(o["metrics"]["correct"] for o in outputs) / len(outputs), "n": len(outputs)}
        rewards[key] = sorted({round(o["reward"], 9) for o in outputs})
print(json.dumps({"acc": out, "rewards": rewards}))
"""


def test_verifiers_environment(hub, cases, relabel, tmp_path):
    pytest.importorskip("verifiers")
    env = hub_env(hub, tmp_path)
    lam = 0.25
    # answers as the mock model writes them: inside <answer> tags; "untagged" gives a gold label bare
    plan = answers_in_tags(cases, relabel)
    plan[0]["answers"]["untagged"] = dict(cases["plan"][0]["answers"]["gold"])
    start = time.perf_counter()
    got = run_script(VERIFIERS, {"plan": plan, "lam": lam, "max_new_tokens": MAX_NEW_TOKENS}, env, tmp_path)
    print(f"verifiers: {time.perf_counter() - start:.1f}s")
    check(cases, got["acc"])
    check_relabel(relabel, got["acc"], "verifiers")
    check_rewards(cases, got["rewards"], lam)
    # 0 without an <answer> tag, even for the right value (which our grading still counts correct)
    untagged = f"{cases['plan'][0]['revision']}/{cases['plan'][0]['config']}/untagged"
    assert got["rewards"][untagged] == [0.0] and got["acc"][untagged]["acc"] == 1.0


HELM = r"""
import json, sys, tempfile
from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.metrics.metric import MetricSpec, create_metric
from helm.benchmark.scenarios.scenario import TEST_SPLIT, ScenarioSpec, create_scenario
from helm.common.request import GeneratedOutput, Request, RequestResult
from medcalc_maintained.harnesses.helm_scenario import METRIC_CLASS, SCENARIO_CLASS, adapter_spec
from medcalc_maintained.grading.prompts import SYSTEM_PROMPT

import medcalc_maintained.harnesses.helm_run_spec  # noqa: F401 (registers the run spec, as `helm-run --plugins` does)
from helm.benchmark.run_spec import get_run_spec_function

args = json.loads(open(sys.argv[1]).read())
adapter = adapter_spec()
assert (adapter.method, adapter.temperature, adapter.max_tokens) == ("chat", 0.0, args["max_new_tokens"]), adapter
for case in args["plan"]:
    if "release" in case:  # the run spec helm-run builds from a run entry on the local build
        spec = get_run_spec_function("medcalc_maintained")(dataset_path=case["release"], config=case["config"])
        assert spec.adapter_spec == adapter and spec.scenario_spec.class_name == SCENARIO_CLASS, spec
        assert [m.class_name for m in spec.metric_specs] == [METRIC_CLASS], spec
        # limit=N keeps the config's first N rows (lm-eval's --limit), in the run's name too
        limited = get_run_spec_function("medcalc_maintained")(dataset_path=case["release"], config=case["config"], limit="2")
        assert limited.name.endswith(",limit=2") and limited.scenario_spec.args["limit"] == 2, limited
        first = create_scenario(limited.scenario_spec).get_instances(tempfile.mkdtemp())
        every = create_scenario(spec.scenario_spec).get_instances(tempfile.mkdtemp())
        assert [i.id for i in first] == [i.id for i in every[:2]] and len(every) > 2, (first, every)
metric = create_metric(MetricSpec(class_name=METRIC_CLASS, args={"lam": args["lam"]}))
out, rewards = {}, {}
for case in args["plan"]:
    where = ({"dataset_path": case["release"]} if "release" in case else
             {"dataset_path": "org/medcalc-maintained", "revision": case["revision"]})
    scenario = create_scenario(ScenarioSpec(class_name=SCENARIO_CLASS, args={"config": case["config"], **where}))
    instances = scenario.get_instances(tempfile.mkdtemp())
    assert all(i.split == TEST_SPLIT and len(i.all_correct_references) == 1 for i in instances)
    assert all([m["role"] for m in i.input.messages] == ["system", "user"] for i in instances)
    assert all(i.input.messages[0]["content"] == SYSTEM_PROMPT for i in instances)
    for name, table in case["answers"].items():
        states = [RequestState(instance=i, reference_index=None, request_mode=None, train_trial_index=0,
                               output_mapping=None, num_train_instances=0, prompt_truncated=False,
                               request=Request(model="table/model", model_deployment="table/model", prompt=i.input.text),
                               result=RequestResult(success=True, embedding=[], cached=False, completions=[
                                   GeneratedOutput(text=table[i.id[3:]], logprob=0.0, tokens=[])]))
                  for i in instances]
        result = metric.evaluate(ScenarioState(adapter_spec=adapter, request_states=states), None,
                                 tempfile.mkdtemp(), parallelism=1)
        stats = {s.name.name: s for s in result.aggregated_stats if s.name.split == TEST_SPLIT and s.name.perturbation is None}
        key = f"{case['revision']}/{case['config']}/{name}"
        per = [s for p in result.per_instance_stats for s in p.stats if s.name.name == "medcalc_reward"]
        out[key] = {"acc": stats["medcalc_correct"].mean, "n": len(result.per_instance_stats)}
        rewards[key] = sorted({round(s.mean, 9) for s in per})
print(json.dumps({"acc": out, "rewards": rewards}))
"""
HELM_PYTHON = ROOT / ".venv-helm" / "bin" / "python"


def test_helm_scenario_and_metric(hub, cases, relabel, tmp_path):
    if not HELM_PYTHON.exists():
        pytest.skip(f"{HELM_PYTHON.parent.parent} is absent: build it with `make harness-env H=helm` "
                    "(crfm-helm does not install alongside our pins)")
    env = hub_env(hub, tmp_path)
    lam = 0.25
    start = time.perf_counter()
    got = run_script(HELM, {"plan": answers_in_tags(cases, relabel), "lam": lam, "max_new_tokens": MAX_NEW_TOKENS}, env,
                     tmp_path, python=HELM_PYTHON)
    print(f"helm: {time.perf_counter() - start:.1f}s")
    check(cases, got["acc"])
    check_relabel(relabel, got["acc"], "helm")
    check_rewards(cases, got["rewards"], lam)
