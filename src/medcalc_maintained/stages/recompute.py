"""Stage ``recompute``: re-derive every label from its own extracted features.

Writes ``recompute.parquet`` (one row per instance: recomputed value, missing and implausible
inputs, agreement with the original label, rel_err, finding) and ``recompute_per_calculator.csv``
(agreement per calculator, for ``dvc plots``) and ``findings.parquet`` (one row per finding of the
zero-LLM checks of :mod:`medcalc_maintained.quality.checks`, the recompute's findings included).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from medcalc_maintained.core.io import read_parquet, write_atomic, write_parquet
from medcalc_maintained.project import Project
from medcalc_maintained.quality import recompute as rc
from medcalc_maintained.quality.checks import run_checks


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
    rec = rc.recompute(inst, progress=progress)
    findings = run_checks(inst, rec, progress=progress)
    write_parquet(target, rec)
    write_parquet(findings_path, findings)
    per = rc.per_calculator_agreement(rec, inst)
    write_atomic(per_path, lambda p: per.to_csv(p, index=False))
    return RecomputeRun(rec, [target, findings_path, per_path], findings)
