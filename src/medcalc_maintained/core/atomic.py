"""File writing that never leaves a partial output behind: a file is written beside its target and
renamed onto it, a directory of files is replaced as a whole, and a write that fails for want of
space names the file it was writing."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from medcalc_maintained.core.errors import DataError, OutRefused

# -- a full disk ------------------------------------------------------------------------------
#
# A write that fails for want of space (ENOSPC, or EDQUOT: over the quota) raises an OSError that
# names no file when it comes from a write or a close. Every writer of this module (and the release
# build and the ledger writer) names its target with :func:`naming_target`; the command line prints
# such an error as one line, ``error: <file>: no space left on device; nothing written``, and exits 1
# (``cli/common.py: no_space_exits``). The writers leave nothing partial: the temporary file or
# scratch directory is removed and the target keeps its old content.

NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def is_no_space(exc: BaseException) -> bool:
    """Whether ``exc`` is a write that failed for want of space (also when a library such as
    pyarrow reports it with the system's message but without the errno)."""
    return isinstance(exc, OSError) and (exc.errno in NO_SPACE or os.strerror(errno.ENOSPC) in str(exc)
                                         or os.strerror(errno.EDQUOT) in str(exc))


@contextlib.contextmanager
def naming_target(target: os.PathLike | str, *, always: bool = False) -> Iterator[None]:
    """Re-raise a no-space error that names no file (with ``always``: any no-space error, e.g. one
    naming a file of a scratch directory) as ``OSError(ENOSPC, ..., target)``."""
    try:
        yield
    except OSError as exc:
        if is_no_space(exc) and (always or not exc.filename):
            code = exc.errno if exc.errno in NO_SPACE else errno.ENOSPC
            raise OSError(code, os.strerror(code), str(target)) from None
        raise


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _current_umask()


@contextlib.contextmanager
def atomic_path(target: os.PathLike | str) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it onto ``target`` only on success."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name[:100]}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        with naming_target(target):
            yield tmp_path
        os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp creates 0600; give the file ordinary permissions
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_atomic(target: os.PathLike | str, writer: Callable[[Path], object]) -> Path:
    """Call ``writer(tmp_path)`` (what it returns is not used) and move the result onto ``target`` atomically."""
    with atomic_path(target) as tmp:
        writer(tmp)
    return Path(target)


def write_text_atomic(target: os.PathLike | str, text: str) -> Path:
    return write_atomic(target, lambda p: p.write_text(text, encoding="utf-8"))


def write_parquet(path: os.PathLike | str, df) -> Path:
    """``df`` to ``path`` atomically, without the index."""
    return write_atomic(path, lambda p: df.to_parquet(p, index=False))


def write_json(path: os.PathLike | str, obj) -> Path:
    """``obj`` as indented JSON text to ``path`` atomically."""
    return write_text_atomic(path, json.dumps(obj, indent=2) + "\n")


# -- directories replaced as a whole -----------------------------------------------------------
#
# A multi-file output (a release build; an LLM stage's tables with their run record) is written into a
# new directory beside the old one, which is then swapped in with one atomic rename (Linux
# ``renameat2(RENAME_EXCHANGE)``), so a reader, or a run killed at any point, sees either the whole old
# set or the whole new one. Scratch directories carry the writer's pid; the next run removes those
# whose process is gone.

_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap the directories ``a`` and ``b``; False when the system cannot."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    rc = fn(at_fdcwd, os.fsencode(str(a)), at_fdcwd, os.fsencode(str(b)), _RENAME_EXCHANGE)
    if rc != 0:
        err = ctypes.get_errno()
        if err in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: not supported here
            return False
        raise OSError(err, os.strerror(err), str(b))
    return True


#: ``check(target)``: raises :class:`DataError` when ``target`` may not be replaced (now)
Check = Callable[[Path], None]


def swap_in_dir(new: Path, target: Path, *, check: Check | None = None) -> None:
    """Put the complete directory ``new`` at ``target`` (replacing it as a whole) and remove the old one.
    ``check(target)`` runs at the moment of the swap (and, after an exchange, on the set swapped out,
    which is swapped back when a file was saved into it meanwhile): a target that is no longer the
    command's own output is refused and kept; ``new`` is left to the caller."""
    import shutil

    new, target = Path(new), Path(target)
    os.chmod(new, 0o755)
    restore_interrupted(target)
    if check is not None:
        check(target)
    if not target.exists() and not target.is_symlink():
        os.replace(new, target)
        return
    if _exchange(new, target):
        if check is not None:
            _recheck_swapped_out(new, target, check)
        shutil.rmtree(new, ignore_errors=True)  # ``new`` now holds the old set
        return
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    os.replace(target, old)  # a kill here leaves ``old``: the next writer puts it back (restore_interrupted)
    try:
        os.replace(new, target)
    except BaseException:
        os.replace(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def _recheck_swapped_out(swapped: Path, target: Path, check: Check) -> None:
    """After an exchange: when the old set (now at ``swapped``) fails ``check`` (a file was saved into
    it between the check and the exchange), exchange back and raise the check's error."""
    try:
        check(swapped)
    except DataError as exc:
        _exchange(swapped, target)
        check(target)  # names the target
        raise exc


def restore_interrupted(target: Path) -> Path | None:
    """When ``target`` is missing and a swap of a process that is gone left the old set aside
    (``.<name>.old-<pid>``, killed between the two renames of :func:`swap_in_dir`'s fallback), put it
    back at ``target``; returns it then."""
    target = Path(target)
    if target.exists() or target.is_symlink() or not target.parent.is_dir():
        return None
    pat = re.compile(rf"^{re.escape(f'.{target.name}.old-')}(\d+)$")
    left = [p for p in target.parent.iterdir() if (m := pat.match(p.name)) and not _alive(int(m.group(1)))
            and p.is_dir() and not p.is_symlink()]
    if not left:
        return None
    os.replace(max(left, key=lambda p: p.stat().st_mtime_ns), target)
    return target


def scratch_dir(target: Path) -> Path:
    """A new scratch directory beside ``target`` (``.<name>.<pid>-XXXX``), after restoring an old set a
    killed swap left aside (:func:`restore_interrupted`) and removing the scratch directories of
    earlier runs whose process no longer exists."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    restore_interrupted(target)
    clean_stale(target.parent, f".{target.name}.")
    return Path(tempfile.mkdtemp(prefix=f".{target.name}.{os.getpid()}-", dir=target.parent))


def write_dir(target: os.PathLike | str, contents: Callable[[Path], object] | dict[str, str], *,
              check: Check | None = None) -> Path:
    """Write directory ``target`` whole: ``contents`` (``writer(directory)``, or file name -> text) fills a
    scratch sibling (:func:`scratch_dir`) that :func:`swap_in_dir` puts at ``target`` (``check`` at the swap)."""
    import shutil

    tmp = scratch_dir(Path(target))
    try:
        for name, text in contents.items() if isinstance(contents, dict) else ():
            (tmp / name).write_text(text, encoding="utf-8")
        if callable(contents):
            contents(tmp)
        swap_in_dir(tmp, Path(target), check=check)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return Path(target)


def clean_stale(parent: Path, prefix: str) -> list[Path]:
    """Remove ``parent/<prefix><pid>-*`` and ``parent/<prefix>old-<pid>`` left by processes that are gone."""
    import shutil

    removed = []
    pat = re.compile(rf"^{re.escape(prefix)}(?:old-)?(\d+)(?:-.*)?$")
    for p in Path(parent).iterdir() if Path(parent).is_dir() else []:
        m = pat.match(p.name)
        if not m or _alive(int(m.group(1))):
            continue
        shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        removed.append(p)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _carried(directory: Path, written: set[str]) -> dict[str, tuple[int, int, int]]:
    """The entries of ``directory`` that :func:`replace_files` carries over (every one not in
    ``written``), by name -> (inode, size, mtime); refused (:class:`OutRefused`) when one is a folder
    or any entry but a plain file or a link (replacing the directory would lose it)."""
    import stat

    found: dict[str, tuple[int, int, int]] = {}
    for p in sorted(directory.iterdir()) if directory.is_dir() else []:
        st = p.lstat()
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)) or (p.name in written and stat.S_ISLNK(st.st_mode)):
            raise OutRefused(directory, f"holds {'the folder ' if stat.S_ISDIR(st.st_mode) else ''}{p.name!r}, which "
                                        "replacing the directory would lose; nothing written (choose another directory)")
        if p.name not in written:
            found[p.name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return found


def replace_files(directory: Path, writers: dict[str, Callable[[Path], object]], *,
                  check: Check | None = None) -> list[Path]:
    """Write the set of files ``writers`` (name -> ``writer(path)``) into ``directory`` as a whole:
    every other entry already there (a plain file or a link) is carried over, and the directory is
    swapped in at once. A directory holding a folder is refused, and so is one whose entries change
    while the files are written (what was saved into it would be lost); ``check(directory)`` runs
    first and again at the moment of the swap."""
    import shutil

    directory = Path(directory)
    if check is not None:
        check(directory)
    carried = _carried(directory, set(writers))

    def fill(tmp: Path) -> None:
        for name in carried:
            shutil.copy2(directory / name, tmp / name, follow_symlinks=False)
        for name, writer in writers.items():
            with naming_target(directory / name):
                writer(tmp / name)
            os.chmod(tmp / name, 0o666 & ~_UMASK)

    def unchanged(target: Path) -> None:
        if check is not None:
            check(target)
        if _carried(target, set(writers)) != carried:
            raise OutRefused(directory, "changed while the new files were written (an entry was added, removed "
                                        "or saved); nothing written, run the command again")

    write_dir(directory, fill, check=unchanged)
    return [directory / name for name in writers]
