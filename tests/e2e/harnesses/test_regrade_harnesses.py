"""Golden tests of `regrade` on the files each harness writes: lm-evaluation-harness (its command line
with --log_samples), Inspect (a .eval log of its mockllm model), verifiers (``evaluate_sync`` with
``save_results``) and HELM (its ``Runner`` writing a run directory, for our scenario and for HELM's own
``medcalc_bench`` scenario and metric on upstream's v1.0 rows), each run on the 519 rows of ``mini``
of release 2.0.0 published to the local Hub mirror of tests/e2e/release/test_release_e2e.py, with a model that
answers from a table mixing right, old, untagged, wrong and unparsable answers.

For each: regrade reproduces the score the harness recorded exactly (the count the test reads from the
harness's own output), and its re-score under v1.0 and the latest release (the default ``--against``)
is ``evaluate`` on the same outputs.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

from medcalc_maintained.project import Project
from medcalc_maintained.scoring.evaluate import evaluate
from medcalc_maintained.scoring.labels import resolve_against
from tests.e2e.harnesses.test_harnesses import HELM_PYTHON, config_rows, hub_env, run_script
from tests.e2e.release import test_release_e2e as e2e
from tests.support import eee

project, builds, published, hub = e2e.project, e2e.builds, e2e.published, e2e.hub
WRONG = "-987654"
NO_ANSWER = "I cannot compute this."
TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def table(builds) -> dict[str, str]:
    """The model's output per Row Number of 2.0.0's mini, by Row Number mod 5: the 2.0.0 label tagged,
    the 1.0.0 label tagged (right where 2.0.0 kept it), the 2.0.0 label untagged (our grading reads the
    whole output), a wrong number tagged, and text with no answer."""
    old = config_rows(builds, "1.0.0", "full")
    old = dict(zip(old["Row Number"].astype(int), old["Ground Truth Answer"]))
    out, by_prompt = {}, {}
    for r in config_rows(builds, "2.0.0", "mini").to_dict("records"):
        uid, label = int(r["Row Number"]), r["Ground Truth Answer"]
        answer = [f"Step by step... <answer>{label}</answer>", f"<answer>{old[uid]}</answer>", label,
                  f"<answer>{WRONG}</answer>", NO_ANSWER][uid % 5]
        # rows with the same note and question get one prompt, so one answer (the first row's), whatever the
        # harness keys its mock model by
        out[str(uid)] = by_prompt.setdefault((r["Patient Note"], r["Question"]), answer)
    assert len(out) == 519 and len(by_prompt) < 519  # mini holds a repeated prompt
    return out


def regrade(project: Path, *args: str) -> tuple[str, dict, Path]:
    out = Path(args[0]).parent / f"regraded-{Path(args[0]).name}"
    start = time.perf_counter()
    r = e2e.cli(project, "regrade", *args, "--out", str(out))
    TIMES["regrade " + Path(args[0]).name[:20]] = time.perf_counter() - start
    assert r.exit_code == 0, r.output
    rep = json.loads((out / "regrade.json").read_text())
    acc = json.loads((out / "evaluation.json").read_text())["accuracy"]
    shares = {c["name"]: c for c in rep["compliance"] if c["scope"] in ("all outputs", "label set")}
    print(f"{Path(args[0]).name}: " + "; ".join(
        f"{a['label_set']} {a['correct']}/{a['n']} = {a['accuracy']:.1%} (parsable {shares[a['label_set']]['parsable']}, "
        f"tagged {shares[a['label_set']]['tagged']})" for a in acc)
        + f"; all {shares['']['outputs']} outputs: tagged {shares['']['tagged']}, parsable {shares['']['parsable']}")
    return " ".join(r.output.split()), rep, out


def same_as_evaluate(project: Path, out: Path, outputs: dict[int, str], graders: list[str]) -> None:
    """regrade's evaluation.json is evaluate's on the same outputs, under the same releases and graders."""
    proj = Project.load(project)
    params = proj.section("compare.evaluate")
    sources = resolve_against(proj, [str(v) for v in params["against"]])  # regrade's default: params.yaml
    direct = evaluate(outputs, sources, n_boot=params["n_boot"], seed=params["seed"], graders=graders)
    got = json.loads((out / "evaluation.json").read_text())
    assert got["label_sets"] == direct.to_dict()["label_sets"]
    assert got["accuracy"] == json.loads(direct.accuracy.to_json(orient="records"))
    assert got["common_rows"] == direct.to_dict()["common_rows"]


def check_reproduced(text: str, rep: dict, name: str, correct: int, n: int) -> None:
    (repro,) = rep["reproduction"]
    share = f"{correct / n:.4f}".rstrip("0").rstrip(".")
    assert f"reproduced {name} {share} ({correct}/{n}) exactly" in text, text[:600]
    assert (repro["exact"], repro["n"], repro["recorded_correct"], repro["regraded_correct"]) == (True, n, correct,
                                                                                                 correct)
    print(f"{name}: recorded {repro['recorded']!r} ({repro['recorded_from']}); reproduced {correct}/{n}")


LM_EVAL = r"""
import json, sys
from lm_eval.__main__ import cli_evaluate
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model

