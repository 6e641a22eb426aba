"""Secrets never printed: with fake secrets in the environment, a local Gemini server that echoes the
request headers (API key included) into its 400/429/500/503 error bodies makes `audit` and
`relabel` (online and --batch) fail, and the secret values appear nowhere in the output, the call
cache, the outputs or the run records; the same for `release publish` to an echoing Hub endpoint.

Slow tier: local servers (CONTRIBUTING.md's marker table); the tests that need none (redact, log records,
warnings, batch-job names, the Hub's download cache) are in tests/verifiers/test_llm_secrets.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from tests.support.fake_gemini import FakeGemini, FaultPlan
from tests.support.llm_helpers import unique_prompt_rows
from tests.verifiers.test_llm_secrets import SECRETS, files_leaking, leaks

runner = CliRunner()


@pytest.fixture
def secret_env(project, monkeypatch):
    """GEMINI_API_KEY (the key the client sends) and HF_TOKEN set to fake secrets; retries kept
    small so that the failures come fast."""
    monkeypatch.setenv("GEMINI_API_KEY", SECRETS["GEMINI_API_KEY"])
    monkeypatch.setenv("HF_TOKEN", SECRETS["HF_TOKEN"])
    for stage in ("audit", "relabel"):
        project.set(stage, engine={"retries": 1, "backoff_initial_s": 0.01, "backoff_max_s": 0.02},
                    batch={"rounds": 2, "poll_interval_s": 0.02})
    return project


def run_stage(project, stage: str, rows_path: Path, *extra: str):
    return runner.invoke(app, [stage, "--backend", "gemini", "--instances", str(rows_path),
                               "--out", str(project.root / "out"), "--runs", "1", *extra], catch_exceptions=False)


def assert_masked(result, project, srv) -> None:
    out = result.output + (getattr(result, "stderr", "") or "")
    assert result.exit_code != 0, out
    # the server did echo the key in its error bodies, and what the user saw was that body, masked
    assert srv.stats.echoed and any(SECRETS["GEMINI_API_KEY"] in m for m in srv.stats.echoed)
    assert "request headers" in out and "***" in out, out
    assert leaks(out) == [], out
    assert files_leaking(project.root) == []


@pytest.mark.parametrize("status", [400, 429, 500, 503])
@pytest.mark.parametrize("stage", ["audit", "relabel"])
@pytest.mark.parametrize("batch", [False, True], ids=["online", "batch"])
def test_echoed_key_is_masked_on_every_error_path(secret_env, instances, tmp_path, monkeypatch, stage, status, batch):
    rows = unique_prompt_rows(instances, 2)
    path = tmp_path / "rows.parquet"
    rows.to_parquet(path, index=False)
    with FakeGemini(lambda req: "<answer>1</answer>", echo_headers=True, fail_status=status) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = run_stage(secret_env, stage, path, *(["--batch"] if batch else []))
    assert_masked(r, secret_env, srv)
    assert not (secret_env.root / "out" / "run.json").exists()


@pytest.mark.parametrize("stage", ["audit", "relabel"])
def test_echoed_key_in_batch_item_errors_is_masked(secret_env, instances, tmp_path, monkeypatch, stage):
    rows = unique_prompt_rows(instances, 2)
    path = tmp_path / "rows.parquet"
    rows.to_parquet(path, index=False)
    always = FaultPlan(rate=1.0, kinds=("500",), max_consecutive=100)
    with FakeGemini(lambda req: "<answer>1</answer>", echo_headers=True, batch_faults=always) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = run_stage(secret_env, stage, path, "--batch")
    assert_masked(r, secret_env, srv)


@pytest.mark.parametrize("batch", [False, True], ids=["online", "batch"])
def test_key_echoed_in_successful_replies_is_in_no_output(secret_env, instances, tmp_path, monkeypatch, batch):
    """HTTP 200 replies whose modelVersion and text quote the request headers (the API key among
    them): both stages succeed, and the key is in none of the files they write (tables, run.json,
    call cache) nor in what they print."""
    rows = unique_prompt_rows(instances, 2)
    path = tmp_path / "rows.parquet"
    rows.to_parquet(path, index=False)
    replies = {"audit": "<critique>Fine.</critique><verdict>yes</verdict>", "relabel": "<answer>1</answer>"}
    extra = ["--batch"] if batch else []
    for stage, reply in replies.items():
        with FakeGemini(lambda req, reply=reply: reply, echo_headers_ok=True) as srv:
            monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
            r = runner.invoke(app, [stage, "--backend", "gemini", "--instances", str(path), "--out",
                                    str(secret_env.root / stage), "--runs", "1", *extra], catch_exceptions=False)
        out = r.output + (getattr(r, "stderr", "") or "")
        assert r.exit_code == 0, out
        assert srv.stats.echoed and all(SECRETS["GEMINI_API_KEY"] in m for m in srv.stats.echoed)
        assert leaks(out) == [], out
        table = pd.read_parquet(secret_env.root / stage / ("verdicts.parquet" if stage == "audit" else "votes.parquet"))
        assert len(table) == 2 and table["model_version"].str.contains("request headers", regex=False).all()
        assert table["model_version"].str.contains("***", regex=False).all()
    produced = [p for p in secret_env.root.rglob("*") if p.is_file() and p.suffix in (".parquet", ".json")]
    assert {p.name for p in produced} >= {"verdicts.parquet", "flags.parquet", "votes.parquet", "labels.parquet",
                                          "run.json"}
    assert len([p for p in produced if p.relative_to(secret_env.root).parts[0] == "cache"]) == 4  # 2 calls x 2 stages
    assert files_leaking(secret_env.root) == []


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
