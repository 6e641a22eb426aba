"""The gemini backend: the real google-genai client against the local server of fake_gemini.py
(scripted answers, injected faults), through the CLI and the engine. Slow tier: a local Gemini server
(CONTRIBUTING.md's marker table; the offline backend's tests are in tests/verifiers/)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time

import pandas as pd

from medcalc_maintained.verifiers.engine import RateLimiter, backoff_delay
from medcalc_maintained.verifiers.settings import EngineSettings
from tests.support.fake_gemini import FakeGemini, FaultPlan, request_texts
from tests.support.llm_helpers import (
    SEED,
    Script,
    audit,
    labels,
    log_counts,
    relabel,
    rows_file,
    unique_prompt_rows,
)
from tests.support.paths import ROOT

PROMPT_DIR = ROOT / "src" / "medcalc_maintained" / "prompts"


def prompt_file(name: str) -> str:
    return (PROMPT_DIR / f"{name}.txt").read_text(encoding="utf-8")


def file_sha256(name: str) -> str:
    return hashlib.sha256((PROMPT_DIR / f"{name}.txt").read_bytes()).hexdigest()


def test_client_honours_base_url_from_env_and_from_params(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 2)
    path = rows_file(tmp_path, rows)
    with FakeGemini(lambda req: "<answer>3</answer>") as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = relabel(project, path, "--runs", "1")
        assert r.exit_code == 0, r.output
        assert srv.stats.paths == [("POST", "/v1/models/gemini-test:generateContent")] * 2
    with FakeGemini(lambda req: "<answer>3</answer>") as srv2:
        monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL")
        project.set("relabel", gemini={"base_url": srv2.url})
        r = relabel(project, path, "--runs", "2", "--cache-dir", str(tmp_path / "other-cache"))
        assert r.exit_code == 0, r.output
        assert sum(srv2.stats.successes.values()) == 4


def test_relabel_supermajority_through_the_real_client(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 3)
    uids = rows["uid"].tolist()
    script = Script(rows, "relabel", {
        uids[0]: [f"Score: 12.\n<answer>{a}</answer>" for a in ("12", "12", "12", "12", "13")],
        uids[1]: [f"<answer>{a}</answer>" for a in ("12", "12", "13", "13", "N/A")],
        uids[2]: ["The note lacks the creatinine.\n<answer>unknown</answer>"] * 5,
    })
    with FakeGemini(script) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = relabel(project, rows_file(tmp_path, rows))
        assert r.exit_code == 0, r.output
    lab = labels(project)
    assert lab.loc[uids[0], ["status", "label", "votes", "runs", "required"]].tolist() == ["labeled", "12", 4, 5, 4]
    assert lab.loc[uids[1], "status"] == "deferred" and lab.loc[uids[1], "votes"] == 2
    assert lab.loc[uids[2], ["status", "label", "label_kind"]].tolist() == ["labeled", "N/A", "abstain"]
    assert (lab["backend"] == "gemini").all() and (lab["model"] == "gemini-test").all()
    # what was sent: the note and question only, the params' tools, thinking budget, temperature, seed + run
    assert len(script.requests) == 15
    by_uid = rows.set_index("uid")
    for req in script.requests:
        uid, run = script.uid_run(req)
        system, user = request_texts(req)
        # the system prompt is the versioned file; the user text quotes the row's note and question
        assert system == prompt_file("relabel_system").strip()
        assert by_uid.loc[uid, "Patient Note"].strip() in user and by_uid.loc[uid, "Question"].strip() in user
        body = json.dumps(req)
        for col in ("Ground Truth Explanation", "Relevant Entities"):
            assert json.dumps(by_uid.loc[uid, col])[1:-1] not in body
        assert req["tools"] == [{"googleSearch": {}}, {"codeExecution": {}}]
        gc = req["generationConfig"]
        assert gc["temperature"] == 1.0 and gc["seed"] == SEED + run
        assert (gc["thinkingConfig"].get("thinkingBudget") or gc["thinkingConfig"].get("thinking_budget")) == 256
    assert sorted(script.uid_run(q)[1] for q in script.requests) == [0] * 3 + [1] * 3 + [2] * 3 + [3] * 3 + [4] * 3
    votes = pd.read_parquet(project.root / "out" / "votes.parquet")
    assert len(votes) == 15 and (votes["input_tokens"] > 0).all() and (votes["search_queries"] == 1).all()
    log = log_counts(r.output)
    assert log["made"] == 15 and log["cost_cents"] > 0
    info = json.loads((project.root / "out" / "run.json").read_text())
    assert info["prompts_sha256"] == {n: file_sha256(n) for n in ("relabel_system", "relabel_user")}
    assert info["gemini"] == {"model": "gemini-test", "thinking_budget": 256, "temperature": 1.0,
                              "tools": ["google_search", "code_execution"], "seed": SEED}


def test_audit_flags_four_of_five(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 3, start=10)
    uids = rows["uid"].tolist()
    v = {"y": "<critique>Inputs and arithmetic check out.</critique><verdict>yes</verdict>",
         "n": "<critique>Creatinine was read from the wrong day.</critique><verdict>no</verdict>"}
    script = Script(rows, "audit", {uids[0]: [v[c] for c in "nnnny"], uids[1]: [v[c] for c in "nnnyy"],
                                    uids[2]: [v[c] for c in "yyyyy"]})
    with FakeGemini(script) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = audit(project, rows_file(tmp_path, rows))
        assert r.exit_code == 0, r.output
    f = pd.read_parquet(project.root / "out" / "flags.parquet").set_index("uid")
    assert f["flagged"].tolist() == [True, False, False]
    assert f["votes_wrong"].tolist() == [4, 3, 0] and (f["required"] == 4).all() and (f["runs"] == 5).all()
    assert f.loc[uids[0], "reason"] == "Creatinine was read from the wrong day."
    verdicts = pd.read_parquet(project.root / "out" / "verdicts.parquet")
    assert len(verdicts) == 15 and set(verdicts.columns) >= {"uid", "backend", "model", "run", "verdict", "critique",
                                                             "prompt_sha256", "input_tokens", "output_tokens"}
    assert not {"latency_s", "cached_at", "source"} & set(verdicts.columns)  # outputs carry no clock
    # the audit prompt carries the label and its derivation, and only Google Search as a tool
    req = script.requests[0]
    uid, _ = script.uid_run(req)
    row = rows.set_index("uid").loc[uid]
    assert row["Ground Truth Explanation"].strip() in request_texts(req)[1]
    assert req["tools"] == [{"googleSearch": {}}]


def test_malformed_reply_is_one_unparseable_vote_after_bounded_retries(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 1, start=5)
    uid = int(rows["uid"][0])
    script = Script(rows, "relabel", {uid: ["I would say twelve."] + ["<answer>12</answer>"] * 4})
    with FakeGemini(script) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = relabel(project, rows_file(tmp_path, rows))
        assert r.exit_code == 0, r.output
        # run 0: 1 attempt + malformed_retries (2) = 3, then one unparseable vote
        assert sorted(srv.stats.attempts.values()) == [1, 1, 1, 1, 3]
        r = relabel(project, rows_file(tmp_path, rows))  # the unparseable vote is cached too
        assert r.exit_code == 0 and sum(srv.stats.attempts.values()) == 7
    lab = labels(project)
    assert lab.loc[uid, ["status", "label", "votes"]].tolist() == ["labeled", "12", 4]
    votes = pd.read_parquet(project.root / "out" / "votes.parquet").set_index("run")
    assert pd.isna(votes.loc[0, "answer"]) and votes.loc[0, "answer_kind"] == "invalid"
    assert "malformed" in votes.loc[0, "reply"] and "I would say twelve." in votes.loc[0, "reply"]
    assert votes.loc[0, "attempts"] == 3


def test_rerun_pays_for_nothing_twice(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 4, start=50)
    script = Script(rows, "relabel", {int(u): ["<answer>5</answer>"] * 5 for u in rows["uid"]})
    with FakeGemini(script) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        path = rows_file(tmp_path, rows)
        assert relabel(project, path).exit_code == 0
        first = sum(srv.stats.attempts.values())
        written = {n: (project.root / "out" / n).read_bytes() for n in ("labels.parquet", "votes.parquet", "run.json")}
        r = relabel(project, path)
        assert r.exit_code == 0
        assert sum(srv.stats.attempts.values()) == first == 20
        log = log_counts(r.output)
        assert log["made"] == 0 and log["from_cache"] == 20 and log["cost_cents"] == 0
        # the rerun from the cache writes the same bytes
        assert written == {n: (project.root / "out" / n).read_bytes() for n in written}
        # a dry run now finds everything cached
        r = relabel(project, path, "--dry-run")
        assert re.search(r"already in the cache \(free\)\s*│\s*20\s*│", r.output), r.output
        assert re.search(r"calls to make\s*│\s*0\s*│", r.output), r.output
        # a changed setting (temperature) is a different call
        project.set("relabel", gemini={"temperature": 0.5})
        assert relabel(project, path, "--limit", "1").exit_code == 0
        assert sum(srv.stats.attempts.values()) == 25


def test_persistent_failures_exit_1_write_nothing_and_rerun_resumes(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 3, start=60)
    script = Script(rows, "relabel", {int(u): ["<answer>2</answer>"] * 5 for u in rows["uid"]})
    project.set("relabel", engine={"retries": 2})
    path = rows_file(tmp_path, rows)
    with FakeGemini(script, faults=FaultPlan(rate=0.5, kinds=("503",), seed=3, max_consecutive=10)) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = relabel(project, path)
        assert r.exit_code == 1 and "failed after retries" in r.output and "nothing written" in r.output
        assert not (project.root / "out").exists()
        done_first = set(srv.stats.successes)
        assert 0 < len(done_first) < 15
        srv.faults = FaultPlan()
        r = relabel(project, path)
        assert r.exit_code == 0, r.output
        # the rerun called only what had failed: still one success per (uid, run)
        assert len(srv.stats.successes) == 15 and set(srv.stats.successes.values()) == {1}
    assert (labels(project)["label"] == "2").all()


def test_a_fatal_error_stops_the_run(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 3)
    with FakeGemini(lambda req: "<answer>1</answer>") as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url + "/wrong-prefix")
        t0 = time.monotonic()
        r = relabel(project, rows_file(tmp_path, rows))
        assert r.exit_code == 1 and "404" in r.output and "nothing written" in r.output
        assert time.monotonic() - t0 < 20
        assert sum(srv.stats.successes.values()) == 0
    assert not (project.root / "out").exists()


def test_batch_mode_fills_the_same_cache(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 3, start=70)
    uids = rows["uid"].tolist()
    script = Script(rows, "relabel", {uids[0]: ["<answer>7</answer>"] * 5, uids[1]: ["<answer>N/A</answer>"] * 5,
                                      uids[2]: [f"<answer>{a}</answer>" for a in (1, 2, 3, 4, 5)]})
    project.set("relabel", batch={"max_requests_per_job": 4})
    path = rows_file(tmp_path, rows)
    with FakeGemini(script, batch_faults=FaultPlan(rate=0.3, kinds=("503", "no_tag"), seed=11, max_consecutive=1)) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = relabel(project, path, "--batch")
        assert r.exit_code == 0, r.output
        first_round_jobs = 4  # 15 requests, at most 4 per job
        assert srv.stats.batch_jobs > first_round_jobs  # failed or malformed items went into a second round
        assert sum(srv.stats.faults.values()) > 0
        assert not any(p[1].endswith(":generateContent") for p in srv.stats.paths)
        assert len(srv.stats.successes) == 15 and set(srv.stats.successes.values()) == {1}
        jobs = srv.stats.batch_jobs
        # the online path finds every call in the cache
        r = relabel(project, path)
        assert r.exit_code == 0 and srv.stats.batch_jobs == jobs and sum(srv.stats.successes.values()) == 15
    lab = labels(project)
    assert lab.loc[uids[0], "label"] == "7" and lab.loc[uids[1], "label"] == "N/A"
    assert lab.loc[uids[2], "status"] == "deferred"
    assert not list((project.root / "cache" / "_batch_jobs").glob("*.json"))  # collected jobs are forgotten
    assert log_counts(r.output)["from_cache"] == 15


def test_batch_resumes_a_submitted_job_instead_of_paying_again(project, instances, tmp_path, monkeypatch):
    from medcalc_maintained.project import Project as MedcalcProject
    from medcalc_maintained.stages import relabel as stage
    from medcalc_maintained.verifiers import runner

    rows = unique_prompt_rows(instances, 2, start=80)
    script = Script(rows, "relabel", {int(u): ["<answer>4</answer>"] * 5 for u in rows["uid"]})
    with FakeGemini(script, batch_polls=3) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        plan = stage.plan(MedcalcProject.load(project.root), backend="gemini", instances=rows_file(tmp_path, rows),
                          batch=True)
        backend = plan.backend
        eng = runner.make_engine(backend, plan.settings, cache_dir=plan.cache_dir, validator=stage.validator)
        groups, _ = eng.plan(plan.tasks)

        async def submit_then_die():  # a run killed right after it submitted its job
            await backend.open()
            try:
                await backend._submit(eng, groups, 1)
            finally:
                await backend.close()

        asyncio.run(submit_then_die())
        assert srv.stats.batch_jobs == 1 and len(list((project.root / "cache" / "_batch_jobs").glob("*.json"))) == 1
        r = relabel(project, rows_file(tmp_path, rows), "--batch")
        assert r.exit_code == 0, r.output
        assert srv.stats.batch_jobs == 1  # polled the recorded job, submitted nothing new
    assert (labels(project)["label"] == "4").all()


def test_rate_limiter_and_backoff():
    async def starts(rpm, n):
        lim = RateLimiter(rpm)
        t0 = time.monotonic()
        for _ in range(n):
            await lim.wait()
        return time.monotonic() - t0

    assert asyncio.run(starts(6000, 11)) >= 0.099  # 10 intervals of 60/6000 = 0.01 s
    assert asyncio.run(starts(None, 50)) < 0.05
    s = EngineSettings(concurrency=1, rate_limit_rpm=None, retries=6, malformed_retries=2, backoff_initial_s=2.0,
                       backoff_max_s=120.0)
    for _ in range(50):
        assert 1.0 <= backoff_delay(1, s) <= 2.0  # 2 s scaled by [0.5, 1]
        assert 4.0 <= backoff_delay(3, s) <= 8.0
        assert 60.0 <= backoff_delay(20, s) <= 120.0  # capped
        assert 30.0 <= backoff_delay(1, s, hint=30.0) <= 30.0 + 1e-9
    assert backoff_delay(1, s, hint=1000.0) == 120.0


def test_a_dropped_connection_of_either_http_client_is_retried_and_a_bug_is_fatal():
    """google-genai calls through aiohttp (async, when installed) or httpx2 (its own dependency): a
    connection error of either is retried; the classes come from the installed clients themselves."""
    import aiohttp
    import httpx2

    from medcalc_maintained.verifiers.base import FATAL, RETRY
    from medcalc_maintained.verifiers.gemini import GeminiBackend
    from medcalc_maintained.verifiers.settings import BatchSettings, GeminiSettings

    backend = GeminiBackend(GeminiSettings("m", None, None, [], None, 1.0, None), BatchSettings(1, 1, 1, 1, 1), "audit")
    assert backend.classify(aiohttp.ServerDisconnectedError()) == RETRY
    assert backend.classify(httpx2.ConnectError("refused")) == RETRY
    assert backend.classify(httpx2.RemoteProtocolError("peer closed")) == RETRY
    assert backend.classify(KeyError("a bug of ours")) == FATAL
