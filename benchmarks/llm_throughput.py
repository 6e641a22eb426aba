"""Throughput of the verifier engine: the real google-genai client against the local Gemini server
of the tests (tests/support/fake_gemini.py), which answers every call after a fixed latency (200 ms).
Prints calls/s at concurrency 1, 8, 32 and 64 for the relabel calls of the test split
(1,047 rows x 5 runs), and the number of calls a rerun makes (every call is then in the cache).

    .venv/bin/python benchmarks/llm_throughput.py [--latency 0.2] [--concurrency 1 8 32 64]
                                                  [--serial-calls 300] [--rows 1047]

Concurrency 1 would take 1,047 x 5 x 0.2 s = 17.5 min, so by default it runs the first
--serial-calls calls only and extrapolates the full run from them (the printout says so); pass
--serial-calls 0 to run it in full. The server runs in a separate process, so the client's
numbers are not slowed by the server sharing its interpreter.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from _common import ROOT

sys.path.insert(0, str(ROOT))


def _serve(latency: float, conn) -> None:  # child process: the local Gemini server
    from http.server import BaseHTTPRequestHandler

    from tests.support.fake_gemini import FakeGemini

    # N/A is a valid answer for every output type (a number would be a malformed reply for the date rows)
    srv = FakeGemini(lambda req: "Computed.\n<answer>N/A</answer>", latency_s=latency, max_lifetime_s=3600).start()
    original = srv._get

    def get(h: BaseHTTPRequestHandler) -> None:  # GET /stats: calls answered so far
        if h.path == "/stats":
            body = json.dumps({"successes": sum(srv.stats.successes.values()),
                               "attempts": sum(srv.stats.attempts.values())}).encode()
            srv._send(h, 200, body)
        else:
            original(h)

    srv._get = get
    conn.send(srv.url)
    while srv.httpd is not None:
        time.sleep(0.5)


def stats(url: str) -> dict:
    with urllib.request.urlopen(url + "/stats", timeout=10) as r:
        return json.loads(r.read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    ap.add_argument("--serial-calls", type=int, default=300, help="calls measured at concurrency 1 (0: all)")
    ap.add_argument("--rows", type=int, default=1047)
    args = ap.parse_args()


    from _common import upstream

    from medcalc_maintained.project import defaults, merge
    from medcalc_maintained.stages import relabel as stage
    from medcalc_maintained.stages.ingest import ingest
    from medcalc_maintained.verifiers import runner
    from medcalc_maintained.verifiers.settings import from_section

    instances = ingest([("test", upstream("medcalc-bench/v1.0/test_data.csv"))]).instances
    rows = runner.select_rows(instances, "test", args.rows)

    parent, child = mp.Pipe()
    proc = mp.Process(target=_serve, args=(args.latency, child), daemon=True)
    proc.start()
    url = parent.recv()
    os.environ["GOOGLE_GEMINI_BASE_URL"] = url
    os.environ.setdefault("GEMINI_API_KEY", "benchmark")
    overrides = {"engine": {"rate_limit_rpm": None, "retries": 3, "backoff_initial_s": 0.1}, "gemini": {"timeout_s": 60}}
    settings = from_section("relabel", merge(defaults()["relabel"], overrides, Path(__file__), "relabel"), __file__)
    try:
        backend = runner.make_backend("relabel", "gemini", settings, instances=rows)
        tasks = stage.tasks(rows, backend, 5)
        with tempfile.TemporaryDirectory() as tmp:
            probe = runner.make_engine(backend, settings, cache_dir=Path(tmp) / "probe")
            distinct = len(probe.plan(tasks)[0])
            print(f"relabel calls of the test split: {len(rows):,} rows x 5 runs = {len(tasks):,} tasks, "
                  f"{distinct:,} distinct calls (rows with the same note and question share theirs); "
                  f"server latency {1000 * args.latency:.0f} ms; real google-genai {_genai_version()} client")
            last_cache = None
            for c in args.concurrency:
                cache = Path(tmp) / f"cache-c{c}"
                subset = tasks
                partial = c == 1 and args.serial_calls and args.serial_calls < distinct
                if partial:
                    subset = tasks[:args.serial_calls]
                eng = runner.make_engine(backend, settings, cache_dir=cache, concurrency=c,
                                         validator=stage.validator)
                before = stats(url)["successes"]
                t0 = time.perf_counter()
                out = eng.run(subset)
                dt = time.perf_counter() - t0
                time.sleep(0.5)  # the server counts a call once its reply is written: let the last ones land
                made = stats(url)["successes"] - before
                assert all(o.entry is not None for o in out), "calls failed"
                assert made == eng.stats.calls, (made, eng.stats.calls)
                rate = made / dt
                if partial:
                    print(f"concurrency {c:>3}: {rate:7.1f} calls/s  (measured on the first {made} calls in {dt:.1f} s; "
                          f"{distinct:,} calls extrapolated: {distinct / rate / 60:.1f} min)")
                else:
                    print(f"concurrency {c:>3}: {rate:7.1f} calls/s  ({made:,} calls in {dt:.1f} s)")
                last_cache = cache
            if last_cache is not None:
                eng = runner.make_engine(backend, settings, cache_dir=last_cache,
                                         concurrency=args.concurrency[-1], validator=stage.validator)
                before = stats(url)["attempts"]
                t0 = time.perf_counter()
                eng.run(tasks)
                dt = time.perf_counter() - t0
                time.sleep(0.5)
                print(f"rerun with the cache of concurrency {args.concurrency[-1]}: {stats(url)['attempts'] - before} calls "
                      f"made, {eng.stats.cached:,} answered from the cache in {dt:.1f} s"
                      + ("" if not (args.concurrency[-1] == 1 and args.serial_calls) else " (subset cache)"))
    finally:
        proc.terminate()
        proc.join(timeout=10)


def _genai_version() -> str:
    from google.genai import version

    return version.__version__


if __name__ == "__main__":
    main()
