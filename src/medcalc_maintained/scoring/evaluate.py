"""Grade one set of model predictions under several label versions and compare them.

``evaluate(predictions, sources, n_boot=..., seed=...)`` (``sources``: the
:class:`~medcalc_maintained.scoring.labels.LabelSource` s of ``--against``, or ``{name: DataFrame}``
label sets) returns an :class:`EvaluationReport` with

* per label version, on the rows it labels that have a prediction: accuracy with a seeded
  bootstrap 95% interval, the statuses of the errors, how many errors are *severe* (the answer
  falls in another decision band than the label: level L2/L3 of
  :func:`medcalc_maintained.calculators.severity.severity`), and the rows skipped with their reason
  (``no prediction``; ``unlabelled in this version``: a row of the version its ``default`` config
  leaves out, e.g. an unverified row; ``not in this label set``);
* on the *common* rows (scored under every version): accuracy side by side, McNemar's exact
  test and a bootstrap interval of the difference for every pair, and the rows whose correctness
  flips between versions;
* accuracy per calculator and per ``Label Status``, on each version's own rows and on the
  common rows; and, with ``out_dir``, the tables, a per-row file and a bar chart on disk.

Grading uses the one extraction rule of :func:`medcalc_maintained.core.answers.graded_answer`
(the last tagged answer, else the whole output) and
:func:`medcalc_maintained.core.answers.parse_model_answer`; an empty or unparsable answer is
wrong (``NaN``/``Infinity`` and answers over ``MAX_ANSWER_CHARS`` are unparsable); an abstention
(``N/A``) is correct only when the label is ``N/A`` (``N/A`` labels are scored, never skipped);
otherwise :func:`medcalc_maintained.core.answers.is_correct` decides.

Predictions: see :mod:`medcalc_maintained.grading.predictions`. Label set: a DataFrame with
``uid``, ``Ground Truth Answer``, ``Lower Limit``, ``Upper Limit``, ``Output Type`` and
``Calculator Name`` (``Label Status``, ``Calculator ID`` and ``Relevant Entities`` are used when
present).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medcalc_maintained.core.answers import OUTPUT_TYPES, parse_answer
from medcalc_maintained.core.atomic import write_atomic, write_text_atomic
from medcalc_maintained.core.csv_for_people import write_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading.predictions import read_predictions

LABEL_COLUMNS = ("uid", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type", "Calculator Name")
# optional columns, with the names they are kept under
OPTIONAL_COLUMNS = {"Label Status": ("Label Status",), "calculator_id": ("calculator_id", "Calculator ID"),
                    "entities": ("entities", "Relevant Entities"), "category": ("category", "Category")}


def check_label_set(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Validate one label set; return it indexed by integer uid, text columns, optional columns kept."""
    where = f"label set {name!r}"
    if not isinstance(df, pd.DataFrame):
        raise DataError(where, f"must be a pandas DataFrame, not {type(df).__name__}")
    missing = [c for c in LABEL_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(where, f"missing column(s) {missing}; required: {list(LABEL_COLUMNS)}")
    out = df[list(LABEL_COLUMNS)].copy()
    for key, names in OPTIONAL_COLUMNS.items():
        given = next((c for c in names if c in df.columns), None)
        out[key] = df[given].to_numpy() if given else ""
    uids = []
    for i, u in enumerate(out["uid"].tolist()):
        try:
            f = float(u)
            if not f.is_integer():
                raise ValueError
            uids.append(int(f))
        except (TypeError, ValueError):
            raise DataError(where, f"uid {u!r} is not an integer", row=i) from None
    out["uid"] = uids
    dup = out["uid"][out["uid"].duplicated()]
    if len(dup):
        raise DataError(where, f"uid(s) {sorted(set(dup))[:10]} appear more than once")
    for col in [c for c in out.columns if c != "uid"]:
        out[col] = out[col].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    for rec in out.to_dict("records"):
        otype = rec["Output Type"]
        if otype not in OUTPUT_TYPES:
            raise DataError(where, f"Output Type {otype!r} is not one of {OUTPUT_TYPES}",
                            row=f"uid {rec['uid']}", field="Output Type")
        gt = parse_answer(rec["Ground Truth Answer"], otype)
        if gt.kind == "invalid":
            raise DataError(where, f"label {gt.text!r} is not a valid {otype} answer: {gt.reason}",
                            row=f"uid {rec['uid']}", field="Ground Truth Answer")
    return out.set_index("uid", drop=False)


@dataclass
class EvaluationReport:
    """What :func:`evaluate` computed (see the module doc); ``graded`` has one row per scored
    (label set, uid), ``skipped`` one per skipped one."""

    accuracy: pd.DataFrame
    common: pd.DataFrame
    comparisons: pd.DataFrame
    per_calculator: pd.DataFrame
    per_status: pd.DataFrame
    flips: pd.DataFrame
    graded: pd.DataFrame
    skipped: pd.DataFrame
    n_predictions: int
    n_common: int
    seed: int
    n_boot: int
    sources: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    graders: list[str] = field(default_factory=lambda: ["ours"])
    # with several graders: the accuracy change due to labels and due to grading (evaluate_tables.decomposition)
    decomposition: pd.DataFrame = field(default_factory=pd.DataFrame)
    # refusals apart from accuracy: on N/A rows and on answerable rows (evaluate_tables.abstention)
    abstention: pd.DataFrame = field(default_factory=pd.DataFrame)
    # with --steps: extraction, arithmetic and final answer per row (scoring/steps_report.py)
    steps: Any = None

    def to_dict(self) -> dict[str, Any]:
        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return json.loads(df.to_json(orient="records"))

        extra: dict[str, Any] = {}
        if self.graders != ["ours"]:
            extra = {"graders": self.graders, "decomposition": records(self.decomposition)}
        if self.steps is not None:
            extra["steps"] = self.steps.summaries
        return {
            "n_predictions": self.n_predictions,
            "label_sets": self.sources,
            "bootstrap": {"seed": self.seed, "resamples": self.n_boot, "level": 0.95, "method": "percentile"},
            "accuracy": records(self.accuracy),
            "common_rows": {"n": self.n_common, "accuracy": records(self.common)},
            "comparisons": records(self.comparisons),
            "abstention": records(self.abstention),
            "flips": len(self.flips),
            "notes": self.notes,
            **extra,
        }

    #: every file :meth:`write` may write, and those it always writes (what ``evaluate --force``
    #: may replace: ``core/out_dirs.py: check_replace``)
    FILES = frozenset({"evaluation.json", "per_calculator.csv", "per_status.csv", "graded.csv", "flips.csv",
                       "skipped.csv", "abstention.csv", "decomposition.csv", "accuracy.png", "steps.csv",
                       "steps_inputs.csv", "steps_calculators.csv", "steps.png"})
    # abstention.csv is always written now, but an evaluation made before it existed is still one
    ALWAYS = FILES - {"decomposition.csv", "abstention.csv", "steps.csv", "steps_inputs.csv", "steps_calculators.csv",
                      "steps.png"}

    def write(self, out_dir: os.PathLike | str) -> dict[str, Path]:
        """``evaluation.json``, the CSV tables (``per_calculator``, ``per_status``, ``graded``,
        ``flips``, ``skipped``, ``abstention``) and ``accuracy.png`` into ``out_dir``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {"json": write_text_atomic(out / "evaluation.json", json.dumps(self.to_dict(), indent=2) + "\n")}
        for name in ("per_calculator", "per_status", "graded", "flips", "skipped", "abstention"):
            paths[name] = write_csv_for_people(out / f"{name}.csv", getattr(self, name))
        if len(self.decomposition):
            paths["decomposition"] = write_csv_for_people(out / "decomposition.csv", self.decomposition)
        paths["plot"] = plot_report(self, out / "accuracy.png")
        if self.steps is not None:
            for p in self.steps.write(out):
                paths[p.stem] = p
        return paths


def _label_sets(sources) -> tuple[dict[str, pd.DataFrame], dict[str, frozenset[int] | None], dict[str, str]]:
    """Checked label sets, universes and origins of ``LabelSource`` s or ``{name: DataFrame}``."""
    if isinstance(sources, dict):
        return ({n: check_label_set(n, df) for n, df in sources.items()}, {n: None for n in sources},
                {n: "label set" for n in sources})
    return ({s.name: check_label_set(s.name, s.labels) for s in sources}, {s.name: s.universe for s in sources},
            {s.name: s.origin for s in sources})


def evaluate(predictions: os.PathLike | str | dict[int, str], sources, *, n_boot: int, seed: int,
             out_dir: os.PathLike | str | None = None, subset: frozenset[int] | None = None,
             max_line_bytes: int | None = None, notes: list[str] | None = None,
             graders: list[str] | None = None, steps: bool = False) -> EvaluationReport:
    """Grade the predictions under every label set; see the module doc for the rules.

    ``subset`` restricts every set to those uids (``--subset``); ``n_boot`` and ``seed`` are
    ``compare.evaluate.n_boot`` / ``.seed`` in the pipeline. ``graders`` (``--grader``, default
    ``["ours"]``): the rules of :mod:`medcalc_maintained.grading.graders`; with any other than ours
    alone, each label set is scored once per grader as ``NAME [GRADER]``, and with two or more
    label sets and graders the change due to labels and the change due to grading are reported
    separately (:attr:`EvaluationReport.decomposition`). ``steps`` (``--steps``): also grade how each
    output got there under every release that has certified inputs (:mod:`.steps_report`)."""
    from medcalc_maintained.scoring import evaluate_tables as tab

    if not sources:
        raise ValueError("at least one label set is needed")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 100:
        raise ValueError(f"n_boot must be an integer of at least 100, got {n_boot!r}")
    preds = predictions if isinstance(predictions, dict) else read_predictions(predictions, max_line_bytes=max_line_bytes)
    sets, universes, origins = _label_sets(sources)
    graders = _check_graders(graders)
    versions = list(sets)
    cells: dict[tuple[str, str], str] = {}
    if graders != ["ours"]:
        sets, universes, origins, cells = _per_grader(sets, universes, origins, graders)
    names = list(sets)
    graded, skipped = tab.grade_all(preds, sets, universes, subset, {name: g for (_, g), name in cells.items()})
    if graded.empty:
        raise DataError(predictions if not isinstance(predictions, dict) else "predictions",
                        "no prediction uid is labelled by any label set (are the predictions for another split?)")
    notes = list(notes or [])
    notes.append("scored per label set: the rows it labels that have a prediction; skipped rows are counted "
                 "per reason (skipped.csv); N/A labels are scored (an abstention is correct only against N/A)")
    if subset is not None:
        outside = len(set(preds) - set(subset))
        notes.append(f"{outside} prediction(s) outside the --subset rows are left out")
    rng = np.random.default_rng(seed)
    acc = tab.accuracy(graded, skipped, names, rng, n_boot)
    uids = tab.common_uids(graded, names)
    common = graded[graded["uid"].isin(uids)]
    notes.append(f"common rows (scored under every label set): {len(uids)}")
    if "helm" in graders:
        notes.extend(_helm_defect_notes(sets, cells, versions, graded))
    decomposition = (tab.decomposition(common, cells, versions, graders, rng, n_boot)
                     if len(versions) > 1 and len(graders) > 1 else pd.DataFrame())
    step_report = _steps(preds, sources, subset, notes) if steps else None
    return _finish(EvaluationReport(
        accuracy=acc, common=tab.common_accuracy(common, names, rng, n_boot),
        comparisons=tab.comparisons(common, names, rng, n_boot),
        per_calculator=tab.by_group(graded, common, "calculator", rng, n_boot),
        per_status=tab.by_group(graded, common, "label_status", rng, n_boot),
        flips=tab.flips(common, names), abstention=tab.abstention(graded, names, rng, n_boot), graded=graded,
        skipped=skipped, n_predictions=len(preds),
        n_common=len(uids), seed=seed, n_boot=n_boot, sources=origins, notes=notes, graders=graders,
        decomposition=decomposition, steps=step_report), out_dir)


def _steps(preds: dict[int, str], sources, subset: frozenset[int] | None, notes: list[str]):
    """The step-wise report under every source with certified inputs (config ``inputs``); a ``ValueError``
    when none has them."""
    from medcalc_maintained.release.tables import INPUTS
    from medcalc_maintained.scoring.steps_report import step_report

    given = [] if isinstance(sources, dict) else list(sources)
    with_inputs = {s.name: (s.labels, s.read_config(INPUTS)) for s in given
                   if s.read_config is not None and INPUTS in s.config_names}
    if not with_inputs:
        raise ValueError("--steps needs a label set with certified inputs: a release from 2.4.0 on (its config "
                         "`inputs`), e.g. --against 2.4.0 or --against build/release; "
                         f"given: {', '.join(s.name for s in given) or 'label files only'}")
    without = [s.name for s in given if s.name not in with_inputs]
    if without:
        notes.append(f"steps: not graded under {', '.join(without)} (no certified inputs: releases before 2.4.0, "
                     "label files)")
    kept = preds if subset is None else {u: o for u, o in preds.items() if u in subset}
    return step_report(kept, with_inputs)


def _check_graders(graders: list[str] | None) -> list[str]:
    from medcalc_maintained.grading.graders import grader

    graders = list(graders or ["ours"])
    for g in graders:
        grader(g)  # a ValueError naming the known graders
    if len(set(graders)) != len(graders):
        raise ValueError(f"--grader: a grader is given twice ({', '.join(graders)})")
    return graders


def graded_name(label_set: str, grader: str) -> str:
    """The name of ``label_set`` graded by ``grader`` when several graders run (``NAME [GRADER]``)."""
    return f"{label_set} [{grader}]"


def _per_grader(sets, universes, origins, graders):
    """Each label set once per grader, named by :func:`graded_name`; ``cells[(NAME, GRADER)]`` is that name."""
    cells = {(n, g): graded_name(n, g) for n in sets for g in graders}
    return ({cells[(n, g)]: df for n, df in sets.items() for g in graders},
            {cells[(n, g)]: u for n, u in universes.items() for g in graders},
            {cells[(n, g)]: f"{o}, graded by {g}" for n, o in origins.items() for g in graders}, cells)


def _helm_defect_notes(sets, cells, versions, graded) -> list[str]:
    """Name HELM's category defect with the number of rows it zeroes in each version's scored rows."""
    from medcalc_maintained.grading.graders import HELM_DEFECT_CATEGORIES, HELM_RANGE_CATEGORIES, helm_defect

    notes = []
    for v in versions:
        name = cells[(v, "helm")]
        scored = sorted(set(graded.loc[graded["label_set"] == name, "uid"]))
        hit = int(sets[name].loc[scored, "category"].map(helm_defect).sum())
        share = hit / len(scored) if scored else 0.0
        notes.append(
            f"grader helm, {v}: HELM category defect: {hit} of {len(scored)} scored rows ({share:.1%}) are in the "
            f"categories {' and '.join(HELM_DEFECT_CATEGORIES)}, which HELM's MedCalcBenchMetric does not handle "
            f"(its range check knows only {' and '.join(repr(c) for c in HELM_RANGE_CATEGORIES)}); they score 0 "
            "whatever the answer (stanford-crfm/helm src/helm/benchmark/metrics/medcalc_bench_metrics.py; "
            "reproduced only under --grader helm)")
    return notes


def _finish(report: EvaluationReport, out_dir: os.PathLike | str | None) -> EvaluationReport:
    if out_dir is not None:
        report.write(out_dir)
    return report



def plot_report(report: EvaluationReport, path: os.PathLike | str) -> Path:
    """Bar chart: overall accuracy with 95% intervals, and accuracy per calculator, per label set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = report.accuracy["label_set"].tolist()
    own = report.per_calculator[report.per_calculator["rows"] == "own"]
    wide = own.pivot(index="calculator", columns="label_set", values="accuracy")
    wide = wide.reindex(columns=names).sort_index(ascending=False)
    n_calc = len(wide)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]

    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(13, max(4.0, 0.28 * n_calc + 1.5)),
                                   gridspec_kw={"width_ratios": [1, 2.4]})
    acc = report.accuracy
    x = np.arange(len(names))
    err = np.vstack([acc["accuracy"] - acc["ci_low"], acc["ci_high"] - acc["accuracy"]])
    ax0.bar(x, acc["accuracy"], yerr=err, capsize=6, color=[colors[i % len(colors)] for i in range(len(names))])
    for xi, a in zip(x, acc["accuracy"]):
        ax0.text(xi, min(a + 0.03, 1.02), f"{a:.1%}", ha="center", va="bottom", fontsize=9)
    ax0.set_xticks(x, names, rotation=20, ha="right")
    ax0.set_ylim(0, 1.1)
    ax0.set_ylabel("accuracy (95% bootstrap interval)")
    ax0.set_title(f"Overall accuracy ({report.n_predictions} predictions)")

    height = 0.8 / max(1, len(names))
    y = np.arange(n_calc)
    for i, name in enumerate(names):
        ax1.barh(y + (i - (len(names) - 1) / 2) * height, wide[name].fillna(0).to_numpy(), height=height,
                 label=name, color=colors[i % len(colors)])
    ax1.set_yticks(y, [c if len(c) <= 48 else c[:45] + "..." for c in wide.index], fontsize=7)
    ax1.set_xlim(0, 1)
    ax1.set_xlabel("accuracy")
    ax1.set_title("Accuracy per calculator")
    ax1.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path = Path(path)
    write_atomic(path, lambda p: fig.savefig(p, dpi=110, format="png"))
    plt.close(fig)
    return path
