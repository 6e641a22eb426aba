"""Throughput of the recompute audit (all 55 reference calculators) on 11,100 instances
(the v1.0 test split replicated to the full benchmark's size).

    .venv/bin/python benchmarks/recompute.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _common import FULL_SIZE, replicated_test_split

from medcalc_maintained.ingest import ingest
from medcalc_maintained.recompute import recompute


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=FULL_SIZE)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.csv"
        replicated_test_split(args.rows).to_csv(src, index=False)
        instances = ingest([("test", src)]).instances
    recompute(instances.head(50))  # import and warm the registry outside the timing
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        out = recompute(instances)
        times.append(time.perf_counter() - t0)
    assert len(out) == args.rows
    best = min(times)
    print(f"recompute: {args.rows} instances, best of {args.repeat}: {best:.2f} s -> {args.rows / best:,.0f} instances/s "
          f"({100 * out['computable'].mean():.1f}% computable)")


if __name__ == "__main__":
    main()
