"""The relabel stage through the real Gemini client against a local server that injects faults (429, 500,
503, timeouts, dropped connections, malformed JSON, replies without a tag) on a fifth of the attempts:
retries with backoff lose and duplicate no vote. Slow tier: a local server, timeouts of seconds (moved
from tests/verifiers/test_llm_gemini.py)."""

from __future__ import annotations

import json

from tests.support.fake_gemini import FakeGemini, FaultPlan
from tests.support.llm_helpers import Script, labels, log_counts, relabel, rows_file, unique_prompt_rows


def test_retries_succeed_under_20_percent_injected_faults(project, instances, tmp_path, monkeypatch):
    rows = unique_prompt_rows(instances, 40, start=20)
    answers = {int(u): [f"<answer>{int(u) % 9 + 1}</answer>"] * 5 for u in rows["uid"]}
    script = Script(rows, "relabel", answers)
    plan = FaultPlan(rate=0.2, seed=7, max_consecutive=2)
    # a hang outlasts the client's timeout by a second; the timeout itself leaves a normal reply two
    # seconds on a loaded machine (with 1 s, a reply the server had sent was retried and counted twice)
    project.set("relabel", gemini={"timeout_s": 2.0})
    with FakeGemini(script, faults=plan, hang_s=3.0) as srv:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", srv.url)
        r = relabel(project, rows_file(tmp_path, rows), "--concurrency", "16")
        assert r.exit_code == 0, r.output
        stats = srv.stats
    attempts = sum(stats.attempts.values())
    faults = sum(stats.faults.values())
    assert 0.15 <= faults / attempts <= 0.25, (faults, attempts)
    assert set(stats.faults) == {"429", "500", "503", "timeout", "drop", "malformed_json", "no_tag"}, stats.faults
    # every (uid, run) answered exactly once, and every row got its scripted label
    assert len(stats.successes) == 200 and set(stats.successes.values()) == {1}
    lab = labels(project)
    assert (lab["status"] == "labeled").all()
    assert lab["label"].to_dict() == {int(u): str(int(u) % 9 + 1) for u in rows["uid"]}
    log = log_counts(r.output)
    assert log["retries"] > 0 and log["malformed_replies"] > 0 and log["unparseable_votes"] == 0
    info = json.loads((project.root / "out" / "run.json").read_text())
    assert info["unparseable_votes"] == 0
