"""Running the pipeline: ``repair-lock`` recovers from a ``dvc repro`` that was killed while it wrote
``dvc.lock`` (the check and the repair are :mod:`medcalc_maintained.devtools.dvc_lock`); ``repro`` runs
``dvc repro`` and times its stages (:mod:`medcalc_maintained.devtools.stage_times`). ``make repro`` runs
the one, then the other."""

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


def repro(ctx: typer.Context) -> None:
    """Run `dvc repro` (any arguments are passed to it: a stage name, --dry, -f) and time its stages.

    DVC's output is shown as it comes. The seconds of each stage (from its "Running stage" line, or
    the line that says it was skipped, to the next one) go to params `repro.times`
    (build/repro/stage-times.json, ignored by git), which `medcalc-maintained summary` prints slowest first.
    Exits with DVC's exit code.
    """
    from medcalc_maintained.devtools.stage_times import run_repro, write_times
    from medcalc_maintained.project import Project

    project = Project.load()
    code, times, total = run_repro(project.root, list(ctx.args))
    write_times(project.stage_times, times, total, code, list(ctx.args))
    ran = [t for t in times if t.ran]
    slowest = max(ran, key=lambda t: t.seconds, default=None)
    console.print(f"dvc repro: {len(ran)} stage(s) ran, {len(times) - len(ran)} unchanged, in {total:.1f} s"
                  + (f"; slowest {slowest.stage} ({slowest.seconds:.1f} s)" if slowest else "")
                  + f"; times in {project.stage_times}", highlight=False, soft_wrap=True)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.command("repair-lock")(repair_lock)
    app.command("repro", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(repro)
