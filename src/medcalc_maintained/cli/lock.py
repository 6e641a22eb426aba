"""``repair-lock``: recover from a ``dvc repro`` that was killed while it wrote ``dvc.lock`` (the check
and the repair are :mod:`medcalc_maintained.devtools.dvc_lock`). ``make repro`` runs it before
``dvc repro``."""

from __future__ import annotations

import typer

from medcalc_maintained.cli.common import console, fail
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import find_root


def repair_lock() -> None:
    """Check dvc.lock; when a killed `dvc repro` left it empty or half-written, restore it from git (HEAD)."""
    from medcalc_maintained.devtools.dvc_lock import LOCK, repair

    root = find_root()
    try:
        done = repair(root)
    except DataError as exc:
        fail(exc, code=1)
    if not done.exists:
        console.print(f"no {LOCK} in {root}: `dvc repro` writes one")
    elif done.problem is None:
        console.print(f"{LOCK} is valid")
    else:
        console.print(f"{done.path} {done.problem} (a killed `dvc repro`?): restored from git (HEAD); "
                      "`dvc repro` reruns what changed since", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("repair-lock")(repair_lock)
