"""The tables of an evaluation (:mod:`medcalc_maintained.scoring.evaluate`): grading every label
set, accuracy per version and on the common rows, groups (calculator, ``Label Status``), paired
comparisons and flips. Inputs are the checked label sets and the predictions; nothing is read here.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from medcalc_maintained.calculators.severity import LEVELS, SEVERE
from medcalc_maintained.core.answers import Answer, graded_answer, parse_answer
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.grading.grade import (
    STATUSES,
    bootstrap_accuracy_ci,
    bootstrap_difference_ci,
    error_severity,
    grade,
    mcnemar_exact,
    parsed_text,
)
from medcalc_maintained.grading.graders import grader

GRADED_COLUMNS = ["label_set", "uid", "calculator", "label_status", "label", "output_type", "answer", "parsed",
                  "status", "correct", "severity"]
SHOWN_ANSWER_CHARS = 200  # the answer column of graded.csv shows at most this many characters


def _graded_status(name: str | None, output: str, rec: dict) -> tuple[str, Answer | None]:
    """``(status, parsed)`` of one prediction under grader ``name`` (``None``/``ours``: ours).

    Another grader decides only correct or not; the status of an answer it calls wrong is ours
    (``wrong``/``abstained``/``unparsable``), or ``wrong`` where ours would have called it correct."""
    status, parsed = grade(output, rec["Ground Truth Answer"], rec["Lower Limit"], rec["Upper Limit"],
                           rec["Output Type"])
    if name in (None, "ours"):
        return status, parsed
    row = {**rec, "Calculator ID": rec.get("calculator_id", ""), "Category": rec.get("category", "")}
    if grader(name)(row, output):
        return "correct", parsed
    return ("wrong" if status == "correct" else status), parsed


def grade_all(preds: dict[int, str], sets: dict[str, pd.DataFrame], universes: dict[str, frozenset[int] | None],
              subset: frozenset[int] | None, graders: dict[str, str] | None = None
              ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(graded, skipped)``: one row per scored (label set, uid), one per skipped one with its reason.
    ``graders`` names the grader of each set (:mod:`medcalc_maintained.grading.graders`; default ours)."""
    rows, skipped = [], []
    graders = graders or {}
    for name, labels in sets.items():
        for rec in row_dicts(labels):
            uid = rec["uid"]
            if subset is not None and uid not in subset:
                continue
            if uid not in preds:
                skipped.append({"label_set": name, "uid": uid, "reason": "no prediction"})
                continue
            status, parsed = _graded_status(graders.get(name), preds[uid], rec)
            rows.append({"label_set": name, "uid": uid, "calculator": rec["Calculator Name"],
                         "label_status": rec["Label Status"], "label": rec["Ground Truth Answer"],
                         "output_type": rec["Output Type"], "answer": graded_answer(preds[uid])[:SHOWN_ANSWER_CHARS],
                         "parsed": parsed_text(parsed), "status": status, "correct": status == "correct",
                         "severity": "" if status == "correct" else error_severity(rec, parsed)})
        universe = universes.get(name)
        for uid in sorted(set(preds) - set(labels.index)):
            if subset is not None and uid not in subset:
                continue
            reason = "unlabelled in this version" if universe is not None and uid in universe else "not in this label set"
            skipped.append({"label_set": name, "uid": uid, "reason": reason})
    return (pd.DataFrame(rows, columns=GRADED_COLUMNS),
            pd.DataFrame(skipped, columns=["label_set", "uid", "reason"]))


def _acc_row(g: pd.DataFrame, rng: np.random.Generator, n_boot: int) -> dict:
    n, k = len(g), int(g["correct"].sum())
    lo, hi = bootstrap_accuracy_ci(k, n, rng, n_boot)
    return {"n": n, "correct": k, "accuracy": k / n if n else float("nan"), "ci_low": lo, "ci_high": hi}


