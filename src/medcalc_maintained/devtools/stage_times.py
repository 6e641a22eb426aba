"""How long each stage of a ``dvc repro`` took, timed from DVC's own output as it runs.

``medcalc-maintained repro`` (what ``make repro`` and ``make run`` run) starts ``dvc repro`` with the
arguments given, passes every line of its output through unchanged, and notes when each stage
starts (``Running stage 'NAME':``), is found unchanged (``Stage 'NAME' didn't change, skipping``) or is
restored from DVC's run cache (``Stage 'NAME' is cached - skipping run, checking out outputs``).
A stage's seconds run from its start to the next such line or to the end of the run, so they include
DVC hashing the stage's outputs and updating ``dvc.lock``. The times are written to
``repro.times`` (``build/repro/stage-times.json``, ignored by git and never a DVC output: a time is not a
result) and ``medcalc-maintained summary`` prints them, slowest first.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterable, TextIO

from medcalc_maintained.core.atomic import write_text_atomic

STARTS = re.compile(r"^Running stage '([^']+)':")
SKIPS = re.compile(r"^Stage '([^']+)' (?:didn't change, skipping|is cached - skipping run)")


@dataclass(frozen=True)
class StageTime:
    stage: str
    seconds: float
    ran: bool  # False: DVC found it unchanged, or restored its outputs from the run cache, without running it


class StageClock:
    """Feed it DVC's output lines as they arrive (:meth:`line`), then :meth:`finish`: the stages in the
    order DVC took them, each with its seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started = clock()
        self.times: list[StageTime] = []
        self._open: tuple[str, float, bool] | None = None

    def _close(self, now: float) -> None:
        if self._open is not None:
            stage, since, ran = self._open
            self.times.append(StageTime(stage, round(now - since, 2), ran))
            self._open = None

    def line(self, text: str) -> None:
        match = STARTS.match(text) or SKIPS.match(text)
        if match is None:
            return
        now = self.clock()
        self._close(now)
        self._open = (match.group(1), now, match.re is STARTS)

    def finish(self) -> float:
        """Close the last stage; the seconds since the clock started."""
        now = self.clock()
        self._close(now)
        return round(now - self.started, 2)


def time_lines(lines: Iterable[str], clock: Callable[[], float] = time.monotonic,
               echo: TextIO | None = None) -> tuple[list[StageTime], float]:
    """The stage times of a ``dvc repro`` output read line by line (each line echoed to ``echo``)."""
    stages = StageClock(clock)
    for text in lines:
        if echo is not None:
            echo.write(text)
            echo.flush()
        stages.line(text)
    total = stages.finish()
    return stages.times, total


def run_repro(root: Path, args: list[str], dvc: str | None = None) -> tuple[int, list[StageTime], float]:
    """Run ``dvc repro ARGS`` in ``root``, its output passed through to this process's stdout as it
    comes: (exit code, stage times, total seconds). DVC's standard error is not read (its progress and
    errors reach the terminal as they would)."""
    exe = dvc or str(Path(sys.executable).parent / "dvc")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with subprocess.Popen([exe, "repro", *args], cwd=root, env=env, stdout=subprocess.PIPE, text=True,
                          bufsize=1) as proc:
        assert proc.stdout is not None
        times, total = time_lines(proc.stdout, echo=sys.stdout)
    return proc.returncode, times, total


def write_times(path: Path, times: list[StageTime], total: float, returncode: int, args: list[str]) -> None:
    """The times of one run, as JSON (atomically: a reader never sees half a file)."""
    doc = {"command": " ".join(["dvc", "repro", *args]), "exit_code": returncode, "total_seconds": total,
           "finished_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "stages": [asdict(t) for t in times]}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(doc, indent=1) + "\n")


def read_times(path: Path) -> dict | None:
    """What :func:`write_times` wrote, or None when there is no readable file."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) and isinstance(doc.get("stages"), list) else None
