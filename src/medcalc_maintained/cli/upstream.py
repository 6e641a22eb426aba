"""Command ``upstream diff``: which rows changed between two upstream releases."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from medcalc_maintained.cli.common import console, guarded
from medcalc_maintained.cli.common import fail as _fail
from medcalc_maintained.core.errors import DataError

upstream_app = typer.Typer(help="Follow upstream MedCalc-Bench: which rows changed between two upstream files.",
                           no_args_is_help=True, rich_markup_mode="markdown")


def resolve(name: str, split: str = "test") -> Path:
    """An upstream file: a CSV path, or a version name such as ``v1.0`` or ``2024-06`` (its
    ``<split>_data.csv`` under the project's ``upstream.dir``)."""
    from medcalc_maintained.project import Project

    path = Project.load().upstream_file(name, split)
    if not path.is_file():
        raise DataError(path, "not an upstream CSV file (give a path, or a version under upstream.dir such as v1.0)")
    return path


def _print_summary(s: dict, seconds: float) -> None:
    console.print(f"upstream diff: {s['old']} ({s['old_rows']} rows) -> {s['new']} ({s['new_rows']} rows) "
                  f"in {seconds:.1f} s", highlight=False)
    table = Table(title="rows")
    table.add_column("class")
    table.add_column("rows", justify="right")
    for k in ("matched_unchanged", "matched_changed", "removed", "added", "ambiguous", "ambiguous_new"):
        table.add_row(k.replace("_", " "), str(s[k]))
    console.print(table)
    fields = Table(title=f"matched rows ({s['matched']}) where a field changed")
    fields.add_column("field")
    fields.add_column("rows", justify="right")
    for f, n in s["changed"].items():
        fields.add_row(f, str(n))
    console.print(fields)
    console.print("basis of the matches: " + ", ".join(f"{k} {v}" for k, v in s["basis"].items()), highlight=False)


@upstream_app.command("diff")
def diff_cmd(
    old: Optional[str] = typer.Argument(None, help="The old upstream CSV or version (e.g. 2024-06). Omit OLD and NEW for stage upstream-diff."),
    new: Optional[str] = typer.Argument(None, help="The new upstream CSV or version (e.g. v1.0)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Directory for row_map.csv, summary.json and changes_per_calculator.png (required with OLD and NEW)."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Least token-set Jaccard similarity of a lightly edited note (default: the rule's 0.8)."),
    no_note_id: bool = typer.Option(False, "--no-note-id", help="Do not use Note ID to break ties (content only)."),
) -> None:
    """Match the rows of two upstream files and write the row map and a summary.

    Rows are matched within a calculator by note and question (exact, then lightly edited notes by
    token similarity, Note ID only breaking ties); each matched pair lists the fields that changed,
    labels compared by the package's answer semantics. Exit 2 when a file cannot be read.

    Without OLD and NEW this is the pipeline stage `upstream-diff`: `upstream.base` -> `upstream.version`
    of params.yaml, per split, into `upstream.diff_out`.
    """
    from medcalc_maintained.upstream.diff import diff_and_write

    t0 = time.perf_counter()
    if old is None and new is None:
        _stage_diff(t0)
        return
    if old is None or new is None or out is None:
        _fail(DataError("upstream diff", "give OLD, NEW and --out, or none of them (the pipeline stage)"))
    try:
        guarded(out)
        old_path, new_path = resolve(old), resolve(new)
        with console.status("matching rows") as status:
            result, written = diff_and_write(old_path, new_path, out, threshold=threshold, use_note_id=not no_note_id,
                                             progress=status.update)
    except DataError as exc:
        _fail(exc)
    _print_summary(result.summary, time.perf_counter() - t0)
    for p in written:
        console.print(f"wrote {p}", highlight=False)


def _stage_diff(t0: float) -> None:
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import upstream_diff as stage

    try:
        with console.status("matching rows"):
            diffs = stage.run(Project.load())
    except DataError as exc:
        _fail(exc)
    for split, result in diffs.items():
        console.print(f"split {split}:", highlight=False)
        _print_summary(result.summary, time.perf_counter() - t0)


def register(app: typer.Typer) -> None:
    """Add the ``upstream`` command group to the main CLI."""
    app.add_typer(upstream_app, name="upstream")