def accuracy(graded: pd.DataFrame, skipped: pd.DataFrame, names: list[str], rng: np.random.Generator,
             n_boot: int) -> pd.DataFrame:
    """Per label set, on its own scored rows: accuracy, error statuses, severity of the errors, skips."""
    out = []
    for name in names:
        g = graded[graded["label_set"] == name]
        counts = g["status"].value_counts()
        levels = g.loc[~g["correct"], "severity"].value_counts()
        reasons = skipped.loc[skipped["label_set"] == name, "reason"].value_counts()
        out.append({"label_set": name, **_acc_row(g, rng, n_boot),
                    **{s: int(counts.get(s, 0)) for s in STATUSES if s != "correct"},
                    "na_labels": int(sum(parse_answer(x, t).is_abstain for x, t in zip(g["label"], g["output_type"]))),
                    "severe_errors": int(sum(levels.get(lv, 0) for lv in SEVERE)),
                    **{f"errors_{lv}": int(levels.get(lv, 0)) for lv in LEVELS},
                    "errors_without_level": int(levels.get("", 0)),
                    **{"skipped_" + r.replace(" ", "_"): int(reasons.get(r, 0)) for r in
                       ("no prediction", "unlabelled in this version", "not in this label set")}})
    return pd.DataFrame(out)


ABSTENTION_COLUMNS = ["label_set", "na_rows", "refused_na", "refused_na_share", "refused_na_ci_low",
                      "refused_na_ci_high", "answerable_rows", "refused_answerable", "refused_answerable_share",
                      "refused_answerable_ci_low", "refused_answerable_ci_high", "accuracy_answerable"]


def abstention(graded: pd.DataFrame, names: list[str], rng: np.random.Generator, n_boot: int) -> pd.DataFrame:
    """Refusals reported apart from accuracy, per label set on its scored rows: on the rows labelled
    ``N/A``, the share the model refused (answered ``N/A``: a warranted refusal); on the answerable
    rows, the share it refused anyway (an unwarranted one), each with its bootstrap interval; and the
    accuracy on the answerable rows alone. A refusal is the model's answer parsed as an abstention,
    whatever the grader (an unparsable answer is no refusal)."""
    out = []
    for name in names:
        g = graded[graded["label_set"] == name]
        na_label = np.array([parse_answer(x, t).is_abstain for x, t in zip(g["label"], g["output_type"])], dtype=bool)
        refused = (g["parsed"] == "N/A").to_numpy(bool)
        row: dict = {"label_set": name}
        for key, rows in (("na", na_label), ("answerable", ~na_label)):
            n, k = int(rows.sum()), int((refused & rows).sum())
            lo, hi = bootstrap_accuracy_ci(k, n, rng, n_boot)
            row.update({f"{key}_rows": n, f"refused_{key}": k, f"refused_{key}_share": k / n if n else float("nan"),
                        f"refused_{key}_ci_low": lo, f"refused_{key}_ci_high": hi})
        answerable = g["correct"].to_numpy(bool)[~na_label]
        row["accuracy_answerable"] = float(answerable.mean()) if len(answerable) else float("nan")
        out.append(row)
    return pd.DataFrame(out, columns=ABSTENTION_COLUMNS)


def common_uids(graded: pd.DataFrame, names: list[str]) -> list[int]:
    """The uids scored under every label set, sorted."""
    per = [set(graded.loc[graded["label_set"] == n, "uid"]) for n in names]
    return sorted(set.intersection(*per)) if per else []


def common_accuracy(common: pd.DataFrame, names: list[str], rng: np.random.Generator, n_boot: int) -> pd.DataFrame:
    return pd.DataFrame([{"label_set": n, **_acc_row(common[common["label_set"] == n], rng, n_boot)} for n in names])


def by_group(graded: pd.DataFrame, common: pd.DataFrame, key: str, rng: np.random.Generator,
             n_boot: int) -> pd.DataFrame:
    """Accuracy with its interval per (rows, label set, ``key``): ``rows`` is ``own`` (each set's
    scored rows) or ``common`` (the rows scored under every set)."""
    out = []
    for scope, frame in (("own", graded), ("common", common)):
        for (name, value), g in frame.groupby(["label_set", key], sort=True):
            out.append({"rows": scope, "label_set": name, key: value, **_acc_row(g, rng, n_boot)})
    return pd.DataFrame(out, columns=["rows", "label_set", key, "n", "correct", "accuracy", "ci_low", "ci_high"])


COMPARISON_COLUMNS = ["a", "b", "n_paired", "both_correct", "a_only", "b_only", "neither", "accuracy_a",
                      "accuracy_b", "difference", "diff_ci_low", "diff_ci_high", "mcnemar_p"]


