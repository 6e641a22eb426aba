"""Stage ``recompute``: re-derive every label from its own extracted features.

Writes ``recompute.parquet`` (one row per instance: recomputed value, missing and implausible
inputs, agreement with the original label, rel_err, finding) and ``recompute_per_calculator.csv``
(agreement per calculator, for ``dvc plots``) and ``findings.parquet`` (one row per finding of the
zero-LLM checks of :mod:`medcalc_maintained.quality.checks`, the recompute's findings included).
Both come from one pass over the rows (:func:`recompute_and_check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_parquet
from medcalc_maintained.core.parallel import map_chunks
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.core.rows import Row, rows_of
from medcalc_maintained.project import Project
from medcalc_maintained.quality import recompute as rc
from medcalc_maintained.quality.checks.table import REC_COLUMNS, check_row, findings_frame


def _audit_rows(rows: Sequence[Row]) -> list[tuple[dict[str, Any], list[tuple]]]:
    out = []
    for row in rows:
        d = rc.recompute_record(row.split, row.uid, row.calculator_id, row.entities, row.label, row.lower,
                                row.upper, row.output_type)
        out.append((d, check_row(row, {k: d[k] for k in REC_COLUMNS})))
    return out


def recompute_and_check(instances: pd.DataFrame, progress: bool = False,
                        workers: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`~medcalc_maintained.quality.recompute.recompute` and the checks
    (:func:`~medcalc_maintained.quality.checks.run_checks` on that recompute) in one pass over the
    rows, each row's entities read once, split over worker processes for a large table (``workers``
    as in :func:`medcalc_maintained.core.parallel.map_chunks`): (recompute, findings)."""
    rc.load_all()
    rows = rows_of(instances)
    done = map_chunks(_audit_rows, rows, workers=workers, progress="recompute and checks" if progress else None)
    return rc.recompute_frame([d for d, _ in done]), findings_frame([f for _, found in done for f in found])


@dataclass
class RecomputeRun:
    table: pd.DataFrame
    written: list[Path]
    findings: pd.DataFrame | None = None


def run(project: Project, *, instances: Path | None = None, out_dir: Path | None = None,
        progress: bool = False) -> RecomputeRun:
    inst = read_parquet(instances or project.instances, "instances", "ingest")
    target = Path(out_dir) / "recompute.parquet" if out_dir else project.recompute
    per_path = Path(out_dir) / "recompute_per_calculator.csv" if out_dir else project.recompute_per_calculator
    findings_path = Path(out_dir) / "findings.parquet" if out_dir else project.findings
    rec, findings = recompute_and_check(inst, progress=progress)
    write_parquet(target, rec)
    write_parquet(findings_path, findings)
    per = rc.per_calculator_agreement(rec, inst)
    write_atomic(per_path, lambda p: per.to_csv(p, index=False))
    return RecomputeRun(rec, [target, findings_path, per_path], findings)
