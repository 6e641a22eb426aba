"""Throughput of the recompute audit (all 55 reference calculators) plus the zero-LLM checks
(quality/checks) on 11,100 instances
(the v1.0 test split replicated to the full benchmark's size), in one process and then in as many
worker processes as the machine's cores and the row count justify (core/parallel.py).

    .venv/bin/python benchmarks/recompute.py [--rows N] [--repeat K]
"""

from __future__ import annotations

import argparse

from _common import FULL_SIZE, best_of, replicated_instances

from medcalc_maintained.core.parallel import cores, worker_count
from medcalc_maintained.quality.checks import run_checks
from medcalc_maintained.quality.recompute import recompute
from medcalc_maintained.stages.recompute import recompute_and_check


def _separately(instances, rows: int, repeat: int) -> None:
    best, median, out = best_of(lambda: recompute(instances), repeat)
    assert len(out) == rows
    cbest, cmedian, found = best_of(lambda: run_checks(instances, out), repeat)
    print("1 process, one after the other:")
    print(f"  recompute: best of {repeat}: {best:.2f} s -> {rows / best:,.0f} instances/s "
          f"(median {median:.2f} s; {100 * out['computable'].mean():.1f}% computable)")
    print(f"  checks: best {cbest:.2f} s -> {rows / cbest:,.0f} instances/s (median {cmedian:.2f} s; {len(found)} findings)")


def _together(instances, rows: int, repeat: int, workers: int | None) -> None:
    best, median, (rec, found) = best_of(lambda: recompute_and_check(instances, workers=workers), repeat)
    assert len(rec) == rows
    n = worker_count(rows, workers)
    print(f"recompute + checks in one pass (the recompute stage), {n} process{'es' if n > 1 else ''}: best of {repeat}: "
          f"{best:.2f} s -> {rows / best:,.0f} instances/s (median {median:.2f} s; {len(found)} findings)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=FULL_SIZE)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    instances = replicated_instances(args.rows)
    run_checks(instances.head(50), recompute(instances.head(50)))  # import and warm the registries outside the timing
    print(f"{args.rows} instances on {cores()} core(s)")
    _separately(instances, args.rows, args.repeat)
    _together(instances, args.rows, args.repeat, workers=1)
    if worker_count(args.rows) > 1:
        _together(instances, args.rows, args.repeat, workers=None)


if __name__ == "__main__":
    main()
