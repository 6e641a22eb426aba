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
guard off for such a run.

The walk costs about 25 ms on this checkout, a minute of CPU over the suite's 3,000 tests; on Linux the guard
therefore walks only when it has to. It keeps an inotify watch on every directory it walks (``Watcher``): after
a test it reads the pending events, one system call, and walks when any names a path the walk covers; after the
last test of each file it walks regardless. Every write, truncation, ``utime``, creation, deletion or rename
of a file raises such an event, so a skipped walk would have found nothing; the walk after each file also
catches what inotify cannot see (a write through a shared memory map) and charges it to that file's last
test. Where inotify is missing (another OS, the watch limit reached) every test is walked, as before."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
import subprocess
from pathlib import Path

import pytest

SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache",
                       ".ruff_cache"})
SKIP_PATHS = frozenset({os.path.join(".dvc", "tmp")})

Snapshot = dict[str, tuple[int, int]]


def _skipped_dir(name: str, path: str) -> bool:
    return (name in SKIP_DIRS or name.startswith(".venv-") or name.endswith(".egg-info")
            or path in SKIP_PATHS)


def walk(root: str, dirs: list[str] | None = None) -> Snapshot:
    """Every file under ``root`` (relative path -> (size, mtime_ns)), skipped directories left out;
    ``dirs``, when given, receives every directory walked (relative; ``""`` is ``root``)."""
    found: Snapshot = {}
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = os.scandir(os.path.join(root, rel) if rel else root)
        except FileNotFoundError:
            continue
        if dirs is not None:
            dirs.append(rel)
        with entries:
            for e in entries:
                path = os.path.join(rel, e.name) if rel else e.name
                if e.is_dir(follow_symlinks=False):
                    if not _skipped_dir(e.name, path):
                        stack.append(path)
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                found[path] = (st.st_size, st.st_mtime_ns)
    return found


class Watcher:
    """Linux inotify watches on the directories the guard walks. :meth:`pending` reads the events queued
    since the last call (without blocking) and says whether any concerns a path the walk covers;
    :meth:`watch` adds directories (those created since are found by the walk an event triggers).
    ``Watcher.open()`` is None where inotify is unavailable."""

    # IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
    MASK = 0x2 | 0x4 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
    IN_Q_OVERFLOW, IN_IGNORED, IN_ISDIR, IN_NONBLOCK, IN_CLOEXEC = 0x4000, 0x8000, 0x40000000, 0o4000, 0o2000000
    HEADER = struct.Struct("iIII")  # wd, mask, cookie, len (then len bytes of name)

    def __init__(self, libc: ctypes.CDLL, fd: int, root: str):
        self.libc, self.fd, self.root = libc, fd, root
        self.paths: dict[int, str] = {}  # watch descriptor -> directory (relative to root)
        self.watched: set[str] = set()

    @classmethod
    def open(cls, root: str) -> Watcher | None:
        name = ctypes.util.find_library("c")
        if not name:
            return None
        try:
            libc = ctypes.CDLL(name, use_errno=True)
            fd = libc.inotify_init1(cls.IN_NONBLOCK | cls.IN_CLOEXEC)
        except (OSError, AttributeError):
            return None
        return cls(libc, fd, root) if fd >= 0 else None

    def watch(self, dirs: list[str]) -> bool:
        """Watch every directory of ``dirs`` not watched yet; False when one could not be watched (the
        guard then walks after every test)."""
        for rel in dirs:
            if rel in self.watched:
                continue
            wd = self.libc.inotify_add_watch(self.fd, os.fsencode(os.path.join(self.root, rel)), self.MASK)
            if wd < 0:
                if ctypes.get_errno() == 2:  # ENOENT: removed since the walk, nothing to watch
                    continue
                return False
            self.paths[wd] = rel
            self.watched.add(rel)
        return True

    def pending(self) -> bool:
        """Whether an event since the last call names a walked path (or the queue overflowed)."""
        relevant = False
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return relevant
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, size = self.HEADER.unpack_from(data, offset)
                name = data[offset + self.HEADER.size:offset + self.HEADER.size + size].rstrip(b"\0")
                offset += self.HEADER.size + size
                if mask & self.IN_Q_OVERFLOW:
                    relevant = True
                    continue
                rel = self.paths.get(wd)
                if mask & self.IN_IGNORED:  # the directory is gone: a new one of that name needs a new watch
                    self.paths.pop(wd, None)
                    self.watched.discard(rel or "")
                    relevant = True
                    continue
                if rel is None:
                    relevant = True
                    continue
                if not name:  # the directory itself (deleted, moved)
                    relevant = True
                    continue
                text = os.fsdecode(name)
                path = os.path.join(rel, text) if rel else text
                if not (mask & self.IN_ISDIR and _skipped_dir(text, path)):  # a directory the walk skips: no change
                    relevant = True

    def close(self) -> None:
        os.close(self.fd)


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
    """The last walk (and git status) of the checkout; :meth:`check` compares the checkout with it.

    ``watch``: keep inotify watches (:class:`Watcher`, where available), so that :meth:`check` with
    ``cheap=True`` walks only after an event that concerns the walk."""

    def __init__(self, root: Path, watch: bool = False):
        self.root = str(root)
        self.watcher = Watcher.open(self.root) if watch else None
        dirs: list[str] = []
        self.files = walk(self.root, dirs)
        self.status = git_status(self.root)
        self._watch(dirs)

    def _watch(self, dirs: list[str]) -> None:
        if self.watcher is not None and not self.watcher.watch(dirs):
            self.watcher.close()
            self.watcher = None

    def check(self, cheap: bool = False) -> list[str]:
        """What changed since the last check (empty when nothing); the new state becomes the reference.
        ``cheap``: skip the walk when the watches saw no event (a full check where there are none)."""
        if self.watcher is not None:
            events = self.watcher.pending()
            if cheap and not events:
                return []
        dirs: list[str] = []
        now = walk(self.root, dirs)
        self._watch(dirs)
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
        config.stash[GUARD] = CheckoutGuard(config.rootpath, watch=True)


GUARD = pytest.StashKey[CheckoutGuard]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    """After the test's own teardown (and that of the fixtures it was the last user of), fail the test
    when the checkout changed."""
    yield
    guard = item.config.stash.get(GUARD, None)
    last_of_file = nextitem is None or nextitem.path != item.path
    changes = guard.check(cheap=not last_of_file) if guard is not None else []
    if changes:
        shown = "\n  ".join(changes[:20]) + (f"\n  ... and {len(changes) - 20} more" if len(changes) > 20 else "")
        pytest.fail(f"{item.nodeid} changed the checkout {item.config.rootpath} (tests write only under "
                    f"their tmp_path):\n  {shown}", pytrace=False)
