"""``repair-lock``: recover from a ``dvc repro`` that was killed while it wrote ``dvc.lock``.

DVC rewrites ``dvc.lock`` in place; a process killed at that moment (``kill -9``, a full disk, a
power cut) can leave it empty or cut short, and every later ``dvc repro`` or ``dvc status`` then
fails on it. This command checks that ``dvc.lock`` is a YAML mapping with a ``stages`` mapping that
DVC's own lock-file schema accepts (a file cut inside ``hash: md5`` is valid YAML, yet DVC refuses
it); when it is not, it restores the committed one (``git show HEAD:dvc.lock``) and says so. ``make
repro`` runs it before ``dvc repro``; ``dvc repro`` then reruns the stages whose inputs changed
since that commit.
"""

from __future__ import annotations

from pathlib import Path

import typer
import yaml

from medcalc_maintained.cli.common import console, fail
from medcalc_maintained.core.io import DataError, write_text_atomic
from medcalc_maintained.project import find_root

LOCK = "dvc.lock"


def lock_problem(text: str) -> str | None:
    """Why ``text`` is not a usable ``dvc.lock`` (None when it is)."""
    if not text.strip():
        return "is empty"
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
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
    from medcalc_maintained.release.git import git

    proc = git("show", f"HEAD:{LOCK}", cwd=root, check=False)
    if proc.returncode != 0:
        why = proc.stderr.decode(errors="replace").strip().splitlines()
        raise DataError(root / LOCK, f"cannot restore it from git ({why[-1] if why else 'git failed'}); "
                        "recover it by hand (`git checkout dvc.lock`) or delete it and run `dvc repro`")
    return proc.stdout.decode("utf-8")


def repair_lock() -> None:
    """Check dvc.lock; when a killed `dvc repro` left it empty or half-written, restore it from git (HEAD)."""
    root = find_root()
    lock = root / LOCK
    if not lock.is_file():
        console.print(f"no {LOCK} in {root}: `dvc repro` writes one")
        return
    problem = lock_problem(lock.read_text(encoding="utf-8", errors="replace"))
    if problem is None:
        console.print(f"{LOCK} is valid")
        return
    try:
        text = committed_lock(root)
        if lock_problem(text) is not None:
            raise DataError(lock, f"{problem}, and the committed one is not valid either; recover it by hand")
    except DataError as exc:
        fail(DataError(exc.path, f"{problem}; {exc.problem}"), code=1)
    write_text_atomic(lock, text)
    console.print(f"{lock} {problem} (a killed `dvc repro`?): restored from git (HEAD); "
                  "`dvc repro` reruns what changed since", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("repair-lock")(repair_lock)
