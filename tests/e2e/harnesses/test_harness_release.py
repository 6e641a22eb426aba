"""The harness adapters on a local release directory (what `release build` writes; offline), and the
one prompt and decoding every adapter hands its harness.

The release here is a small one made in the test: a card with front matter (``version``,
``configs``), ``manifest.json`` with the sha256 of each data file, and parquet configs holding real
upstream rows. The harness packages run for real (lm-eval's task loading and prompt building, Inspect
with its ``mockllm`` model, verifiers' environment); each test skips when its extra is missing.

The end-to-end tests of this subject; the fast ones are in tests/harnesses/test_harness_release.py."""

from __future__ import annotations

import http.server
import json
import signal
import threading

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.harnesses.common import MAX_NEW_TOKENS, prompt_messages
from medcalc_maintained.harnesses.lm_eval_task import write_task_dir
from tests.harnesses import test_harness_release as fast_tests
from tests.harnesses.test_harness_release import make_release


@pytest.fixture(autouse=True)
def process_signals():
    """verifiers' Environment installs SIGTERM and SIGINT handlers in the process that builds one; they
    stay out of the tests that run after these in the same worker."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)

# shared with the fast tests
release = fast_tests.release
upstream_rows = fast_tests.upstream_rows


class Recorder:
    """What lm-eval hands a model: the chat history of each prompt and each request's arguments."""

    def __init__(self):
        self.histories, self.requests = [], []


def lm_eval_model(recorder: Recorder):
    from lm_eval.api.model import LM

    class RecordingLM(LM):
        tokenizer_name = "recording"

        def apply_chat_template(self, chat_history, add_generation_prompt=True):
            recorder.histories.append(chat_history)
            return json.dumps(chat_history)

        def generate_until(self, requests, disable_tqdm=False):
            recorder.requests += [r.arguments for r in requests]
            return [f"<answer>{r.doc['Ground Truth Answer']}</answer>" for r in requests]

        def loglikelihood(self, requests, disable_tqdm=False):
            raise NotImplementedError

        def loglikelihood_rolling(self, requests, disable_tqdm=False):
            raise NotImplementedError

    return RecordingLM()


# imports lm-eval (~10 s)
def test_lm_eval_sends_our_system_and_user_messages_only_through_a_chat_template(release, tmp_path, upstream_rows):
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.tasks import TaskManager

    write_task_dir(tmp_path / "tasks", release=release)
    manager = TaskManager(include_path=str(tmp_path / "tasks"), include_defaults=False)
    rec = Recorder()
    with pytest.raises(ValueError, match="run lm_eval with --apply_chat_template"):
        lm_eval.simple_evaluate(model=lm_eval_model(rec), tasks=["medcalc_maintained_mini"], task_manager=manager)
    res = lm_eval.simple_evaluate(model=lm_eval_model(rec), tasks=["medcalc_maintained_mini"], task_manager=manager,
                                  apply_chat_template=True)
    assert res["results"]["medcalc_maintained_mini"]["acc,none"] == 1.0
    expected = [prompt_messages(r) for r in upstream_rows.head(2).to_dict("records")]
    assert sorted(rec.histories, key=json.dumps) == sorted(expected, key=json.dumps)
    assert all(args[1] == {"until": [], "do_sample": False, "temperature": 0.0, "max_gen_toks": MAX_NEW_TOKENS}
               for args in rec.requests)
    # a release rebuilt under the task directory is refused at load time, naming both versions
    make_release(release, upstream_rows, version="2.3.0")
    stale = TaskManager(include_path=str(tmp_path / "tasks"), include_defaults=False)
    with pytest.raises(DataError, match=r"now holds release 2.3.0, the task was written for 2.2.0"):
        lm_eval.simple_evaluate(model=lm_eval_model(rec), tasks=["medcalc_maintained_mini"], task_manager=stale,
                                apply_chat_template=True)


