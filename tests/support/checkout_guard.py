"""Pytest plugin (loaded by the root conftest.py, on for every test and doctest): a test fails when the
checkout changed while it ran.

After each test (its setup, call and teardown, including any module or session fixture set up for it)
the guard walks the checkout once with ``os.scandir`` and compares every file's (size, mtime_ns) with the
walk after the previous test. Only when the walk differs does it also ask ``git status --porcelain
--untracked-files=all``, so that the report names tracked files whose content changed too. The walk skips
what is never the project's: ``.git``, ``.venv`` and the harness venvs ``.venv-<harness>``, caches (``__pycache__``, ``.pytest_cache``,
``.hypothesis``, ``.mypy_cache``, ``.ruff_cache``) and DVC's own scratch directory ``.dvc/tmp``; it
covers ``data/`` (ignored by git, so git status alone would miss it), ``build/``, ``src/`` and ``tests/``.

With two xdist workers a file written by a test on the other worker is reported by the test running
here at that moment: the run fails either way, and the message names the path. A file you edit yourself
while the suite runs is blamed on the running test the same way; ``MEDCALC_CHECKOUT_GUARD=0`` turns the
guard off for such a run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache",
                       ".ruff_cache"})
SKIP_PATHS = frozenset({os.path.join(".dvc", "tmp")})

Snapshot = dict[str, tuple[int, int]]


def walk(root: str) -> Snapshot:
    """Every file under ``root`` (relative path -> (size, mtime_ns)), skipped directories left out."""
    found: Snapshot = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = os.scandir(os.path.join(root, rel) if rel else root)
        except FileNotFoundError:
            continue
        with entries:
            for e in entries:
                path = os.path.join(rel, e.name) if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    if (e.name not in SKIP_DIRS and not e.name.startswith(".venv-") and not e.name.endswith(".egg-info")
                            and path not in SKIP_PATHS):
                        stack.append(path)
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                found[path] = (st.st_size, st.st_mtime_ns)
    return found


def git_status(root: str) -> set[str] | None:
    """The lines of ``git status --porcelain --untracked-files=all``; None outside a git work tree."""
    try:
        proc = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root,
                              capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return set(proc.stdout.splitlines()) if proc.returncode == 0 else None


def describe(before: Snapshot, after: Snapshot) -> list[str]:
    """One line per file created, deleted or changed between two walks."""
    lines = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    lines += [f"deleted {p}" for p in sorted(before.keys() - after.keys())]
    lines += [f"changed {p}" for p in sorted(p for p in before.keys() & after.keys() if before[p] != after[p])]
    return lines


class CheckoutGuard:
    """The last walk (and git status) of the checkout; :meth:`check` compares the checkout with it."""

    def __init__(self, root: Path):
        self.root = str(root)
        self.files = walk(self.root)
        self.status = git_status(self.root)

    def check(self) -> list[str]:
        """What changed since the last check (empty when nothing); the new state becomes the reference."""
        now = walk(self.root)
        if now == self.files:
            return []
        changes = describe(self.files, now)
        status = git_status(self.root)
        if status is not None and self.status is not None:
            changes += [f"git status: {line}" for line in sorted(status - self.status)]
            changes += [f"git status no longer: {line}" for line in sorted(self.status - status)]
        self.files, self.status = now, status
        return changes


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get("MEDCALC_CHECKOUT_GUARD", "1") != "0":
        config.stash[GUARD] = CheckoutGuard(config.rootpath)


GUARD = pytest.StashKey[CheckoutGuard]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After the test's own teardown (and that of the fixtures it was the last user of), fail the test
    when the checkout changed."""
    yield
    guard = item.config.stash.get(GUARD, None)
    changes = guard.check() if guard is not None else []
    if changes:
        shown = "\n  ".join(changes[:20]) + (f"\n  ... and {len(changes) - 20} more" if len(changes) > 20 else "")
        pytest.fail(f"{item.nodeid} changed the checkout {item.config.rootpath} (tests write only under "
                    f"their tmp_path):\n  {shown}", pytrace=False)