def comparisons(common: pd.DataFrame, names: list[str], rng: np.random.Generator, n_boot: int) -> pd.DataFrame:
    """Every pair of label sets on the common rows: the 2x2 cells, McNemar's exact test, the
    difference of accuracy with its bootstrap interval."""
    out = []
    for a, b in itertools.combinations(names, 2):
        ca = common[common["label_set"] == a].set_index("uid")["correct"].sort_index().to_numpy(bool)
        cb = common[common["label_set"] == b].set_index("uid")["correct"].sort_index().to_numpy(bool)
        both, a_only = int((ca & cb).sum()), int((ca & ~cb).sum())
        b_only, neither = int((~ca & cb).sum()), int((~ca & ~cb).sum())
        n = len(ca)
        lo, hi = bootstrap_difference_ci(both, a_only, b_only, neither, rng, n_boot)
        out.append({"a": a, "b": b, "n_paired": n, "both_correct": both, "a_only": a_only, "b_only": b_only,
                    "neither": neither, "accuracy_a": (both + a_only) / n if n else float("nan"),
                    "accuracy_b": (both + b_only) / n if n else float("nan"),
                    "difference": (a_only - b_only) / n if n else float("nan"),
                    "diff_ci_low": lo, "diff_ci_high": hi, "mcnemar_p": mcnemar_exact(a_only, b_only)})
    return pd.DataFrame(out, columns=COMPARISON_COLUMNS)


def flips(common: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """The common rows whose correctness differs between label sets: the answer, and per set its
    label and whether the answer is correct under it."""
    cols = ["uid", "calculator", "answer", "parsed"] + [f"{k}_{n}" for n in names for k in ("label", "correct")]
    if common.empty or len(names) < 2:
        return pd.DataFrame(columns=cols)
    wide = common.pivot(index="uid", columns="label_set", values=["label", "correct"])
    first = common[common["label_set"] == names[0]].set_index("uid")
    flipped = [u for u in wide.index if len({bool(wide.loc[u, ("correct", n)]) for n in names}) > 1]
    rows = [{"uid": u, "calculator": first.loc[u, "calculator"], "answer": first.loc[u, "answer"],
             "parsed": first.loc[u, "parsed"],
             **{f"{k}_{n}": (bool(wide.loc[u, (k, n)]) if k == "correct" else wide.loc[u, (k, n)])
                for n in names for k in ("label", "correct")}} for u in flipped]
    return pd.DataFrame(rows, columns=cols)


DECOMPOSITION_COLUMNS = ["change", "held_fixed", "from", "to", "n_paired", "accuracy_from", "accuracy_to",
                         "difference", "diff_ci_low", "diff_ci_high"]


def decomposition(common: pd.DataFrame, cells: dict[tuple[str, str], str], versions: list[str],
                  graders: list[str], rng: np.random.Generator, n_boot: int) -> pd.DataFrame:
    """The accuracy change due to labels and the change due to grading, separately, on the common rows.

    ``cells[(version, grader)]`` is the scored set of that version graded by that grader. For every
    pair of versions (A before B) and every grader: ``labels`` = acc(B) - acc(A) under that grader;
    for every pair of graders (g before h) and every version: ``grading`` = acc(h) - acc(g) under
    those labels. Each with a paired bootstrap interval over the common rows."""
    def correct(name: str) -> np.ndarray:
        return common[common["label_set"] == name].set_index("uid")["correct"].sort_index().to_numpy(bool)

    def row(change: str, fixed: str, a: str, b: str, set_a: str, set_b: str) -> dict:
        ca, cb = correct(set_a), correct(set_b)
        n = len(ca)
        both, a_only = int((ca & cb).sum()), int((ca & ~cb).sum())
        b_only, neither = int((~ca & cb).sum()), int((~ca & ~cb).sum())
        lo, hi = bootstrap_difference_ci(both, b_only, a_only, neither, rng, n_boot)  # acc(b) - acc(a)
        return {"change": change, "held_fixed": fixed, "from": a, "to": b, "n_paired": n,
                "accuracy_from": ca.mean() if n else float("nan"), "accuracy_to": cb.mean() if n else float("nan"),
                "difference": (b_only - a_only) / n if n else float("nan"), "diff_ci_low": lo, "diff_ci_high": hi}

    out = [row("labels", f"grader {g}", a, b, cells[(a, g)], cells[(b, g)])
           for a, b in itertools.combinations(versions, 2) for g in graders]
    out += [row("grading", f"labels {v}", g, h, cells[(v, g)], cells[(v, h)])
            for g, h in itertools.combinations(graders, 2) for v in versions]
    return pd.DataFrame(out, columns=DECOMPOSITION_COLUMNS)
