"""Command line of medcalc-maintained: one command per pipeline stage (``medcalc-maintained --help``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from medcalc_maintained import config
from medcalc_maintained.io import DataError

app = typer.Typer(
    help=(
        "Maintain MedCalc-Bench labels like code: ingest the upstream split, apply the ledger of "
        "adjudicated corrections, audit, triage for physicians, validate and release."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
console = Console(stderr=False)
err = Console(stderr=True)


@app.callback()
def _root() -> None:
    """Maintain MedCalc-Bench labels like code (see the README for the pipeline)."""


def fail(exc: Exception, code: int = 2) -> None:
    """Print an input problem in one red line and exit non-zero."""
    err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@app.command()
def ingest(
    input: Optional[Path] = typer.Option(None, "--input", help="One upstream CSV (default: every split in params.yaml)."),
    split: str = typer.Option("test", "--split", help="Split name of --input."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params.ingest.out, data/interim)."),
    max_quarantine: Optional[int] = typer.Option(None, help="Allowed quarantined rows (default: params.ingest.max_quarantine)."),
) -> None:
    """Read upstream MedCalc-Bench CSVs into a typed DIR/instances.parquet.

    Keeps every upstream column verbatim and adds uid, split, calculator_id, output_type, entities
    (JSON) and the parsed ground truth. Unparseable rows go to DIR/quarantine.csv; the command fails
    when there are more than max_quarantine of them, or on a structural problem (missing column,
    duplicate Row Number, empty file, non-UTF-8 bytes), and then writes no instances.parquet.
    """
    from medcalc_maintained import ingest as stage

    root = config.project_root()
    params = config.load_params(root)
    section = params.get("ingest") or {}
    out_dir = out or root / section.get("out", "data/interim")
    limit = section.get("max_quarantine", 0) if max_quarantine is None else max_quarantine
    if input is not None:
        sources, notes = [(split, input)], []
    else:
        sources, notes = stage.sources_from_params(params, root)
    for note in notes:
        console.print(f"[dim]{note}[/]")
    try:
        result = stage.ingest(sources)
    except DataError as exc:
        fail(exc)
    too_many = len(result.quarantine) > limit
    stage.write_outputs(result, out_dir, write_instances=not too_many)
    table = Table(title="ingest", show_header=True)
    for col in ("split", "file", "rows read", "ingested", "calculators", "quarantined"):
        table.add_column(col)
    inst, q = result.instances, result.quarantine
    for name, path, n in result.files:
        part = inst[inst["split"] == name]
        table.add_row(name, str(path), str(n), str(len(part)), str(part["calculator_id"].nunique()),
                      str(int((q["split"] == name).sum()) if len(q) else 0))
    console.print(table)
    if too_many:
        for rec in result.quarantine.head(20).to_dict("records"):
            err.print(f"  {rec['split']} row {rec['row_number']} [{rec['column']}]: {rec['reason']}", highlight=False)
        fail(DataError(out_dir / "quarantine.csv",
                       f"{len(q)} row problem(s) quarantined, more than max_quarantine={limit}; "
                       "instances.parquet not written"))
    console.print(f"wrote {out_dir / 'instances.parquet'} ({len(inst)} rows)")


@app.command()
def summary() -> None:
    """Print what the pipeline produced (counts per stage, metrics, release), read from disk."""
    from medcalc_maintained.summary import print_summary

    if print_summary(config.project_root(), console) == 0:
        fail(RuntimeError("nothing to summarise: run `make run` (or `dvc repro`) first"), code=1)


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