@register_model("answer-table")
class TableLM(LM):
    '''Answers each request with the table's output for its row.'''
    tokenizer_name = "answer-table"
    def __init__(self, table, **kwargs):
        super().__init__()
        with open(table) as fh:
            self.table = json.load(fh)
    def apply_chat_template(self, chat_history, add_generation_prompt=True):
        return json.dumps(chat_history)
    def generate_until(self, requests, disable_tqdm=False):
        return [self.table[str(r.doc["Row Number"])] for r in requests]
    def loglikelihood(self, requests, disable_tqdm=False):
        raise NotImplementedError
    def loglikelihood_rolling(self, requests, disable_tqdm=False):
        raise NotImplementedError

args = json.loads(open(sys.argv[1]).read())
# pretrained names the model as org/name, which EEE's converter reads its developer from (the table ignores it)
sys.argv = ["lm_eval", "--model", "answer-table", "--model_args",
            "pretrained=medcalc-tests/answer-table,table=" + args["table"], "--include_path",
            args["tasks"], "--tasks", "medcalc_maintained_mini", "--apply_chat_template", "--output_path", args["out"],
            "--log_samples"]
cli_evaluate()
print("{}")
"""


def test_lm_eval_samples(project, builds, hub, table, tmp_path):
    pytest.importorskip("lm_eval")
    r = e2e.cli(project, "harness", "lm-eval", "--revision", "v2.0", "--out", str(tmp_path / "tasks"))
    assert r.exit_code == 0, r.output
    (tmp_path / "table.json").write_text(json.dumps(table))
    start = time.perf_counter()
    run_script(LM_EVAL, {"table": str(tmp_path / "table.json"), "tasks": str(tmp_path / "tasks"),
                         "out": str(tmp_path / "lm-eval")}, hub_env(hub, tmp_path), tmp_path)
    TIMES["lm-eval run"] = time.perf_counter() - start
    (samples,) = (tmp_path / "lm-eval").rglob("samples_medcalc_maintained_mini_*.jsonl")
    (results,) = samples.parent.glob("results_*.json")
    acc = json.loads(results.read_text())["results"]["medcalc_maintained_mini"]["acc,none"]
    # the label/grader split: two releases (the default) x two graders
    text, rep, out = regrade(project, str(samples), "--grader", "ours", "--grader", "upstream")
    check_reproduced(text, rep, "lm-eval acc", round(acc * 519), 519)
    assert rep["label_sets"] == {"v1.0.0 [ours]": "release 1.0.0, graded by ours",
                                 "v1.0.0 [upstream]": "release 1.0.0, graded by upstream",
                                 "v2.4.2 [ours]": "release 2.4.2, graded by ours",
                                 "v2.4.2 [upstream]": "release 2.4.2, graded by upstream"}
    assert "the accuracy change due to labels and the change due to grading, separately" in text
    assert (out / "decomposition.csv").is_file() and (out / "accuracy.png").stat().st_size > 10_000
    # tag compliance: 3 of the 5 kinds of output carry a tag; all parse but the text without an answer and the
    # wrong number on a date row
    comp = {r["scope"] + "/" + r["name"]: r for r in rep["compliance"]}["all outputs/"]
    mini = config_rows(builds, "2.0.0", "mini")
    served = [(table[str(u)], t) for u, t in zip(mini["Row Number"], mini["Output Type"])]
    assert comp["tagged"] == sum("<answer>" in a for a, _ in served)
    assert comp["parsable"] == sum(a != NO_ANSWER and not (WRONG in a and t == "date") for a, t in served)
    same_as_evaluate(project, out, {int(u): o for u, o in table.items()}, ["ours", "upstream"])
    if eee.EEE_PYTHON.exists():  # the round trip lm-eval -> EEE -> regrade -> EEE (issue 48, item 1)
        round_trip(project, "lm_eval", samples.parent, tmp_path, "acc", round(acc * 519), 519)


def round_trip(project: Path, converter: str, log: Path, tmp_path: Path, metric: str, correct: int, n: int) -> None:
    """EEE's own converter on a harness's results, then regrade of its file: the harness's score reproduced
    exactly, the re-score the same as regrading the harness's own files, and regrade's EEE files loaded by
    EEE's models with the release tag and the labels' hash."""
    start = time.perf_counter()
    samples = eee.convert(converter, log, tmp_path / f"eee-{converter}")
    TIMES[f"EEE convert {converter}"] = time.perf_counter() - start
    text, rep, out = regrade(project, str(samples))
    check_reproduced(text, rep, f"Every Eval Ever {metric}", correct, n)
    assert rep["inputs"][0]["format"] == "eee"
    files = sorted((out / "eee").glob("*.jsonl"))
    got = eee.validate(*files)
    latest = Project.load(project).section("compare.evaluate")["against"][-1]
    for path in files:
        summary = rep["eee"][f"eee/{path.name}"]
        assert got[str(path)]["rows"] == summary["rows"] and got[str(path)]["correct"] == summary["correct"]
        assert got[str(path)]["tags"] == [summary["release_tag"]] and got[str(path)]["hashes"] == [summary["labels_sha256"]]
    accuracy = {a["label_set"]: a for a in json.loads((out / "evaluation.json").read_text())["accuracy"]}
    for name, a in accuracy.items():  # the EEE files score as evaluate does
        assert got[str(out / "eee" / f"{name}.jsonl")]["correct"] == a["correct"]
    assert f"v{latest}" in accuracy
    print(f"EEE round trip ({converter}): reproduced {correct}/{n}; " + "; ".join(
        f"{name} {a['correct']}/{a['n']}" for name, a in accuracy.items()))


INSPECT = r"""
import json, sys
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from medcalc_maintained.harnesses.inspect_task import medcalc_maintained

