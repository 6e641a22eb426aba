"""Throughput of the ingest stage on the test split replicated to the full benchmark's 11,100 rows.

    .venv/bin/python benchmarks/ingest.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import FULL_SIZE, replicated_test_split

from medcalc_maintained.ingest import ingest, write_outputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=FULL_SIZE)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.csv"
        replicated_test_split(args.rows).to_csv(src, index=False)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = ingest([("test", src)])
            write_outputs(result, Path(tmp) / "out")
            times.append(time.perf_counter() - t0)
        assert len(result.instances) == args.rows and result.quarantine.empty
    best = min(times)
    print(f"ingest: {args.rows} rows, best of {args.repeat}: {best:.2f} s -> {args.rows / best:,.0f} rows/s "
          f"(median {sorted(times)[len(times) // 2]:.2f} s)")


if __name__ == "__main__":
    main()
