"""Time of `make run` on a fresh clone, step by step: what issue 51 measures (goal: 2 minutes).

    .venv/bin/python benchmarks/make_run.py [--ref REF] [--keep]

Clones this repository at REF (default HEAD: the last commit, not the working tree) into a folder
beside it, so that `../shared` resolves as it does here, then runs the steps of `make run` one by
one and prints each one's wall seconds and the total:

- `make venv`: create .venv and install what the stages run (the package index's cache is whatever
  this machine has: run once to warm it, then measure);
- `make data`: `dvc pull` of the upstream data;
- `make repro`: `dvc repro` through `medcalc-maintained repro` (its stage times follow, slowest first);
- `make validate`: the contracts on the built release, with its Data Docs;
- `make summary`.

It ends with `git status --short` of the clone (empty: the run left the tree clean) and removes the
clone unless `--keep`. Numbers are wall seconds on this machine: measure on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT

STEPS = ("venv", "data", "repro", "validate", "summary")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", default="HEAD", help="the commit to clone (default: HEAD)")
    ap.add_argument("--keep", action="store_true", help="leave the clone in place (its path is printed)")
    args = ap.parse_args()
    clone = Path(tempfile.mkdtemp(prefix="make-run-bench-", dir=ROOT.parent))
    try:
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "checkout", "--quiet", args.ref], cwd=clone, check=True)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                      if not p.startswith(str(ROOT)))  # not this checkout's .venv
        seconds: dict[str, float] = {}
        for step in STEPS:
            t0 = time.perf_counter()
            proc = subprocess.run(["make", step], cwd=clone, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
            seconds[step] = time.perf_counter() - t0
            if proc.returncode:
                sys.exit(f"make {step} failed (exit {proc.returncode}) in {clone}:\n{proc.stderr[-3000:]}")
        total = sum(seconds.values())
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True)
        print(f"make run, fresh clone of {args.ref} ({commit.stdout.strip()})")
        for step in STEPS:
            print(f"  make {step:<9} {seconds[step]:7.1f} s")
        print(f"  {'total':<14} {total:7.1f} s (goal 120 s)")
        times = clone / "build" / "repro" / "stage-times.json"
        if times.is_file():
            doc = json.loads(times.read_text(encoding="utf-8"))
            ran = sorted((s for s in doc.get("stages", []) if s.get("ran")), key=lambda s: -float(s["seconds"]))
            print(f"  dvc repro {float(doc['total_seconds']):.1f} s; slowest stages: "
                  + ", ".join(f"{s['stage']} {float(s['seconds']):.1f}" for s in ran[:8]))
        status = subprocess.run(["git", "status", "--short"], cwd=clone, capture_output=True, text=True).stdout
        print("  git status after the run: " + ("clean" if not status.strip() else f"\n{status}"))
    finally:
        if args.keep:
            print(f"clone kept in {clone}")
        else:
            shutil.rmtree(clone, ignore_errors=True)


if __name__ == "__main__":
    main()
