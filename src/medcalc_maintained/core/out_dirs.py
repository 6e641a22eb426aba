"""What a command may write into: a new or empty directory, or (with ``--force``) its own earlier output.

``--force`` replaces only what the same command wrote before: a directory whose entries are all
files the command writes (and its always-written files are all there). A directory the command does
not know (``.git``, ``src``, a user's folder) is refused naming it, with or without ``--force``,
before the work and again at the moment of the swap (``core/atomic.py: swap_in_dir``).
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Iterable

from medcalc_maintained.core.errors import OutRefused


def check_replace(out: os.PathLike | str, *, command: str, writes: Iterable[str],
                  required: Iterable[str], force: bool, option: str = "--out",
                  caches: dict[str, str] | None = None, force_option: str | None = "--force") -> None:
    """Refuse (:class:`OutRefused` naming ``out``) to write into ``out`` unless it is missing, an
    empty directory, or, with ``force``, a directory that ``command`` wrote: every entry a plain
    file named in ``writes`` (or a folder of ``caches``, name -> the suffix of every file in it,
    such as lm_eval's ``__pycache__``), the files of ``required`` all present. ``force_option``:
    the option that replaces (``None``: the command replaces its own output without one). Called
    before the work and again at the moment of the swap (``core/atomic.py: swap_in_dir``)."""
    out = Path(out)
    where = f"{option} {out}"
    if out.is_symlink():
        raise OutRefused(where, "is a symbolic link; choose a directory of its own")
    if not out.exists():
        return
    if not out.is_dir():
        raise OutRefused(where, "exists and is not a directory; choose another --out")
    entries = sorted(out.iterdir())
    if not entries:
        return
    if not force:
        raise OutRefused(where, "exists and is not empty; choose another --out or pass --force to replace it")
    allowed, caches = set(writes), caches or {}
    foreign = [p.name for p in entries
               if not ((p.name in allowed and p.is_file() and not p.is_symlink())
                       or (p.name in caches and p.is_dir() and not p.is_symlink()
                           and all(c.is_file() and not c.is_symlink() and c.name.endswith(caches[p.name])
                                   for c in p.iterdir())))]
    missing = sorted(set(required) - {p.name for p in entries})
    if foreign or missing:
        why = (f"holds {len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'} `{command}` does not write "
               f"({', '.join(repr(n) for n in foreign[:3])}{', ...' if len(foreign) > 3 else ''})" if foreign
               else f"lacks {', '.join(missing[:3])}")
        raise OutRefused(where, f"is not an earlier output of `{command}` ({why}); "
                                f"{force_option or '`' + command + '`'} replaces only that. "
                                "Choose another directory")


def new_run_dir(parent: os.PathLike | str) -> Path:
    """A directory under ``parent`` that does not exist yet, named by the UTC time
    (``<parent>/20260314-101500``, with ``-2``, ``-3``... when taken): the default ``--out`` of
    ``evaluate`` and ``regrade`` (under ``project.evaluation_runs``, never a DVC output)."""
    base = Path(parent) / dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
    out, n = base, 1
    while out.exists():
        n += 1
        out = base.with_name(f"{base.name}-{n}")
    return out