args = json.loads(open(sys.argv[1]).read())
table = json.loads(open(args["table"]).read())
task = medcalc_maintained(revision="v2.0", config="mini")
by_prompt = {s.input[-1].content: str(s.id) for s in task.dataset}
def answer(messages, tools, tool_choice, config):
    output = ModelOutput.from_content(model="mockllm", content=table[by_prompt[messages[-1].text]])
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else tiktoken downloads
    return output
(log,) = inspect_eval(task, model=get_model("mockllm/model", custom_outputs=answer), log_dir=args["logs"],
                      display="none", score_display=False)
assert log.status == "success", log.error
(score,) = log.results.scores
print(json.dumps({"acc": score.metrics["accuracy"].value, "n": log.results.completed_samples}))
"""


def test_inspect_log(project, hub, table, tmp_path):
    pytest.importorskip("inspect_ai")
    (tmp_path / "table.json").write_text(json.dumps(table))
    start = time.perf_counter()
    got = run_script(INSPECT, {"table": str(tmp_path / "table.json"), "logs": str(tmp_path / "logs")},
                     hub_env(hub, tmp_path), tmp_path)
    TIMES["inspect run"] = time.perf_counter() - start
    (log,) = (tmp_path / "logs").glob("*.eval")
    text, rep, out = regrade(project, str(log))
    check_reproduced(text, rep, "Inspect medcalc_scorer accuracy", round(got["acc"] * got["n"]), got["n"])
    assert rep["graders"] == ["ours"]
    same_as_evaluate(project, out, {int(u): o for u, o in table.items()}, ["ours"])
    if eee.EEE_PYTHON.exists():
        # EEE's Inspect converter takes a model's developer from its path and knows no `mockllm/...`: the copy it
        # converts names the table model as a Hugging Face model of an org (Inspect's own log API writes it)
        from inspect_ai.log import read_eval_log, write_eval_log

        named = read_eval_log(str(log))
        named.eval.model = "hf/medcalc-tests/answer-table"
        (tmp_path / "named").mkdir()
        write_eval_log(named, str(tmp_path / "named" / log.name))
        round_trip(project, "inspect", tmp_path / "named" / log.name, tmp_path, "medcalc_scorer:accuracy",
                   round(got["acc"] * got["n"]), got["n"])


VERIFIERS = r"""
import json, sys
from pathlib import Path
import httpx, openai
import verifiers as vf

