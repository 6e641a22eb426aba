"""Stage ``evaluate-example``: the worked example for model developers.

The relabel stage's labels become a predictions file (``compare predictions``: one
``{"uid", "output"}`` per labeled test row, at ``project.example_predictions``), which is then graded
under the releases of ``compare.evaluate.against``, the upstream labels 1.0.0 and the latest release
(``evaluate ... --against 1.0.0 --against 2.2.0``), into
``project.evaluation_dir`` (``evaluation.json`` with every table, and ``metrics.json``, the DVC
metric: scalars only). :func:`evaluate` is also the top-level ``evaluate`` command, which
writes a new directory under ``project.evaluation_runs`` instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_dir, write_json
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.out_dirs import check_replace
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.evaluate import EvaluationReport
from medcalc_maintained.scoring.evaluate import evaluate as grade
from medcalc_maintained.scoring.labels import resolve_against, subset_uids
from medcalc_maintained.stages._metrics import METRICS


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


def new_run_dir(project: Project) -> Path:
    """A new directory under ``project.evaluation_runs`` (``build/evaluations/<UTC time>``, with
    ``-2``, ``-3``... when taken; :func:`medcalc_maintained.core.out_dirs.new_run_dir`): the default
    ``--out`` of ``evaluate``, never a DVC output."""
    from medcalc_maintained.core.out_dirs import new_run_dir as fresh

    return fresh(project.evaluation_runs)


def check_run_dir(out: Path, force: bool) -> None:
    """Refuse an ``--out`` that is not empty, unless ``force`` and it holds an earlier evaluation
    (only the files ``evaluate`` writes): ``--force`` never replaces another directory."""
    check_replace(out, command="evaluate", writes=EvaluationReport.FILES, required=EvaluationReport.ALWAYS,
                  force=force)


def write_run(report: EvaluationReport, out: Path, *, force: bool = False) -> Path:
    """Write ``report`` into ``out`` as a whole: into a scratch sibling first (``.<name>.<pid>-*``,
    removed by the next run when a kill left it), then swapped in (``core/atomic.py: write_dir``: a kill
    leaves the old set or the new); an existing non-empty ``out`` is refused unless ``force`` and it
    holds an earlier evaluation (:func:`check_run_dir`), checked again at the moment of the swap."""
    check_run_dir(out, force)
    return write_dir(out, report.write, check=lambda target: check_run_dir(target, force))


def headline(evaluation: dict) -> dict:
    """The stage's DVC metric (``metrics.json``, scalars only) from ``evaluation.json``: the
    predictions, the accuracy under each label set and the predictions whose grade flips."""
    return {"predictions": evaluation["n_predictions"],
            "accuracy": {a["label_set"]: a["accuracy"] for a in evaluation["accuracy"]},
            "flips": evaluation["flips"]}


def evaluate(project: Project, predictions: Path, against: list[str], *, out_dir: Path | None = None,
             seed: int | None = None, n_boot: int | None = None, subset: str | None = None,
             max_line_bytes: int | None = None, force: bool = False, stage: bool = False,
             graders: list[str] | None = None, steps: bool = False) -> EvaluationRun:
    """``evaluate``: grade ``predictions`` under each ``--against`` item (see
    :func:`medcalc_maintained.scoring.labels.resolve_against`), restricted to config ``subset``.

    Seed, resamples and line limit default to ``compare.evaluate``. The command writes a new
    directory (:func:`write_run`, default :func:`new_run_dir`); the stage (``stage=True``) writes
    its DVC outputs in ``project.evaluation_dir``. ``graders``: ``--grader`` (default ours); ``steps``:
    ``--steps`` (the step-wise breakdown, scoring/steps_report.py)."""
    params = project.section("compare.evaluate")
    if out_dir and not stage:
        check_run_dir(Path(out_dir), force)  # before any grading
    sources = resolve_against(project, against)
    uids, notes = subset_uids(sources, subset) if subset else (None, [])
    report = grade(predictions, sources, seed=params["seed"] if seed is None else seed,
                   n_boot=params["n_boot"] if n_boot is None else n_boot, subset=uids, notes=notes,
                   max_line_bytes=params["max_line_bytes"] if max_line_bytes is None else max_line_bytes,
                   graders=graders, steps=steps)
    if stage:
        out = Path(out_dir) if out_dir else project.evaluation_dir
        report.write(out)
        write_json(out / METRICS, headline(report.to_dict()))
    else:
        out = write_run(report, Path(out_dir) if out_dir else new_run_dir(project), force=force)
    return EvaluationRun(report, out)


def run(project: Project) -> tuple[PredictionsRun, EvaluationRun]:
    """The whole stage: write the example's predictions, then grade them under both releases."""
    preds = write_predictions(project)
    return preds, evaluate(project, preds.target, [str(v) for v in project.param("compare.evaluate.against")],
                           stage=True)
