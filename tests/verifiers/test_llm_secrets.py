"""Secrets never printed, the parts that need no server: `redact` masks header values, query keys, URL
credentials and the environment's secrets; log records and warnings are masked as they are formatted; a
batch job's name never names a file; a Hub manifest is read from a private cache removed at once. The
local Gemini and Hub servers that echo the key are in tests/e2e/verifiers/test_llm_secrets.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medcalc_maintained.core.redact import redact

SECRETS = {"GEMINI_API_KEY": "AIzaFAKE-gemini-secret-0123456789", "GOOGLE_API_KEY": "AIzaFAKE-google-secret-9876543210",
           "HF_TOKEN": "hf_FAKEhubtokensecret0123456789"}


def leaks(text: str) -> list[str]:
    return [name for name, value in SECRETS.items() if value in text]


def files_leaking(root: Path) -> list[str]:
    bad = []
    for p in root.rglob("*"):
        if p.is_file():
            data = p.read_bytes()
            bad += [f"{p.relative_to(root)}: {n}" for n, v in SECRETS.items() if v.encode() in data]
    return bad


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
