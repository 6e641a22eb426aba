"""Cost of the test suite's checkout guard: one walk of this checkout per test.

    .venv/bin/python benchmarks/checkout_guard.py [--walks N]

Prints the files walked and the milliseconds per walk (tests/support/checkout_guard.py runs one walk after
every test, and `git status` only when the walk differs).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

from _common import ROOT


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--walks", type=int, default=20, help="walks to average over (default 20)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    walk = importlib.import_module("tests.support.checkout_guard").walk
    files = walk(str(ROOT))
    t0 = time.perf_counter()
    for _ in range(args.walks):
        walk(str(ROOT))
    per_walk = (time.perf_counter() - t0) / args.walks
    print(f"{len(files)} files walked, {per_walk * 1000:.1f} ms per walk ({args.walks} walks)")


if __name__ == "__main__":
    main()
