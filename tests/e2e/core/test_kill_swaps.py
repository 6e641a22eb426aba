"""Multi-file outputs are replaced as a whole: a `release build` or an `audit` run SIGKILLed right after
each rename it makes leaves `build/release` a complete, manifest-valid build and the audit tables
with their run record from one run; the next run removes the scratch directories a killed run left."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from medcalc_maintained.release.layout import verify_manifest
from tests.support import forking


def _killed(root: str, after: int, args: list[str]) -> None:
    """The command line in this fork-server child (the package already imported, as in a new
    ``medcalc-maintained`` process), SIGKILLed right after its ``after``-th rename; output discarded."""
    import signal

    from medcalc_maintained.cli import app
    from medcalc_maintained.core import atomic

    forking.enter(root)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    count = [0]

    def hit() -> None:
        count[0] += 1
        if count[0] == after:
            os.kill(os.getpid(), signal.SIGKILL)

    exchange, replace = atomic._exchange, os.replace

    def killing_exchange(a, b):
        done = exchange(a, b)
        hit()
        return done

    def killing_replace(a, b):
        replace(a, b)
        hit()

    atomic._exchange, os.replace = killing_exchange, killing_replace
    app(args, prog_name="medcalc-maintained")  # exits: SystemExit's code is the process's exit code


def run_killed(root: Path, after: int, *args: str) -> int:
    """Run the command line, SIGKILLed right after its ``after``-th rename; returns the exit code
    (-9 when killed)."""
    proc = forking.context().Process(target=_killed, args=(str(root), after, list(args)))
    proc.start()
    proc.join(timeout=600)
    assert proc.exitcode is not None, "the command did not finish in 10 min"
    return proc.exitcode


def kill_points(root: Path, args_of, check) -> int:
    """Kill after rename 1, 2, ... until a run completes; ``check()`` after each. Returns the kills."""
    kills = 0
    for n in range(1, 60):
        code = run_killed(root, n, *args_of(n))
        check()
        if code != -9:
            assert code == 0
            return kills
        kills += 1
    raise AssertionError("the command never completed")


def test_release_build_is_always_whole(project_root):
    out = project_root / "build" / "release"
    versions = {"2.0.0", "1.0.0"}

    def args(n):  # alternate the version so that every swap replaces a different build
        return ["release", "build", "--version", "1.0.0" if n % 2 else "2.0.0"]

    def check():
        if out.exists():
            assert verify_manifest(out) == []
            assert json.loads((out / "manifest.json").read_text())["version"] in versions

    assert run_killed(project_root, 10**6, *args(0)) == 0  # a first complete build
    kills = kill_points(project_root, args, check)
    assert kills >= 2 and out.exists()
    assert run_killed(project_root, 10**6, *args(1)) == 0
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".release.")] == []  # leftovers removed


def test_audit_outputs_are_always_from_one_run(project_root):
    out = project_root / "data" / "audit_llm"

    def args(n):
        return ["audit", "--backend", "rules", "--limit", str(5 + n)]

    def check():
        if not (out / "run.json").exists():
            return
        info = json.loads((out / "run.json").read_text())
        flags = pd.read_parquet(out / "flags.parquet")
        verdicts = pd.read_parquet(out / "verdicts.parquet")
        metrics = json.loads((out / "metrics.json").read_text())
        assert len(flags) == info["rows"] == verdicts["uid"].nunique()  # one run's tables and record
        assert metrics == {"rows": info["rows"], "flagged": info["flagged"]}  # and its metric

    assert run_killed(project_root, 10**6, *args(0)) == 0
    kills = kill_points(project_root, args, check)
    assert kills >= 1
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".audit_llm.")] == []
