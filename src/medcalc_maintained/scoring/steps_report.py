"""``evaluate --steps`` and ``regrade --steps``: the step-wise breakdown of one label set's predictions.

For every row of a release that has certified inputs (its config ``inputs``, from 2.4.0) and a prediction,
:func:`medcalc_maintained.grading.steps.grade_label_set` reads the inputs the output states and grades
extraction, arithmetic and the final answer, and sums them up (the card of a release shows such a summary,
``release/steps_demo.py``); this module gathers the rows into tables:

``steps.csv``              one row per label set and graded row: the row's ``Evidence Status`` (a label whose
                           input the note contradicts is graded on its certified inputs only), answer status,
                           the block's state, input counts
                           (correct, wrong, missing, extra, bad unit), whether the answer is right for the stated
                           inputs, the calculator's value on them, the error class
``steps_inputs.csv``       one row per label set, row and input: its status, the certified and the stated value
``steps_calculators.csv``  per label set and calculator: rows, right answers, each error class, the extraction
                           error rate (rows with a certified input stated wrong or not at all, of the rows with a
                           readable block) and the arithmetic error rate (rows whose answer is not right for their
                           own stated inputs, of the rows where the calculator computes from them)
``steps.png``              those two rates per calculator, side by side

and the summary in ``evaluation.json`` (``steps``): the classes, the share of right answers reached from
wrong inputs, the accuracy that counts a right answer only from right inputs, and each kind of unreadable
block. A row without a certified input (none its note supports) is not step-graded; the summary counts it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.grading.steps import BLOCK_PROBLEMS, CLASSES, grade_label_set, share, summarize

ROW_FIELDS = ("Calculator ID", "Calculator Name", "Output Type", "Ground Truth Answer", "Lower Limit", "Upper Limit")
FILES = ("steps.csv", "steps_inputs.csv", "steps_calculators.csv", "steps.png")


@dataclass
class StepReport:
    """The step-wise tables of every label set that has certified inputs (``rows``, ``inputs``, ``calculators``)
    and each one's summary (``summaries``, by label set)."""

    rows: pd.DataFrame
    inputs: pd.DataFrame
    calculators: pd.DataFrame
    summaries: dict[str, dict[str, Any]]

    def write(self, out: Path) -> list[Path]:
        from medcalc_maintained.core.csv_for_people import write_csv_for_people

        paths = [write_csv_for_people(out / "steps.csv", self.rows),
                 write_csv_for_people(out / "steps_inputs.csv", self.inputs),
                 write_csv_for_people(out / "steps_calculators.csv", self.calculators)]
        return paths + [plot(self.calculators, out / "steps.png")]


def per_calculator(rows: pd.DataFrame) -> pd.DataFrame:
    cols = ["label_set", "calculator_id", "calculator", "rows", "right", *[c for c in CLASSES if c != "right"],
            "readable", "extraction_errors", "extraction_error_rate", "judged", "arithmetic_errors",
            "arithmetic_error_rate"]
    if rows.empty:
        return pd.DataFrame(columns=cols)
    out = []
    for _, part in rows.groupby(["label_set", "calculator_id"], sort=True):
        ls, cid = str(part["label_set"].iloc[0]), int(part["calculator_id"].iloc[0])
        readable = part[part["block"] == "ok"]
        extraction = int(((readable["inputs_wrong"] + readable["inputs_missing"] + readable["inputs_bad_unit"]) > 0).sum())
        judged = part[part["arithmetic"].notna()]
        arithmetic = int((judged["arithmetic"] == False).sum())  # noqa: E712 - an object column of True/False/None
        out.append({"label_set": ls, "calculator_id": int(cid), "calculator": str(part["calculator"].iloc[0]),
                    "rows": len(part), "right": int((part["error_class"] == "right").sum()),
                    **{c: int((part["error_class"] == c).sum()) for c in CLASSES if c != "right"},
                    "readable": len(readable), "extraction_errors": extraction,
                    "extraction_error_rate": share(extraction, len(readable)), "judged": len(judged),
                    "arithmetic_errors": arithmetic, "arithmetic_error_rate": share(arithmetic, len(judged))})
    return pd.DataFrame(out, columns=cols)


def step_report(predictions: Mapping[int, str], label_sets: Mapping[str, tuple[pd.DataFrame, pd.DataFrame]]) -> StepReport:
    """The :class:`StepReport` of ``predictions`` under each label set given as ``(labels, inputs)``."""
    rows: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    summaries = {}
    for name, (labels, certified) in label_sets.items():
        r, i, s = grade_label_set(name, predictions, labels, certified)
        rows += r
        inputs += i
        summaries[name] = s
    row_frame = pd.DataFrame(rows)
    input_frame = pd.DataFrame(inputs, columns=["label_set", "uid", "calculator_id", "input", "status", "certified",
                                                "stated"])
    return StepReport(row_frame, input_frame, per_calculator(row_frame), summaries)


def plot(calculators: pd.DataFrame, path: os.PathLike | str) -> Path:
    """Per calculator (and label set), the extraction and the arithmetic error rates as two bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from medcalc_maintained.core.atomic import write_atomic

    data = calculators.dropna(subset=["extraction_error_rate", "arithmetic_error_rate"], how="all")
    labels = [f"{c} ({n})" if calculators["label_set"].nunique() == 1 else f"{c} ({n}) [{ls}]"
              for c, n, ls in zip(data["calculator"], data["rows"], data["label_set"])]
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.32 * len(data) + 1.2)))
    ys = range(len(data))
    ax.barh([y - 0.2 for y in ys], data["extraction_error_rate"].fillna(0), height=0.4, label="extraction error rate")
    ax.barh([y + 0.2 for y in ys], data["arithmetic_error_rate"].fillna(0), height=0.4, label="arithmetic error rate")
    ax.set_yticks(list(ys), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("extraction: share of rows with a readable block; arithmetic: of rows the calculator "
                  "computes from (rows graded in parentheses)", fontsize=7)
    ax.set_title("Where wrong answers come from, per calculator")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    target = Path(path)
    write_atomic(target, lambda p: fig.savefig(p, format="png", dpi=110))
    plt.close(fig)
    return target


__all__ = ["BLOCK_PROBLEMS", "FILES", "StepReport", "grade_label_set", "per_calculator", "step_report", "summarize"]
