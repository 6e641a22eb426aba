"""Secrets never printed: with fake secrets in the environment, a local Gemini server that echoes the
request headers (API key included) into its 400/429/500/503 error bodies makes `audit` and
`relabel` (online and --batch) fail, and the secret values appear nowhere in the output, the call
cache, the outputs or the run records; the same for `release publish` to an echoing Hub endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.redact import redact
from tests.support.fake_gemini import FakeGemini, FaultPlan
from tests.support.llm_helpers import unique_prompt_rows

SECRETS = {"GEMINI_API_KEY": "AIzaFAKE-gemini-secret-0123456789", "GOOGLE_API_KEY": "AIzaFAKE-google-secret-9876543210",
           "HF_TOKEN": "hf_FAKEhubtokensecret0123456789"}
runner = CliRunner()


def leaks(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def files_leaking(root: Path) -> list[str]:
    bad = []
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            bad += [f"{p.relative_to(root)}: {n}" for n, v in SECRETS.items() if v.encode() in data]
    return bad


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


@pytest.mark.parametrize("text", [
    "x-goog-api-key: AIzaOTHERvalue123", '{"Authorization": "Bearer abc.def-123"}', "authorization=Basic dXNlcjpw",
    "GET /v1/models?key=AIzaQUERYvalue&alt=json", "https://user:ghp_tokenvalue@example.org/repo.git",
    "model AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q (echo)", "token hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567 sent",
])
def test_redact_masks_header_values_query_keys_and_url_credentials(text):
    masked = redact(text)
    assert "***" in masked
    assert not any(v in masked for v in ("AIzaOTHERvalue123", "abc.def-123", "dXNlcjpw", "AIzaQUERYvalue", "ghp_tokenvalue",
                                         "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"))


def test_redact_masks_environment_secrets_read_at_call_time(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRETS["HF_TOKEN"])
    assert redact(f"error for {SECRETS['HF_TOKEN']}!") == "error for ***!"
    monkeypatch.setenv("HF_TOKEN", "abc")  # too short to be a secret worth masking: words stay readable
    assert redact("abc def") == "abc def"
    monkeypatch.delenv("HF_TOKEN")
    assert redact(f"error for {SECRETS['HF_TOKEN']}!") == f"error for {SECRETS['HF_TOKEN']}!"


def test_log_records_of_any_logger_are_masked(monkeypatch):
    import io
    import logging

    from medcalc_maintained.core.redact import install_log_filter

    install_log_filter()
    monkeypatch.setenv("GEMINI_API_KEY", SECRETS["GEMINI_API_KEY"])
    stream = io.StringIO()
    log = logging.getLogger("some.library")
    handler = logging.StreamHandler(stream)  # a library's own handler, added after the filter
    log.addHandler(handler)
    try:
        log.warning("retrying %s with headers %s", "call", {"x-goog-api-key": "AIzaOTHERvalue123"})
        try:
            raise RuntimeError(f"echo {SECRETS['GEMINI_API_KEY']}")
        except RuntimeError:
            log.exception("failed")
    finally:
        log.removeHandler(handler)
    text = stream.getvalue()
    assert "retrying call" in text and "***" in text and "RuntimeError: echo ***" in text
    assert "AIzaOTHERvalue123" not in text and leaks(text) == []


# -- issue 37: warnings, batch-job file names and the Hub's download cache -------------------------

def test_warnings_are_masked_as_they_are_formatted(monkeypatch):
    """A library's warning (google-genai warns with an unknown finishReason, which a proxy may fill
    with the request's headers) is masked on its way to stderr or to logging."""
    import warnings

    from medcalc_maintained.core.redact import install_log_filter

    install_log_filter()
    monkeypatch.setenv("GEMINI_API_KEY", SECRETS["GEMINI_API_KEY"])
    text = warnings.formatwarning(f"STOP {{'x-goog-api-key': '{SECRETS['GEMINI_API_KEY']}'}} is not a valid "
                                  "FinishReason", UserWarning, "_common.py", 707)
    assert "is not a valid FinishReason" in text and "***" in text and leaks(text) == [], text


def test_a_batch_job_name_echoing_the_key_never_names_a_file(tmp_path, monkeypatch):
    from medcalc_maintained.verifiers.cache import Cache

    monkeypatch.setenv("GEMINI_API_KEY", SECRETS["GEMINI_API_KEY"])
    cache = Cache(tmp_path / "cache")
    name = f"batches/abc?key={SECRETS['GEMINI_API_KEY']}&x-goog-api-key={SECRETS['GEMINI_API_KEY']}" + "z" * 300
    written = cache.save_job(name, {"name": name, "stage": "audit"})
    assert leaks(written.name) == [] and SECRETS["GEMINI_API_KEY"] not in str(written), written
    assert len(written.name) < 120 and files_leaking(tmp_path) == []
    assert [j["stage"] for j in cache.load_jobs()] == ["audit"]
    cache.drop_job(name)
    assert list(cache.jobs_dir().iterdir()) == []


def test_a_hub_manifest_is_read_from_a_private_cache_removed_at_once(tmp_path, monkeypatch):
    """What the Hub answers for a published manifest (it may echo the token) is downloaded into a
    directory of its own and removed, never into the shared HF_HOME cache."""
    from medcalc_maintained.release.publish import Target, _hub_file

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    seen = []

    class Api:
        def hf_hub_download(self, repo, path, *, repo_type, revision, cache_dir=None):
            assert cache_dir is not None and not Path(cache_dir).is_relative_to(tmp_path / "hf-home")
            seen.append(Path(cache_dir))
            local = Path(cache_dir) / "blobs" / "x"
            local.parent.mkdir(parents=True)
            local.write_text(json.dumps({"echo": SECRETS["HF_TOKEN"]}))
            return str(local)

    data = _hub_file(Api(), Target("hf", "org/name"), "v2.0.0", "manifest.json")
    assert SECRETS["HF_TOKEN"].encode() in data  # read in memory...
    assert seen and not seen[0].exists()  # ...and its download removed
    assert not (tmp_path / "hf-home").exists()
