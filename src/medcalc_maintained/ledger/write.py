"""The one safe way to write a ledger file: one writer at a time, only inside the hand-written ledger
directory, the whole ledger checked with the new text, then an atomic replace.

* :func:`ledger_lock` — an exclusive ``fcntl.flock`` on the ledger directory itself (no lock file to
  track or ignore), held by every command that writes the ledger around its read, check and write;
  a second writer waits for it.
* :func:`ledger_target` — the only files a hand command may write: ``*.yaml``/``*.yml`` directly in
  :attr:`Project.ledger_dir`, never the generated campaign ledger.
* :func:`write_checked` — the candidate text is read back and applied, together with every other
  ledger record, to the upstream instances in a scratch directory; only when that succeeds (and the
  file is still what the caller read) is ``target`` replaced atomically. A problem is reported against
  ``target`` (never the scratch file) and nothing is written.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import pandas as pd

from medcalc_maintained.core.atomic import clean_stale, naming_target, write_text_atomic
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.ledger.apply import check_and_apply
from medcalc_maintained.ledger.records import LedgerError, Record, load

LEDGER_SUFFIXES = (".yaml", ".yml")
SCRATCH_PREFIX = "medcalc-ledger-write-"


@contextlib.contextmanager
def ledger_lock(directory: Path) -> Iterator[Path]:
    """Hold the exclusive ledger lock of ``directory`` (waits while another writer holds it; the
    kernel releases it when the holder exits, even when it is killed)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(directory, "the ledger directory does not exist")
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield directory
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def ledger_target(target: Path, ledger_dir: Path, generated: Sequence[Path] = ()) -> Path:
    """``target`` when a hand command may write it: a ``.yaml``/``.yml`` file directly in
    ``ledger_dir`` and none of the ``generated`` files; a :class:`DataError` naming it otherwise."""
    target = Path(target)
    if target.suffix not in LEDGER_SUFFIXES:
        raise DataError(target, "a ledger file must end in .yaml or .yml (other files are never applied)")
    if target.parent.resolve() != Path(ledger_dir).resolve():
        raise DataError(target, f"is not directly in the hand-written ledger directory {ledger_dir} "
                                "(records anywhere else are never applied)")
    if target.exists() and not target.is_file():
        raise DataError(target, "is not a regular file")
    if any(target.resolve() == Path(g).resolve() for g in generated):
        raise DataError(target, "is a generated ledger file (written by its pipeline stage only)")
    return target


def _current_text(target: Path) -> str | None:
    return target.read_text(encoding="utf-8") if target.is_file() else None


def write_checked(target: Path, text: str, *, others: list[Record], instances: pd.DataFrame,
                  expected: str | None = None, frozen: Mapping[str, Any] | None = None) -> list[Record]:
    """Write ``text`` to ``target`` if it parses and the ledger ``others`` + it still applies.

    ``expected`` is the text the caller read from ``target`` (``None``: the file did not exist);
    when the file changed or appeared since, nothing is replaced. Returns the records read from the
    new text. ``frozen``: the published releases' input verdicts (``ledger/published.py: frozen_verdicts``),
    which hold their records. Raises :class:`LedgerError` (problems of the candidate are named by ``target``) or
    :class:`DataError`, and leaves ``target`` untouched otherwise.
    """
    target = Path(target)
    scratch = Path(tempfile.gettempdir())
    clean_stale(scratch, SCRATCH_PREFIX)  # left by a killed writer
    with tempfile.TemporaryDirectory(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-") as tmp:
        cand = Path(tmp) / target.name
        cand.write_text(text, encoding="utf-8")
        try:
            new = load([cand])
            for rec in new:  # checked as if it were at target: same order and names as after the write
                rec.path = str(target)
            check_and_apply(instances, list(others) + new, upto=None, frozen=frozen)
        except LedgerError as exc:
            for p in exc.problems:
                if p.path == str(cand):
                    p.path = str(target)
            raise
    if _current_text(target) != expected:
        raise DataError(target, "changed while this command ran (another writer?); nothing written, run it again")
    if expected is None:
        _create_new(target, text)
    else:
        write_text_atomic(target, text)
    return new


def _create_new(target: Path, text: str) -> None:
    """Create ``target`` atomically, failing (never replacing) when a file of that name appeared."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with naming_target(target), os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise DataError(target, "appeared while this command ran (another writer?); nothing written") from None
    finally:
        os.unlink(tmp)
