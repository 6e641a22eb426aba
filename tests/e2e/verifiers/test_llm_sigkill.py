"""A run killed with SIGKILL mid-way, then rerun: the cache is intact and the local Gemini server
sees exactly one successful call per (uid, run) over both runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd

from tests.support.fake_gemini import FakeGemini
from tests.support.llm_helpers import Script, log_counts, unique_prompt_rows

ROWS, RUNS = 30, 5


def test_sigkill_mid_run_then_rerun_pays_each_call_once(project, instances, tmp_path):
    rows = unique_prompt_rows(instances, ROWS, start=100)
    path = tmp_path / "rows.parquet"
    rows.to_parquet(path, index=False)
    script = Script(rows, "relabel", {int(u): [f"<answer>{int(u) % 5}</answer>"] * RUNS for u in rows["uid"]})
    out, cache = project.root / "out", project.root / "cache"
    for stage in ("audit", "relabel"):  # the subprocess reads the shipped defaults (no batch here)
        project.set(stage, batch={"poll_interval_s": 1})
    cmd = [sys.executable, "-m", "medcalc_maintained.cli", "relabel", "--backend", "gemini", "--instances", str(path),
           "--out", str(out), "--concurrency", "4"]
    with FakeGemini(script, latency_s=0.05) as srv:
        env = dict(os.environ, MEDCALC_ROOT=str(project.root), GOOGLE_GEMINI_BASE_URL=srv.url, GEMINI_API_KEY="test-key")
        log = (tmp_path / "first.log").open("w")
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 90
            while sum(srv.stats.successes.values()) < 40 and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            assert proc.poll() is None, (tmp_path / "first.log").read_text()
            srv.hold()          # replies in flight stay unsent ...
            time.sleep(0.5)     # ... while the client stores the ones it already has
            os.kill(proc.pid, signal.SIGKILL)
            assert proc.wait(timeout=30) == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
            log.close()
            srv.release()
        entries = [p for p in cache.rglob("*.json") if "_batch_jobs" not in p.parts]
        for p in entries:
            json.loads(p.read_text())  # every cache file is complete
        assert 40 <= len(entries) < ROWS * RUNS
        assert len(entries) == sum(srv.stats.successes.values())
        assert not out.exists()  # the killed run wrote no outputs

        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
        assert r.returncode == 0, r.stdout + r.stderr
        assert len(srv.stats.successes) == ROWS * RUNS
        assert set(srv.stats.successes.values()) == {1}
    labels = pd.read_parquet(out / "labels.parquet").set_index("uid")
    assert labels["label"].to_dict() == {int(u): str(int(u) % 5) for u in rows["uid"]}
    log = log_counts(r.stdout)
    assert log["from_cache"] == len(entries) and log["made"] == ROWS * RUNS - len(entries)
