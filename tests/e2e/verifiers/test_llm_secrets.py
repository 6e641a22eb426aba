"""Secrets never printed: with fake secrets in the environment, a local Gemini server that echoes the
request headers (API key included) into its 400/429/500/503 error bodies makes `audit` and
`relabel` (online and --batch) fail, and the secret values appear nowhere in the output, the call
cache, the outputs or the run records; the same for `release publish` to an echoing Hub endpoint.

The end-to-end tests of this subject; the fast ones are in tests/verifiers/test_llm_secrets.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.support.fake_gemini import FakeGemini
from tests.support.llm_helpers import unique_prompt_rows
from tests.verifiers import test_llm_secrets as fast_tests
from tests.verifiers.test_llm_secrets import SECRETS, files_leaking, leaks

# shared with the fast tests
secret_env = fast_tests.secret_env


def test_echoed_key_is_masked_in_a_real_process_with_logging(secret_env, instances, tmp_path):
    """The CLI as a process (everything it and its libraries print, logging included), with the key
    in GOOGLE_API_KEY as well: a 400 online, then a 503 with --batch."""
    rows = unique_prompt_rows(instances, 2)
    path = tmp_path / "rows.parquet"
    rows.to_parquet(path, index=False)
    env = {**os.environ, **SECRETS, "PYTHONPATH": os.pathsep.join(sys.path)}
    for status, extra in ((400, []), (503, ["--batch"])):
        with FakeGemini(lambda req: "<answer>1</answer>", echo_headers=True, fail_status=status) as srv:
            env["GOOGLE_GEMINI_BASE_URL"] = srv.url
            proc = subprocess.run([sys.executable, "-m", "medcalc_maintained.cli", "relabel", "--backend", "gemini",
                                   "--instances", str(path), "--out", str(secret_env.root / "out"), "--runs", "1",
                                   *extra], env=env, capture_output=True, text=True, timeout=120)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert any(SECRETS["GOOGLE_API_KEY"] in m for m in srv.stats.echoed)  # the client sent that key
        assert "***" in out and leaks(out) == [], out
    assert files_leaking(secret_env.root) == []


# -- publishing to a Hub endpoint that echoes the request headers ----------------------------
class _EchoHub:
    """Every request is answered with ``status`` and a JSON body quoting its headers."""

    def __init__(self, status: int):
        self.status, self.echoed = status, []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                if n:
                    self.rfile.read(n)
                body = json.dumps({"error": f"proxy error; request headers: {dict(self.headers.items())}"}).encode()
                hub.echoed.append(body.decode())
                self.send_response(hub.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_port}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_publish_to_an_echoing_hub_never_prints_the_token(project_root, tmp_path):
    release = tmp_path / "release"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}, **SECRETS,
           "MEDCALC_ROOT": str(project_root), "PYTHONPATH": os.pathsep.join(sys.path),
           "HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    cmd = [sys.executable, "-m", "medcalc_maintained.cli"]
    built = subprocess.run([*cmd, "release", "build", "--out", str(release), "--version", "1.0.0"], env=env,
                           cwd=project_root, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    for status in (400, 404, 429, 500, 503):
        hub = _EchoHub(status)
        try:
            proc = subprocess.run([*cmd, "release", "publish", "--release-dir", str(release), "--target",
                                   "hf://medcalc/secrets-test"], env={**env, "HF_ENDPOINT": hub.url},
                                  cwd=project_root, capture_output=True, text=True, timeout=300)
        finally:
            hub.stop()
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0, out
        assert any(SECRETS["HF_TOKEN"] in b for b in hub.echoed), (status, hub.echoed[:1])
        assert leaks(out) == [], out
    assert files_leaking(project_root) == [] and files_leaking(tmp_path) == []


# the CLI in a new process
def test_a_finish_reason_echoing_the_key_is_masked_in_the_warning(secret_env, instances, tmp_path):
    """HTTP 200 replies whose finishReason quotes the request headers: google-genai warns with the
    value on stderr; the key is in neither stream nor any file (before: printed on stderr)."""
    rows = unique_prompt_rows(instances, 2)
    path = tmp_path / "rows.parquet"
    rows.to_parquet(path, index=False)
    env = {**os.environ, **SECRETS, "PYTHONPATH": os.pathsep.join(sys.path)}
    with FakeGemini(lambda req: "<answer>1</answer>", echo_headers_finish=True) as srv:
        env["GOOGLE_GEMINI_BASE_URL"] = srv.url
        proc = subprocess.run([sys.executable, "-m", "medcalc_maintained.cli", "relabel", "--backend", "gemini",
                               "--instances", str(path), "--out", str(secret_env.root / "out"), "--runs", "1"],
                              env=env, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    assert srv.stats.echoed and any(SECRETS["GOOGLE_API_KEY"] in m or SECRETS["GEMINI_API_KEY"] in m
                                    for m in srv.stats.echoed)
    assert "not a valid FinishReason" in out and "***" in out, out  # the warning was printed, masked
    assert leaks(out) == [], out
    assert files_leaking(secret_env.root) == []
