"""``conformance``: run the calculators' conformance vectors against an implementation (argument
parsing and printing only; the work is :mod:`medcalc_maintained.conformance`)."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded_if_in_project

if TYPE_CHECKING:
    from medcalc_maintained.conformance.base import Implementation
    from medcalc_maintained.conformance.check import Report
    from medcalc_maintained.conformance.errata import ErrataReport
    from medcalc_maintained.conformance.vectors import VectorFile


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def conformance_command(
    impl: str = typer.Option("ours", "--impl", help="What to check: `ours` (this package's calculators), "
                             "`medcalc-bench` (the PyPI package 1.7.0; the errata extra), `recorded:NAME` (answers "
                             "recorded once, e.g. recorded:verified), a Python `module:function` called as "
                             "function(calculator_id, inputs) (a module in the current folder is found), or "
                             "`cmd:COMMAND`, a program that answers each JSON request line with a JSON line carrying "
                             "the request's id (docs/conformance.md)."),
    calculator: Optional[List[int]] = typer.Option(None, "--calculator", "-c", help="Only this calculator id "
                                                   "(repeat for several); default all 55."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the whole report (every failing case "
                                            "with inputs, expected and got) as JSON here."),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="Vectors to use instead of the packaged ones: a "
                                           "folder of <id>.yaml files, or a release's conformance/vectors.json (its "
                                           "sha256 checked); checked the same way."),
    errata: bool = typer.Option(False, "--errata", help="Also run the implementation on the v1.0 entities of all "
                                "1,047 rows beside the reference calculators and list each erratum with its "
                                "consequence: rows that differ, v1.0 labels that are its answer, the release that "
                                "fixed them, and its adjudicated status (inside the project, after `dvc repro "
                                "release-tables`)."),
) -> None:
    """Hold an implementation of the 55 calculators to the conformance vectors (docs/conformance.md).

    Each calculator has hand-checked cases (`conformance/vectors/<id>.yaml`: inputs in the
    calculator's declared input schema, the expected output worked from the cited formula, and why
    the case is there). Prints one line per calculator, passed/cases, and its first failing case with
    expected vs got; exit 0 when every case passes, 1 when any fails, 2 for bad input (a vector file
    that breaks a rule, an implementation that cannot be loaded). With --errata, each erratum and its
    consequence on the v1.0 labels follow (what stage errata publishes for the implementations it runs)."""
    from medcalc_maintained.conformance import load_vectors, resolve, run_vectors, vectors_digest
    from medcalc_maintained.conformance.check import write_report
    from medcalc_maintained.core.errors import DataError

    try:
        if json_out is not None:
            guarded_if_in_project(json_out)
        files = load_vectors(calculator, vectors)
        implementation = resolve(impl)
    except (DataError, ValueError) as exc:
        fail(exc)
    try:
        with _progress(impl, sum(len(f.cases) for f in files)) as advance:
            report = run_vectors(files, implementation, digest=vectors_digest(vectors), progress=advance)
        found = _errata(implementation, files, report.digest) if errata else None
    finally:
        implementation.close()
    _render(report)
    if found is not None:
        _render_errata(found)
    if json_out is not None:
        write_report(report, json_out)
        console.print(f"report: {json_out}", highlight=False, soft_wrap=True)
    if not report.ok:
        raise typer.Exit(1)


@contextmanager
def _progress(impl: str, total: int) -> Iterator[Callable[[int], None]]:
    from rich.progress import Progress

    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        task = bar.add_task(f"{impl}: {total} cases", total=total)
        yield lambda n: bar.advance(task, n)


def _errata(implementation: Implementation, files: list[VectorFile], digest: str) -> ErrataReport:
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import errata as stage

    try:
        return stage.errata_of(Project.load(), implementation, files, digest)
    except DataError as exc:
        fail(exc)


def _render_errata(found: ErrataReport) -> None:
    """One row per erratum: cases failed, v1.0 rows that differ, labels that are its answer, fixed in, status."""
    table = Table(title=f"errata of {escape(found.implementation)} (v1.0 entities beside the reference calculators)")
    for col in ("id", "calculator", "failed", "rows", "labels", "fixed in", "status"):
        table.add_column(col, overflow="fold")
    for e in found.errata:
        table.add_row(str(e.calculator_id), escape(e.calculator), f"{e.vectors_failed}/{e.vectors}",
                      f"{e.rows_differ}/{e.rows}", str(e.rows_label_follows_implementation),
                      escape(", ".join(f"{v} ({n})" for v, n in e.fixed_in.items())), e.status)
    console.print(table)
    console.print(f"{len(found.errata)} errata; {sum(e.rows_differ for e in found.errata)} v1.0 rows differ from the "
                  f"declared definitions, {sum(e.rows_label_follows_implementation for e in found.errata)} of whose "
                  "v1.0 labels are its answer (rows: differing/all of the calculator; labels: v1.0 labels that are "
                  "its answer; reasons: conformance/errata.yaml, data/errata/errata.md)", highlight=False,
                  soft_wrap=True)


def _render(report: Report) -> None:
    """One table row per calculator (passed/cases), then each failing calculator's first failing case
    on a line of its own (whole, never folded), then the totals."""
    table = Table(title=f"conformance of {escape(report.implementation)} (vectors sha256 {report.digest[:12]})")
    for col in ("id", "calculator", "passed"):
        table.add_column(col, overflow="fold")
    for c in report.calculators:
        mark = "[green]" if c.passed == c.cases else "[red]"
        table.add_row(str(c.calculator_id), escape(c.vectors.name[:40]), f"{mark}{c.passed}/{c.cases}[/]")
    console.print(table)
    for c in report.calculators:
        if (first := c.first_failure) is not None:
            console.print(f"{c.calculator_id} {escape(c.vectors.name)}: first failing case {escape(first.case.id)}: "
                          f"expected {escape(_short(first.case.expected))}, got {escape(_short(first.got))} "
                          f"({escape(first.reason)})", highlight=False, soft_wrap=True)
    calcs_ok, calcs, cases_ok, cases = report.totals()
    console.print(f"{calcs_ok} of {calcs} calculators pass every case; {cases_ok} of {cases} cases pass "
                  f"({escape(report.describe)})", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``conformance`` to the main CLI."""
    app.command("conformance")(conformance_command)