args = json.loads(open(sys.argv[1]).read())
table = json.loads(open(args["table"]).read())
env = vf.load_environment("medcalc_maintained.harnesses.verifiers_env", revision="v2.0", config="mini")
by_prompt = {r["prompt"][-1]["content"]: str(r["info"]["Row Number"]) for r in env.get_eval_dataset()}
def reply(request):
    body = json.loads(request.content)
    return httpx.Response(200, json={
        "id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": table[by_prompt[body["messages"][-1]["content"]]]}}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
client = openai.AsyncOpenAI(api_key="none", base_url="http://table.invalid/v1",
                            http_client=httpx.AsyncClient(transport=httpx.MockTransport(reply)))
res = env.evaluate_sync(client=client, model="table", max_concurrent=32, save_results=True,
                        results_path=Path(args["out"]))
print(json.dumps({"acc": res["metadata"]["avg_metrics"]["correct"], "n": len(res["outputs"])}))
"""


def test_verifiers_results(project, hub, table, tmp_path):
    pytest.importorskip("verifiers")
    (tmp_path / "table.json").write_text(json.dumps(table))
    start = time.perf_counter()
    got = run_script(VERIFIERS, {"table": str(tmp_path / "table.json"), "out": str(tmp_path / "vf")},
                     hub_env(hub, tmp_path), tmp_path)
    TIMES["verifiers run"] = time.perf_counter() - start
    text, rep, out = regrade(project, str(tmp_path / "vf"))
    check_reproduced(text, rep, "verifiers correct", round(got["acc"] * got["n"]), got["n"])
    same_as_evaluate(project, out, {int(u): o for u, o in table.items()}, ["ours"])
    # the reward too: every row's recorded reward is grading/reward.py's score at the run's lam
    (run,) = {p.parent for p in (tmp_path / "vf").rglob("results.jsonl")}
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert {r["reward"] for r in records} == {0.0, 0.1, 1.0}, "the table gives wrong, parsable-wrong and right answers"
    # (the notes as evaluation.json records them: the console wraps a long path anywhere)
    (note,) = [n for n in json.loads((out / "evaluation.json").read_text())["notes"] if "verifiers reward" in n]
    assert note.startswith(f"{run.name}: verifiers reward (avg_reward") and note.endswith(
        f"reproduced exactly (grading/reward.py score, lam 0.1, on the {got['n']} rows' recorded labels)"), note
    # a reward the rule does not give is named by its line; a run without lam says so
    records[4]["reward"] = 0.5
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    meta = json.loads((run / "metadata.json").read_text())
    for name in ("tampered", "no-lam"):
        if name == "no-lam":
            del meta["env_args"]["lam"]
            (run / "metadata.json").write_text(json.dumps(meta))
        r = e2e.cli(project, "regrade", str(run), "--out", str(tmp_path / name))
        assert r.exit_code == 0, r.output
        (note,) = [n for n in json.loads((tmp_path / name / "evaluation.json").read_text())["notes"]
                   if "verifiers reward" in n]
        if name == "tampered":
            assert "NOT reproduced (lam 0.1): " in note and "results.jsonl, line 5: recorded 0.5, scored" in note, note
        else:
            assert note.endswith("not reproduced: metadata.json records no env_args lam (the reward's weight of a "
                                 "parsable wrong answer)"), note


HELM_CLIENT = r'''
"""A HELM client answering each prompt from a table (instance input text -> output), and HELM's own
MedCalc-Bench scenario reading upstream's rows from a local CSV instead of the Hub."""
import csv, json
from helm.benchmark.scenarios.medcalc_bench_scenario import MedCalcBenchScenario
from helm.benchmark.scenarios.scenario import TEST_SPLIT
from helm.clients.client import CachingClient
from helm.common.cache import CacheConfig
from helm.common.request import GeneratedOutput, Request, RequestResult, Token


