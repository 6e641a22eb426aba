"""Per-row work on a large table, spread over worker processes.

:func:`map_chunks` cuts a list into chunks, runs a function on each chunk in forked worker
processes and returns the results in the input's order, as one list: the same list a single
process would return; called inside a worker, it stays in that worker. Small inputs (under ``rows_per_worker`` items per extra worker, by default
:data:`ROWS_PER_WORKER` cheap rows) and machines without ``fork`` stay in one process, so per-row
work on the pipeline's 1,047-row tables never forks and the full benchmark's 11,100 rows use every
core the process may run on. Heavier items say so: a release's tables (seconds each) or a row's
evidence read again against its note (about 10 ms) repay a worker from a few items or a few hundred.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
from typing import Any, Callable, Sequence

ROWS_PER_WORKER = 2_500  # fewer rows than this per worker do not repay starting a process
CHUNK = 500  # rows per task: the unit of progress and of load balancing

_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}  # blocked while a pool forks (see _blocked)
_JOB: tuple[Callable[[Sequence[Any]], list], Sequence[Any]] | None = None  # inherited by forked workers


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def worker_count(rows: int, workers: int | None = None, rows_per_worker: int = ROWS_PER_WORKER) -> int:
    """``workers`` when given, else as many as the cores and the row count justify (at least 1): one per
    ``rows_per_worker`` rows."""
    if workers is not None:
        return max(1, int(workers))
    return max(1, min(cores(), rows // max(1, rows_per_worker)))


def _default_signals() -> None:
    """A forked worker's first act: SIGTERM and SIGINT back to their defaults, then unblocked. A worker
    inherits the parent's Python handlers, and ``Pool.terminate`` ends workers with SIGTERM; a handler that
    does not exit (verifiers' ``Environment`` installs one in any process that builds an environment) left
    a worker alive and the pool's exit waiting on it forever (seen in the test suite). The parent forks
    with both signals blocked (:func:`_blocked`), so one sent before this runs waits, and is delivered
    here with its default action."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)


class _blocked:
    """SIGTERM and SIGINT blocked in the calling thread while the pool forks its workers (a worker
    inherits the mask, and unblocks them once its handlers are the defaults)."""

    def __enter__(self) -> None:
        self.previous = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)

    def __exit__(self, *exc: object) -> None:
        signal.pthread_sigmask(signal.SIG_SETMASK, self.previous)


def _chunk(bounds: tuple[int, int]) -> list:
    if _JOB is None:
        raise RuntimeError("no job was set before the workers started")
    fn, items = _JOB
    return fn(items[bounds[0]:bounds[1]])


def map_chunks(fn: Callable[[Sequence[Any]], list], items: Sequence[Any], *, workers: int | None = None,
               progress: str | None = None, chunk: int = CHUNK, rows_per_worker: int = ROWS_PER_WORKER) -> list:
    """``fn(items[a:b])`` for consecutive chunks of ``chunk`` items, concatenated in order. ``fn``
    must be a pure function of its chunk (workers see the parent's memory as it was when they
    started). ``progress``: the description of a progress bar over the chunks (none when ``None``);
    ``rows_per_worker``: the items that repay one more worker (:func:`worker_count`)."""
    global _JOB
    bounds = [(a, min(a + chunk, len(items))) for a in range(0, len(items), chunk)]
    n = min(worker_count(len(items), workers, rows_per_worker), max(1, len(bounds)))
    if n > 1 and ("fork" not in mp.get_all_start_methods() or mp.current_process().daemon):
        n = 1  # a pool's worker is daemonic and may not start processes: work nested in it stays in it
    out: list = []
    if n == 1:
        parts = (fn(items[a:b]) for a, b in bounds)
        for part in _track(parts, len(bounds), progress):
            out.extend(part)
        return out
    _JOB = (fn, items)
    try:
        with _blocked():
            pool = mp.get_context("fork").Pool(n, initializer=_default_signals)
        try:
            for part in _track(pool.imap(_chunk, bounds), len(bounds), progress):
                out.extend(part)
            pool.close()  # the workers end on the pool's sentinel, no signal needed
            pool.join()
        finally:
            pool.terminate()  # ends the workers on an error (nothing left to end after join)
    finally:
        _JOB = None
    return out


def _track(parts, total: int, description: str | None):
    if description is None:
        return parts
    from rich.progress import track

    return track(parts, total=total, description=description, transient=True)
