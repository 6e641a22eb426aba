"""Commands ``upstream diff`` and ``ledger rebase``: following new upstream releases."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, err, fail as _fail, fail_ledger
from medcalc_maintained.core.io import DataError

upstream_app = typer.Typer(help="Follow upstream MedCalc-Bench: which rows changed between two upstream files.",
                           no_args_is_help=True, rich_markup_mode="markdown")
ledger_app = typer.Typer(help="Operations on the whole corrections ledger.", no_args_is_help=True,
                         rich_markup_mode="markdown")


def resolve(name: str) -> Path:
    """An upstream file: a CSV path as given (a version name such as `v1.0` needs a Project path;
    until then a name that is not a file is refused)."""
    p = Path(name)
    if p.is_file():
        return p
    raise DataError(p, "not an upstream CSV file (give the path of the test_data.csv of that version)")


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
    old: str = typer.Argument(..., help="The old upstream CSV (e.g. the 2024-06 test_data.csv)."),
    new: str = typer.Argument(..., help="The new upstream CSV (e.g. the v1.0 test_data.csv)."),
    out: Path = typer.Option(..., "--out", help="Directory for row_map.csv, summary.json and changes_per_calculator.png."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Least token-set Jaccard similarity of a lightly edited note (default: the rule's 0.8)."),
    no_note_id: bool = typer.Option(False, "--no-note-id", help="Do not use Note ID to break ties (content only)."),
) -> None:
    """Match the rows of two upstream files and write the row map and a summary.

    Rows are matched within a calculator by note and question (exact, then lightly edited notes by
    token similarity, Note ID only breaking ties); each matched pair lists the fields that changed,
    labels compared by the package's answer semantics. Exit 2 when a file cannot be read.
    """
    from medcalc_maintained.upstream import diff as d
    from medcalc_maintained.upstream.identity import THRESHOLD

    t0 = time.perf_counter()
    try:
        with console.status("matching rows"):
            result = d.diff_files(resolve(old), resolve(new), threshold=THRESHOLD if threshold is None else threshold,
                                  use_note_id=not no_note_id)
        with console.status("writing the row map, summary and plot"):
            written = d.write(result, out)
    except DataError as exc:
        _fail(exc)
    _print_summary(result.summary, time.perf_counter() - t0)
    for p in written:
        console.print(f"wrote {p}", highlight=False)


@ledger_app.command("rebase")
def rebase_cmd(
    onto: str = typer.Option(..., "--onto", help="The new upstream CSV to carry the ledger to."),
    base: Optional[str] = typer.Option(None, "--from", help="The upstream CSV the ledger was written against (default: the project's test split)."),
    ledger: Optional[list[Path]] = typer.Option(None, "--ledger", help="Ledger file or directory (repeatable; default: the project's ledger)."),
    out: Path = typer.Option(..., "--out", help="New directory for the rebased ledger, the held records and the report."),
    split: str = typer.Option("test", "--split", help="The split the two files hold."),
) -> None:
    """Carry every ledger record to a new upstream release (the existing ledger is not changed).

    Each record is `carried` (uid renumbered), `upstreamed` (upstream now has our value: kept as
    history), `conflict` (upstream changed the label to a third value, or the note or question;
    both values in the report) or `orphaned` (row removed). The rebased ledger is applied to the
    new upstream before anything is written. Exit 2 for bad input, 1 when the rebased ledger does
    not apply.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages.ingest import ingest, read_upstream_csv
    from medcalc_maintained.upstream import diff as d
    from medcalc_maintained.upstream.rebase import rebase

    try:
        project = Project.load() if base is None or not ledger else None
        base_path = resolve(base) if base else dict((s, p) for s, p, _ in project.upstream_sources())[split]
        new_path = resolve(onto)
        with console.status("matching rows"):
            old_df, new_df = read_upstream_csv(base_path), read_upstream_csv(new_path)
            diff = d.diff_frames(old_df, new_df)
            new_inst = ingest([(split, new_path)]).instances
        with console.status("rebasing and checking the rebased ledger"):
            result = rebase(list(ledger) if ledger else project.ledger_paths, diff, old_df, new_df, new_inst, out,
                            onto=str(new_path), split=split)
    except LedgerError as exc:
        if any(p.path.startswith(str(out)) for p in exc.problems):  # the rebased ledger does not apply
            for prob in exc.problems[:50]:
                err.print(f"  {escape(str(prob))}", highlight=False, soft_wrap=True)
            _fail(DataError(out, f"the rebased ledger does not apply ({len(exc.problems)} problem(s)); nothing written"), code=1)
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    s = result.summary
    console.print(f"ledger rebase onto {new_path}: {s['records']} records: carried {s['carried']}, upstreamed "
                  f"{s['upstreamed']}, conflict {s['conflict']}, orphaned {s['orphaned']}; the rebased ledger applies",
                  highlight=False)
    for line in result.report[result.report["class"] == "conflict"].head(20).itertuples():
        console.print(f"  conflict {line.id}: uid {line.old_uid} -> {line.new_uid}: {line.reason}", highlight=False)
    for p in result.written:
        console.print(f"wrote {p}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add the ``upstream`` and ``ledger`` command groups to the main CLI."""
    app.add_typer(upstream_app, name="upstream")
    app.add_typer(ledger_app, name="ledger")
