"""Longest test files first, so the two xdist workers of ``make test`` finish together.

``make test`` distributes whole files (``--dist loadfile``). xdist's default order puts the files
with the most tests first, which leaves the few-but-long end-to-end files (the DVC pipeline, the
harnesses) for last, one worker running them alone while the other idles. With
``--no-loadscope-reorder`` xdist keeps the collection order, and this plugin sorts that order by
each file's seconds in ``tests/durations.json`` (longest first; a file missing there runs after the
listed ones, in its usual place). Tests within a file keep their order.

``benchmarks/suite_durations.py --write`` measures the suite and rewrites the json's ``seconds``;
with ``--fast`` it measures ``make test-fast`` and rewrites ``fast_seconds``, the order of a run
that leaves out the slow tests (``-m "not slow"``), where a file's seconds are those of its fast
tests. A stale entry only changes the order, never which tests run or what they assert.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.paths import TESTS

DURATIONS = TESTS / "durations.json"


def file_seconds(path: Path = DURATIONS, key: str = "seconds") -> dict[str, float]:
    """``{test file relative to the repository: seconds}`` of ``key`` (``seconds``: the whole suite,
    ``fast_seconds``: the fast tier); ``{}`` when the file or the key is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.get(key, {}).items()} if isinstance(data, dict) else {}


def longest_first(nodeids: list[str], seconds: dict[str, float]) -> list[int]:
    """Positions of ``nodeids`` in run order: by their file's seconds, longest first; the order is
    stable, so a file's tests keep their order and unlisted files keep theirs."""
    return sorted(range(len(nodeids)), key=lambda i: -seconds.get(nodeids[i].split("::", 1)[0], 0.0))


def pytest_collection_modifyitems(session, config, items) -> None:
    fast = " ".join(str(config.getoption("markexpr", "") or "").split()) == "not slow"
    seconds = (fast and file_seconds(key="fast_seconds")) or file_seconds()
    if seconds:
        order = longest_first([item.nodeid for item in items], seconds)
        items[:] = [items[i] for i in order]
