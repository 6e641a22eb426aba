"""Stage ``evaluate-example``: the worked example for model developers.

The relabel stage's labels become a predictions file (``compare predictions``: one
``{"uid", "output"}`` per labeled test row, at ``project.example_predictions``), which is then graded
under releases 1.0.0 and 2.0.0 (``evaluate ... --against 1.0.0 --against 2.0.0``) into
``project.evaluation_dir``. :func:`evaluate` is also the top-level ``evaluate`` command.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from medcalc_maintained.core.io import DataError, write_atomic
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.evaluate import EvaluationReport
from medcalc_maintained.scoring.evaluate import evaluate as grade
from medcalc_maintained.scoring.labels import label_sets, load_label_sets



@dataclass
class PredictionsRun:
    n: int
    source: Path
    target: Path


@dataclass
class EvaluationRun:
    report: EvaluationReport
    out_dir: Path


def write_jsonl_predictions(labels: pd.DataFrame, path: Path, label_column: str = "label",
                            status_column: str = "status") -> int:
    """A predictions JSONL (uid, output) from a relabel output: labeled rows answer their label."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for r in labels.to_dict("records"):
            if str(r.get(status_column, "labeled")) != "labeled":
                continue
            fh.write(json.dumps({"uid": int(r["uid"]), "output": f"<answer>{r[label_column]}</answer>"}) + "\n")
            n += 1
    return n


def write_predictions(project: Project, *, labels: Path | None = None, out: Path | None = None) -> PredictionsRun:
    """``compare predictions``: the relabel labels (default ``project.relabel_labels``) as predictions."""
    src = labels or project.relabel_labels
    if not src.is_file():
        raise DataError(src, "relabel labels not found (run `dvc repro relabel`)")
    df = pd.read_parquet(src)
    missing = [c for c in ("uid", "status", "label") if c not in df.columns]
    if missing:
        raise DataError(src, f"missing column(s) {missing}")
    if "split" in df.columns:
        df = df[df["split"] == project.param("relabel.split")]
    target = out or project.example_predictions
    counts: dict[str, int] = {}
    write_atomic(target, lambda p: counts.setdefault("n", write_jsonl_predictions(df, p)))
    return PredictionsRun(counts["n"], src, target)


def evaluate(project: Project, predictions: Path, against: list[str], *, out_dir: Path | None = None,
             seed: int | None = None, n_boot: int | None = None) -> EvaluationRun:
    """``evaluate``: grade ``predictions`` under each label set of ``against`` (a version, a tag,
    ``PATH`` or ``NAME=PATH``); seed, resamples and output directory default to ``compare.evaluate``."""
    params = project.section("compare.evaluate")
    out = Path(out_dir) if out_dir else project.evaluation_dir
    frames = load_label_sets(project, label_sets(against))
    report = grade(predictions, frames, out_dir=out, seed=params["seed"] if seed is None else seed,
                   n_boot=params["n_boot"] if n_boot is None else n_boot)
    return EvaluationRun(report, out)


def run(project: Project) -> tuple[PredictionsRun, EvaluationRun]:
    """The whole stage: write the example's predictions, then grade them under both releases."""
    preds = write_predictions(project)
    return preds, evaluate(project, preds.target, [str(v) for v in project.param("compare.evaluate.against")])
