"""Throughput of the recompute audit (all 55 reference calculators) plus the zero-LLM checks
(quality/checks) on 11,100 instances
(the v1.0 test split replicated to the full benchmark's size).

    .venv/bin/python benchmarks/recompute.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse

from _common import FULL_SIZE, best_of, replicated_instances

from medcalc_maintained.quality.checks import run_checks
from medcalc_maintained.quality.recompute import recompute


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=FULL_SIZE)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    instances = replicated_instances(args.rows)
    run_checks(instances.head(50), recompute(instances.head(50)))  # import and warm the registries outside the timing
    best, median, out = best_of(lambda: recompute(instances), args.repeat)
    assert len(out) == args.rows
    print(f"recompute: {args.rows} instances, best of {args.repeat}: {best:.2f} s -> {args.rows / best:,.0f} instances/s "
          f"(median {median:.2f} s; {100 * out['computable'].mean():.1f}% computable)")
    cbest, cmedian, found = best_of(lambda: run_checks(instances, out), args.repeat)
    total = best + cbest
    print(f"checks: best {cbest:.2f} s -> {args.rows / cbest:,.0f} instances/s (median {cmedian:.2f} s; {len(found)} findings)")
    print(f"recompute + checks: {total:.2f} s -> {args.rows / total:,.0f} instances/s")


if __name__ == "__main__":
    main()
