"""``medcalc-maintained summary``: what the pipeline produced, read from its outputs on disk.

Each section reads one stage's output and is skipped (with a note) when that output is absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd
from rich.console import Console
from rich.table import Table

Section = Callable[[Path, Console], bool]
SECTIONS: list[tuple[str, Section]] = []


def section(title: str) -> Callable[[Section], Section]:
    def deco(fn: Section) -> Section:
        SECTIONS.append((title, fn))
        return fn

    return deco


def counts_table(title: str, counts: pd.Series, total_label: str = "total") -> Table:
    t = Table(title=title)
    t.add_column(counts.index.name or "value")
    t.add_column("rows", justify="right")
    for k, v in counts.items():
        t.add_row(str(k), str(int(v)))
    t.add_row(f"[bold]{total_label}[/]", f"[bold]{int(counts.sum())}[/]")
    return t


@section("ingest")
def _ingest(root: Path, console: Console) -> bool:
    p = root / "data" / "interim" / "instances.parquet"
    if not p.exists():
        return False
    df = pd.read_parquet(p, columns=["split", "calculator_id", "output_type"])
    q = root / "data" / "interim" / "quarantine.csv"
    nq = len(pd.read_csv(q)) if q.exists() else 0
    t = Table(title="ingested upstream instances")
    for c in ("split", "rows", "calculators", "decimal", "integer", "date", "quarantined"):
        t.add_column(c, justify="right" if c != "split" else "left")
    for split, g in df.groupby("split"):
        ot = g["output_type"].value_counts()
        t.add_row(str(split), str(len(g)), str(g["calculator_id"].nunique()),
                  *(str(int(ot.get(k, 0))) for k in ("decimal", "integer", "date")), str(nq))
    console.print(t)
    return True


def print_summary(root: Path, console: Console | None = None) -> int:
    console = console or Console()
    shown = 0
    for title, fn in SECTIONS:
        if fn(root, console):
            shown += 1
        else:
            console.print(f"[dim]{title}: no output yet (run `dvc repro`)[/]")
    return shown
