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
    from medcalc_maintained.conformance.check import Report


def _short(value: object, limit: int = 60) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 1] + "…"


def conformance_command(
    impl: str = typer.Option("ours", "--impl", help="What to check: `ours` (this package's calculators), a "
                             "Python `module:function` called as function(calculator_id, inputs), or `cmd:COMMAND`, "
                             "a program that answers one JSON line per request line (docs/conformance.md)."),
    calculator: Optional[List[int]] = typer.Option(None, "--calculator", "-c", help="Only this calculator id "
                                                   "(repeat for several); default all 55."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the whole report (every failing case "
                                            "with inputs, expected and got) as JSON here."),
    vectors: Optional[Path] = typer.Option(None, "--vectors", help="A folder of vector files to use instead of the "
                                           "packaged ones (each <id>.yaml, checked the same way)."),
) -> None:
    """Hold an implementation of the 55 calculators to the conformance vectors.

    Each calculator has hand-checked cases (`conformance/vectors/<id>.yaml`: inputs in the
    calculator's declared input schema, the expected output worked from the cited formula, and why
    the case is there). Prints one line per calculator, passed/cases, and its first failing case with
    expected vs got; exit 0 when every case passes, 1 when any fails, 2 for bad input (a vector file
    that breaks a rule, an implementation that cannot be loaded)."""
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
    finally:
        implementation.close()
    _render(report)
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
