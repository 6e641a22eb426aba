"""Grade one set of model predictions against several label sets and compare them.

``evaluate(predictions.jsonl, {"original": df_a, "maintained": df_b}, n_boot=..., seed=...)`` returns an
:class:`EvaluationReport` with

* accuracy under each label set with a seeded bootstrap 95% interval;
* for every pair of label sets, McNemar's exact test on the paired correctness of the same
  predictions (uids present in both sets) and a bootstrap interval of the accuracy difference;
* a per-calculator accuracy table; and, with ``out_dir``, a bar chart (PNG) and the tables on disk.

Grading uses the one extraction rule of :func:`medcalc_maintained.core.answers.graded_answer`
(the last tagged answer, else the whole output) and the reward's parsing; an empty or
unparsable answer is wrong; an abstention (``N/A``) is correct only when the label is ``N/A``;
otherwise :func:`medcalc_maintained.core.answers.is_correct` decides. **A uid of a label set that has no
prediction counts as wrong** (its status is ``missing``), so accuracies are always over the whole
label set.

Predictions file: JSON Lines, one object per line, ``{"uid": <int>, "output": <string>}`` (a raw
model output or just the answer; a JSON number is read as its text). Blank lines are skipped.
Label set: a DataFrame with ``uid``, ``Ground Truth Answer``, ``Lower Limit``, ``Upper Limit``,
``Output Type`` and ``Calculator Name``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medcalc_maintained.core.answers import OUTPUT_TYPES, graded_answer, is_correct, parse_answer, parse_model_answer
from medcalc_maintained.core.io import DataError, read_jsonl, write_atomic, write_csv_for_people, write_text_atomic

LABEL_COLUMNS = ("uid", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type", "Calculator Name")
STATUSES = ("correct", "wrong", "abstained", "unparsable", "missing")


# ---------------------------------------------------------------------------------------- input


def read_predictions(path: os.PathLike | str) -> dict[int, str]:
    """``{uid: output}`` from a predictions JSONL file; a :class:`DataError` names file, line and rule."""
    out: dict[int, str] = {}
    first_line: dict[int, int] = {}
    for n, rec in read_jsonl(path, "predictions", '{"uid": <int>, "output": <string>}'):
        where = f"{path}, line {n}"
        for key in ("uid", "output"):
            if key not in rec:
                raise DataError(where, f"missing key {key!r}; each line needs \"uid\" and \"output\"")
        uid = rec["uid"]
        if isinstance(uid, bool) or not isinstance(uid, int):
            raise DataError(where, f"uid must be a JSON integer, got {uid!r}")
        output = rec["output"]
        if isinstance(output, bool) or not isinstance(output, (str, int, float)):
            raise DataError(where, f"output must be a string (use \"\" for no answer), got {output!r}")
        if uid in out:
            raise DataError(where, f"uid {uid} repeats line {first_line[uid]}; one prediction per uid")
        out[uid] = output if isinstance(output, str) else json.dumps(output)
        first_line[uid] = n
    if not out:
        raise DataError(path, "no predictions in the file")
    return out


def check_label_set(name: str, df: pd.DataFrame) -> pd.DataFrame:
    """Validate one label set and return it indexed by integer uid with text columns."""
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"label set {name!r}", f"must be a pandas DataFrame, not {type(df).__name__}")
    missing = [c for c in LABEL_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(f"label set {name!r}", f"missing column(s) {missing}; required: {list(LABEL_COLUMNS)}")
    if df.empty:
        raise DataError(f"label set {name!r}", "has no rows")
    out = df[list(LABEL_COLUMNS)].copy()
    uids = []
    for i, u in enumerate(out["uid"].tolist()):
        try:
            f = float(u)
            if not f.is_integer():
                raise ValueError
            uids.append(int(f))
        except (TypeError, ValueError):
            raise DataError(f"label set {name!r}", f"uid {u!r} is not an integer", row=i) from None
    out["uid"] = uids
    dup = out["uid"][out["uid"].duplicated()]
    if len(dup):
        raise DataError(f"label set {name!r}", f"uid(s) {sorted(set(dup))[:10]} appear more than once")
    for col in LABEL_COLUMNS[1:]:
        out[col] = out[col].map(lambda v: "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    for rec in out.to_dict("records"):
        otype = rec["Output Type"]
        if otype not in OUTPUT_TYPES:
            raise DataError(f"label set {name!r}", f"Output Type {otype!r} is not one of {OUTPUT_TYPES}",
                            row=f"uid {rec['uid']}", field="Output Type")
        gt = parse_answer(rec["Ground Truth Answer"], otype)
        if gt.kind == "invalid":
            raise DataError(f"label set {name!r}", f"label {gt.text!r} is not a valid {otype} answer: {gt.reason}",
                            row=f"uid {rec['uid']}", field="Ground Truth Answer")
    return out.set_index("uid", drop=False)


# -------------------------------------------------------------------------------------- grading


def grade_output(output: str | None, label: str, lower: str, upper: str, output_type: str) -> str:
    """One of :data:`STATUSES` for one prediction (``None`` = no prediction, counted wrong)."""
    if output is None:
        return "missing"
    parsed = parse_model_answer(graded_answer(output), output_type)
    if parsed is None:
        return "unparsable"
    correct = is_correct(parsed, label, lower, upper, output_type)
    if correct:
        return "correct"
    return "abstained" if parsed.is_abstain else "wrong"


def bootstrap_accuracy_ci(correct: int, n: int, rng: np.random.Generator, n_boot: int,
                          level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of an accuracy of ``correct``/``n``.

    Resampling n 0/1 outcomes with replacement gives a count of successes that is exactly
    Binomial(n, correct/n), so the resamples are drawn from that binomial directly.
    """
    if n == 0:
        return (float("nan"), float("nan"))
    draws = rng.binomial(n, correct / n, size=n_boot) / n
    a = (1 - level) / 2
    return (float(np.quantile(draws, a)), float(np.quantile(draws, 1 - a)))


