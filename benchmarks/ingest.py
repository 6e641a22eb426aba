"""Throughput of the ingest stage on the test split replicated to the full benchmark's 11,100 rows.

    .venv/bin/python benchmarks/ingest.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import FULL_SIZE, best_of, replicated_test_split

from medcalc_maintained.stages.ingest import ingest, write_outputs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=FULL_SIZE)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "big.csv"
        replicated_test_split(args.rows).to_csv(src, index=False)

        def once():
            result = ingest([("test", src)])
            write_outputs(result, Path(tmp) / "out")
            return result

        best, median, result = best_of(once, args.repeat)
    assert len(result.instances) == args.rows and result.quarantine.empty
    print(f"ingest: {args.rows} rows, best of {args.repeat}: {best:.2f} s -> {args.rows / best:,.0f} rows/s (median {median:.2f} s)")


if __name__ == "__main__":
    main()
