"""``dvc.lock`` as DVC reads it, and its repair after a ``dvc repro`` killed while it wrote the file
(``medcalc-maintained repair-lock``).

DVC rewrites ``dvc.lock`` in place; a process killed at that moment (``kill -9``, a full disk, a
power cut) can leave it empty or cut short, and every later ``dvc repro`` or ``dvc status`` then
fails on it. :func:`lock_problem` checks that ``dvc.lock`` is a YAML mapping with a ``stages`` mapping
that DVC's own lock-file schema accepts (a file cut inside ``hash: md5`` is valid YAML, yet DVC
refuses it); :func:`repair` restores the committed one (``git show HEAD:dvc.lock``) when it is not.
``make repro`` runs the command before ``dvc repro``, which then reruns the stages whose inputs changed
since that commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from medcalc_maintained.core.atomic import write_text_atomic
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

LOCK = "dvc.lock"


def lock_problem(text: str) -> str | None:
    """Why ``text`` is not a usable ``dvc.lock`` (None when it is)."""
    if not text.strip():
        return "is empty"
    try:
        doc = safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return "is not valid YAML" + (f" (line {mark.line + 1})" if mark else "")
    if not isinstance(doc, dict) or not isinstance(doc.get("stages"), dict):
        return "has no 'stages' mapping"
    return dvc_schema_problem(doc)


def dvc_schema_problem(doc: dict) -> str | None:
    """What DVC's own lock-file schema (``dvc.schema.COMPILED_LOCKFILE_SCHEMA``, the check every
    ``dvc`` command runs first) says of ``doc``, or None: a file cut inside ``hash: md5`` parses as
    YAML, but its ``hash:`` is null and DVC refuses the whole file."""
    try:
        from dvc.schema import COMPILED_LOCKFILE_SCHEMA  # type: ignore[import-untyped]
    except ImportError:  # no DVC here: nothing else reads the lock
        return None
    try:
        COMPILED_LOCKFILE_SCHEMA(doc)
    except Exception as exc:  # voluptuous.MultipleInvalid
        where = " -> ".join(str(p) for p in getattr(exc, "path", []) or [])
        return f"fails DVC's lock-file schema ({getattr(exc, 'msg', None) or exc}{f', in {where}' if where else ''})"
    return None


def committed_lock(root: Path) -> str:
    """``dvc.lock`` as committed at ``HEAD`` of the git repository at ``root``."""
    from medcalc_maintained.core.git import git

    proc = git("show", f"HEAD:{LOCK}", cwd=root, check=False)
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        raise DataError(root / LOCK, f"cannot restore it from git ({why[-1] if why else 'git failed'}); "
                        "recover it by hand (`git checkout dvc.lock`) or delete it and run `dvc repro`")
    return proc.stdout.decode("utf-8")


@dataclass(frozen=True)
class LockRepair:
    """What :func:`repair` found and did."""

    path: Path              # the project's dvc.lock
    exists: bool            # False: there is none (``dvc repro`` writes one); nothing done
    problem: str | None     # why it was not usable, and so was restored from git (None: it is valid)


def repair(root: Path) -> LockRepair:
    """Check the ``dvc.lock`` of the project at ``root``; when it is not usable (:func:`lock_problem`),
    replace it with the committed one. Raises :class:`DataError` naming the lock and its problem when
    the committed one cannot be read or is not usable either (the file is left as it is)."""
    lock = root / LOCK
    if not lock.is_file():
        return LockRepair(lock, False, None)
    problem = lock_problem(lock.read_text(encoding="utf-8", errors="replace"))
    if problem is None:
        return LockRepair(lock, True, None)
    try:
        text = committed_lock(root)
        if lock_problem(text) is not None:
            raise DataError(lock, f"{problem}, and the committed one is not valid either; recover it by hand")
    except DataError as exc:
        raise DataError(exc.path, f"{problem}; {exc.problem}") from None
    write_text_atomic(lock, text)
    return LockRepair(lock, True, problem)