def bootstrap_difference_ci(both: int, a_only: int, b_only: int, neither: int, rng: np.random.Generator,
                            n_boot: int, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of acc(A) - acc(B) over paired items (resampling items).

    Resampling paired items with replacement gives cell counts that are multinomial over the four
    (A correct?, B correct?) cells, so the resamples are drawn from that multinomial directly.
    """
    n = both + a_only + b_only + neither
    if n == 0:
        return (float("nan"), float("nan"))
    cells = rng.multinomial(n, np.array([both, a_only, b_only, neither], dtype=float) / n, size=n_boot)
    diff = (cells[:, 1] - cells[:, 2]) / n
    a = (1 - level) / 2
    return (float(np.quantile(diff, a)), float(np.quantile(diff, 1 - a)))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of a_only vs b_only discordant pairs at 1/2."""
    from scipy.stats import binomtest

    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    return float(binomtest(a_only, discordant, 0.5, alternative="two-sided").pvalue)


@dataclass
class EvaluationReport:
    """What :func:`evaluate` computed. ``graded`` has one row per (label set, uid)."""

    accuracy: pd.DataFrame
    comparisons: pd.DataFrame
    per_calculator: pd.DataFrame
    graded: pd.DataFrame
    n_predictions: int
    seed: int
    n_boot: int
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        def records(df: pd.DataFrame) -> list[dict[str, Any]]:
            return json.loads(df.to_json(orient="records"))

        return {
            "n_predictions": self.n_predictions,
            "bootstrap": {"seed": self.seed, "resamples": self.n_boot, "level": 0.95, "method": "percentile"},
            "accuracy": records(self.accuracy),
            "comparisons": records(self.comparisons),
            "per_calculator": records(self.per_calculator),
            "notes": self.notes,
        }

    def write(self, out_dir: os.PathLike | str) -> dict[str, Path]:
        """Write ``evaluation.json``, ``per_calculator.csv``, ``graded.csv`` and ``accuracy.png``."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = {
            "json": write_text_atomic(out / "evaluation.json", json.dumps(self.to_dict(), indent=2) + "\n"),
            "per_calculator": write_csv_for_people(out / "per_calculator.csv", self.per_calculator),
            "graded": write_csv_for_people(out / "graded.csv", self.graded),
        }
        paths["plot"] = plot_report(self, out / "accuracy.png")
        return paths


def _grade_all(preds: dict[int, str], sets: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (label set, uid) with its status."""
    rows = []
    for name, labels in sets.items():
        for rec in labels.to_dict("records"):
            status = grade_output(preds.get(rec["uid"]), rec["Ground Truth Answer"], rec["Lower Limit"],
                                  rec["Upper Limit"], rec["Output Type"])
            rows.append({"label_set": name, "uid": rec["uid"], "calculator": rec["Calculator Name"],
                         "label": rec["Ground Truth Answer"], "output_type": rec["Output Type"],
                         "status": status, "correct": status == "correct"})
    return pd.DataFrame(rows)


def _accuracy(graded: pd.DataFrame, names: list[str], rng: np.random.Generator, n_boot: int,
              notes: list[str]) -> pd.DataFrame:
    acc_rows = []
    for name in names:
        g = graded[graded["label_set"] == name]
        n, k = len(g), int(g["correct"].sum())
        counts = g["status"].value_counts()
        lo, hi = bootstrap_accuracy_ci(k, n, rng, n_boot)
        acc_rows.append({"label_set": name, "n": n, "correct": k, "accuracy": k / n, "ci_low": lo, "ci_high": hi,
                         **{s: int(counts.get(s, 0)) for s in STATUSES if s != "correct"},
                         "na_labels": int(sum(parse_answer(x, t).is_abstain for x, t in
                                              zip(g["label"], g["output_type"])))})
        if counts.get("missing", 0):
            notes.append(f"{name}: {int(counts['missing'])} of {n} uids have no prediction and count as wrong")
    return pd.DataFrame(acc_rows)


COMPARISON_COLUMNS = ["a", "b", "n_paired", "both_correct", "a_only", "b_only", "neither", "accuracy_a",
                      "accuracy_b", "difference", "diff_ci_low", "diff_ci_high", "mcnemar_p"]


def _comparisons(graded: pd.DataFrame, sets: dict[str, pd.DataFrame], rng: np.random.Generator, n_boot: int,
                 notes: list[str]) -> pd.DataFrame:
    comp_rows = []
    for a, b in itertools.combinations(sets, 2):
        ga = graded[graded["label_set"] == a].set_index("uid")["correct"]
        gb = graded[graded["label_set"] == b].set_index("uid")["correct"]
        common = ga.index.intersection(gb.index)
        ca, cb = ga.loc[common].to_numpy(bool), gb.loc[common].to_numpy(bool)
        both, a_only = int((ca & cb).sum()), int((ca & ~cb).sum())
        b_only, neither = int((~ca & cb).sum()), int((~ca & ~cb).sum())
        n = len(common)
        lo, hi = bootstrap_difference_ci(both, a_only, b_only, neither, rng, n_boot)
        comp_rows.append({"a": a, "b": b, "n_paired": n, "both_correct": both, "a_only": a_only, "b_only": b_only,
                          "neither": neither, "accuracy_a": (both + a_only) / n if n else float("nan"),
                          "accuracy_b": (both + b_only) / n if n else float("nan"),
                          "difference": (a_only - b_only) / n if n else float("nan"),
                          "diff_ci_low": lo, "diff_ci_high": hi, "mcnemar_p": mcnemar_exact(a_only, b_only)})
        if n < max(len(sets[a]), len(sets[b])):
            notes.append(f"{a} vs {b}: compared on the {n} uids present in both label sets")
    return pd.DataFrame(comp_rows, columns=COMPARISON_COLUMNS)


def _per_calculator(graded: pd.DataFrame) -> pd.DataFrame:
    per_calc = (graded.groupby(["calculator", "label_set"], sort=True)
                .agg(n=("correct", "size"), correct=("correct", "sum")).reset_index())
    per_calc["correct"] = per_calc["correct"].astype(int)
    per_calc["accuracy"] = per_calc["correct"] / per_calc["n"]
    return per_calc


def evaluate(predictions_jsonl: os.PathLike | str, label_sets: dict[str, pd.DataFrame], *,
             n_boot: int, seed: int, out_dir: os.PathLike | str | None = None) -> EvaluationReport:
    """Grade the predictions under every label set; see the module docstring for the rules.

    ``n_boot`` and ``seed`` are ``compare.evaluate.n_boot`` / ``.seed`` in the pipeline."""
    if not label_sets:
        raise ValueError("at least one label set is needed")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 100:
        raise ValueError(f"n_boot must be an integer of at least 100, got {n_boot!r}")
    preds = read_predictions(predictions_jsonl)
    sets = {name: check_label_set(name, df) for name, df in label_sets.items()}
    known = set().union(*(set(s.index) for s in sets.values()))
    stray = sorted(set(preds) - known)
    if stray:
        raise DataError(predictions_jsonl, f"{len(stray)} prediction uid(s) are in no label set, e.g. {stray[:10]}; "
                        "are the predictions for another split?")

    graded = _grade_all(preds, sets)
    rng = np.random.default_rng(seed)
    notes = ["a label-set uid without a prediction counts as wrong (status 'missing')"]
    accuracy = _accuracy(graded, list(sets), rng, n_boot, notes)
    comparisons = _comparisons(graded, sets, rng, n_boot, notes)
    report = EvaluationReport(accuracy=accuracy, comparisons=comparisons, per_calculator=_per_calculator(graded),
                              graded=graded, n_predictions=len(preds), seed=seed, n_boot=n_boot, notes=notes)
    if out_dir is not None:
        report.write(out_dir)
    return report


def plot_report(report: EvaluationReport, path: os.PathLike | str) -> Path:
    """Bar chart: overall accuracy with 95% intervals, and accuracy per calculator, per label set."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = report.accuracy["label_set"].tolist()
    wide = report.per_calculator.pivot(index="calculator", columns="label_set", values="accuracy")
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