class TableClient(CachingClient):
    def __init__(self, table: str, cache_config: CacheConfig):
        super().__init__(cache_config=cache_config)
        with open(table) as fh:
            self.table = json.load(fh)

    def make_request(self, request: Request) -> RequestResult:
        hits = {out for key, out in self.table.items() if key in request.prompt}
        assert len(hits) == 1, request.prompt[:300]
        text = hits.pop()
        return RequestResult(success=True, cached=False, request_time=0.0, embedding=[],
                             completions=[GeneratedOutput(text=text, logprob=0.0, tokens=[Token(text=text, logprob=0.0)])])


class LocalMedCalcBench(MedCalcBenchScenario):
    def __init__(self, csv_path: str):
        super().__init__()
        self.csv_path = csv_path

    def get_instances(self, output_path: str) -> list:
        with open(self.csv_path, newline="", encoding="utf-8") as fh:
            return self.process_csv(list(csv.DictReader(fh)), TEST_SPLIT)
'''

HELM = r"""
import json, sys, tempfile
from helm.benchmark.adaptation.adapter_spec import AdapterSpec
from helm.benchmark.config_registry import register_builtin_configs_from_helm_package
from helm.benchmark.executor import ExecutionSpec
from helm.benchmark.metrics.metric import MetricSpec
from helm.benchmark.model_deployment_registry import ClientSpec, ModelDeployment, register_model_deployment
from helm.benchmark.model_metadata_registry import ModelMetadata, register_model_metadata
from helm.benchmark.run_spec import RunSpec
from helm.benchmark.runner import Runner
from helm.benchmark.scenarios.scenario import ScenarioSpec, create_scenario
from helm.common.authentication import Authentication

args = json.loads(open(sys.argv[1]).read())
register_builtin_configs_from_helm_package()
register_model_metadata(ModelMetadata(name="table/model", creator_organization_name="test", display_name="table",
                                      description="answers from a table", access="open", release_date=None,
                                      tags=["TEXT_MODEL_TAG"]))
out = {}
for run in args["runs"]:
    scenario = ScenarioSpec(class_name=run["scenario"], args=run["args"])
    # the table by each instance's input text, as the instances the runner will make
    table = {i.input.text: run["answers"][str(i.id).removeprefix("uid")]
             for i in create_scenario(scenario).get_instances(tempfile.mkdtemp())}
    path = f"{run['name']}-table.json"
    json.dump(table, open(path, "w"))
    deployment = f"table/{run['name']}"
    register_model_deployment(ModelDeployment(name=deployment, model_name="table/model", tokenizer_name="simple/tokenizer1",
                                              max_sequence_length=1_000_000, client_spec=ClientSpec(
                                                  class_name="answer_table_client.TableClient", args={"table": path})))
    adapter = AdapterSpec(method="generation", model="table/model", model_deployment=deployment, max_train_instances=0,
                          max_tokens=512, temperature=0.0, num_outputs=1, stop_sequences=[])
    spec = RunSpec(name=run["name"], scenario_spec=scenario, adapter_spec=adapter,
                   metric_specs=[MetricSpec(class_name=run["metric"], args=run["metric_args"])])
    Runner(ExecutionSpec(url=None, auth=Authentication(""), local_path=args["local"], parallelism=1),
           output_path=args["out"], suite="regrade", skip_instances=False, cache_instances=False,
           cache_instances_only=False, skip_completed_runs=False, exit_on_error=True).run_one(spec)
    out[run["name"]] = f"{args['out']}/runs/regrade/{spec.name}"
print(json.dumps(out))
"""


def test_helm_run_directories(project, hub, table, tmp_path, v1_test_csv):
    if not HELM_PYTHON.exists():
        pytest.skip(f"{HELM_PYTHON.parent.parent} is absent: build it with `make harness-env H=helm`")
    import pandas as pd

    up = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)
    # HELM's own scenario on upstream's rows: its metric grades the whole stripped completion, so the tagged
    # right answers (uid % 4 == 1) are wrong there
    first: dict[tuple[str, str], str] = {}  # one answer per prompt (rows with the same note and question)
    own = {u: first.setdefault((note, q), [gt, f"<answer>{gt}</answer>", WRONG, "N/A"][int(u) % 4])
           for u, gt, note, q in zip(up["Row Number"], up["Ground Truth Answer"], up["Patient Note"], up["Question"])}
    (tmp_path / "answer_table_client.py").write_text(HELM_CLIENT)
    runs = [{"name": "ours", "scenario": "medcalc_maintained.harnesses.helm_scenario.MedCalcMaintainedScenario",
             "args": {"dataset_path": "org/medcalc-maintained", "revision": "v2.0", "config": "mini"},
             "metric": "medcalc_maintained.harnesses.helm_scenario.MedCalcMaintainedMetric", "metric_args": {"lam": 0.1},
             "answers": table},
            {"name": "helm_own", "scenario": "answer_table_client.LocalMedCalcBench", "args": {"csv_path": str(v1_test_csv)},
             "metric": "helm.benchmark.metrics.medcalc_bench_metrics.MedCalcBenchMetric", "metric_args": {},
             "answers": own}]
    start = time.perf_counter()
    dirs = run_script(HELM, {"runs": runs, "local": str(tmp_path / "prod_env"), "out": str(tmp_path / "helm")},
                      hub_env(hub, tmp_path), tmp_path, python=HELM_PYTHON)
    TIMES["helm runs"] = time.perf_counter() - start
    for name, stat, outputs, n in (("ours", "medcalc_correct", table, 519),
                                   ("helm_own", "medcalc_bench_accuracy", own, 1047)):
        run = Path(dirs[name])
        (mean,) = [s["mean"] for s in json.loads((run / "stats.json").read_text())
                   if s["name"]["name"] == stat and s["name"]["split"] == "test" and "perturbation" not in s["name"]]
        text, rep, out = regrade(project, str(run))
        check_reproduced(text, rep, f"HELM {stat}", round(mean * n), n)
        graders = ["ours"] if name == "ours" else ["ours", "helm"]
        assert rep["graders"] == graders
        same_as_evaluate(project, out, {int(u): o for u, o in outputs.items()}, graders)
    # HELM's own metric grades the whole completion (no credit for a tagged right answer), while the re-score
    # under grader helm extracts the answer first, and names HELM's category defect
    assert "exactly (rule 'helm' on the whole completion" in text
    assert re.search(r"grader helm, v1\.0\.0: HELM category defect: \d+ of 1047 scored rows", text)


def test_report_times():
    """Print the measured wall times (run after the tests above, in file order)."""
    for k, v in TIMES.items():
        print(f"{k}: {v:.1f}s")
    print(f"python {sys.version.split()[0]}")
