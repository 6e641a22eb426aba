"""Helpers shared by the benchmark scripts (run them with the project's .venv python)."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
FULL_SIZE = 11_100  # train (10,053) + test (1,047) rows of the full benchmark


def upstream(rel: str) -> Path:
    for base in (ROOT / "data" / "upstream", ROOT.parent / "shared" / "data"):
        if (base / rel).is_file():
            return base / rel
    sys.exit(f"upstream file {rel} not found: run `make data` first")


def replicated_test_split(n: int = FULL_SIZE) -> pd.DataFrame:
    """The v1.0 test split repeated to ``n`` rows with fresh, unique Row Numbers."""
    df = pd.read_csv(upstream("medcalc-bench/v1.0/test_data.csv"), dtype=str, keep_default_na=False)
    reps = -(-n // len(df))
    big = pd.concat([df] * reps, ignore_index=True).iloc[:n].copy()
    big["Row Number"] = [str(i) for i in range(1, n + 1)]
    return big


def best_of(fn, repeat: int) -> tuple[float, float, object]:
    """Run ``fn`` ``repeat`` times: (best seconds, median seconds, last result)."""
    import time

    times, result = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), sorted(times)[len(times) // 2], result


def replicated_instances(rows: int):
    """The ingested v1.0 test split replicated to ``rows`` instances (via a temporary CSV)."""
    import tempfile

    from medcalc_maintained.stages.ingest import ingest

    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.csv"
        replicated_test_split(rows).to_csv(src, index=False)
        return ingest([("test", src)]).instances