# imports inspect-ai and verifiers (~15 s)
def test_inspect_and_verifiers_send_the_same_messages_and_decoding(release, upstream_rows, tmp_path):
    pytest.importorskip("inspect_ai")
    pytest.importorskip("verifiers")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    from medcalc_maintained.harnesses.inspect_task import medcalc_maintained
    from medcalc_maintained.harnesses.verifiers_env import load_environment

    seen = []

    def answer(messages, tools, tool_choice, config):
        seen.append(([{"role": m.role, "content": m.text} for m in messages], config.temperature, config.max_tokens))
        output = ModelOutput.from_content(model="mockllm", content="<answer>0</answer>")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    (log,) = inspect_eval(medcalc_maintained(release=str(release), config="mini"),
                          model=get_model("mockllm/model", custom_outputs=answer), log_dir=str(tmp_path / "logs"),
                          display="none")
    assert log.status == "success" and log.eval.metadata["release"] == "2.2.0"
    expected = [prompt_messages(r) for r in upstream_rows.head(2).to_dict("records")]
    assert sorted((m for m, _, _ in seen), key=json.dumps) == sorted(expected, key=json.dumps)
    assert {(t, n) for _, t, n in seen} == {(0.0, MAX_NEW_TOKENS)}
    env = load_environment(release=str(release), config="mini")
    assert [r["prompt"] for r in env.get_eval_dataset()] == expected
    assert env.sampling_args["temperature"] == 0.0 and env.sampling_args["max_tokens"] == MAX_NEW_TOKENS
    # env_args load the same environment again (verifiers' environment server does, in another process)
    assert env.env_args == {"release": str(release.resolve()), "config": "mini", "lam": 0.1, "release_version": "2.2.0"}
    again = load_environment(**env.env_args)
    assert [r["prompt"] for r in again.get_eval_dataset()] == expected
    with pytest.raises(ValueError, match="holds release 2.2.0, not 2.1.0"):
        load_environment(**{**env.env_args, "release_version": "2.1.0"})


class _OpenAIChat(http.server.BaseHTTPRequestHandler):
    """``POST /v1/chat/completions`` of the OpenAI wire protocol: records each request body and answers
    ``<answer>0</answer>``."""

    bodies: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        reply = json.dumps({"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": "<answer>0</answer>"}}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def test_verifiers_keeps_the_shared_decoding_when_a_caller_passes_none(release, upstream_rows):
    """vf-eval without -t/-T hands evaluate {"max_tokens": None}; the requests that reach an OpenAI server
    still carry temperature 0 and the shared budget, and our two messages."""
    pytest.importorskip("verifiers")
    import verifiers as vf
    from openai import AsyncOpenAI

    from medcalc_maintained.harnesses.verifiers_env import ENV_ID

    _OpenAIChat.bodies = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OpenAIChat)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = vf.load_environment(ENV_ID, release=str(release), config="mini")  # as vf-eval finds it by its id
        client = AsyncOpenAI(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", api_key="local")
        out = env.evaluate_sync(client=client, model="m", sampling_args={"max_tokens": None}, num_examples=2)
    finally:
        server.shutdown()
        server.server_close()
    bodies = _OpenAIChat.bodies
    assert len(bodies) == 2
    budgets = {b.get("max_completion_tokens", b.get("max_tokens")) for b in bodies}
    assert budgets == {MAX_NEW_TOKENS} and {b["temperature"] for b in bodies} == {0.0}, bodies
    expected = [prompt_messages(r) for r in upstream_rows.head(2).to_dict("records")]
    assert sorted((b["messages"] for b in bodies), key=json.dumps) == sorted(expected, key=json.dumps)
    # and the run records that decoding, not the caller's None
    recorded = out["metadata"]["sampling_args"]
    assert recorded.get("max_tokens", recorded.get("max_completion_tokens")) == MAX_NEW_TOKENS, recorded
