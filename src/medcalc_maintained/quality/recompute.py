"""Stage ``recompute``: re-derive every label from its own extracted features with our calculators.

For each instance, :func:`medcalc_maintained.calculators.compute` is run on the upstream
``Relevant Entities``; the result is graded against the upstream label with MedCalc-Bench's rules.
Findings, in order of precedence:

``not_computable``        an input is missing or invalid (unknown unit, unreadable value);
``implausible_input``     an input is outside its physiological range (the features look wrong);
``aggregation_mismatch``  the features are plausible but our calculator disagrees with the label
                          (the upstream aggregation, or our reading of it, differs);
``agrees``                our calculator reproduces the label from the same features.
"""

from __future__ import annotations

from typing import Any, Sequence, cast

import pandas as pd

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.core.answers import is_correct, parse_answer, rel_err
from medcalc_maintained.core.parallel import map_chunks
from medcalc_maintained.core.rows import Row, rows_of

FINDINGS = ("agrees", "aggregation_mismatch", "implausible_input", "not_computable")
FLAGGING = ("aggregation_mismatch", "implausible_input")


def recompute_row(calculator_id: int, entities: dict[str, Any], label: str, lower: str, upper: str,
                  output_type: str) -> dict[str, Any]:
    res = compute(calculator_id, entities)
    out: dict[str, Any] = {
        "recomputed": res.value,
        "computable": res.computable,
        "missing_inputs": ";".join(res.missing + res.invalid),
        "implausible_inputs": ";".join(res.implausible),
        "agrees_with_original": None,
        "rel_err": None,
    }
    if not res.computable:
        out["finding"] = "not_computable"
        return out
    gt = parse_answer(label, output_type)
    if gt.kind in ("invalid",):
        out["finding"] = "not_computable"
        return out
    value = parse_answer(res.value, output_type)  # each side parsed once, then graded and compared
    agrees = is_correct(value, gt, lower, upper, output_type)
    out["agrees_with_original"] = bool(agrees)
    out["rel_err"] = float(rel_err(value, gt, output_type))
    if res.implausible:
        out["finding"] = "implausible_input"
    elif not agrees:
        out["finding"] = "aggregation_mismatch"
    else:
        out["finding"] = "agrees"
    return out


def recompute_record(split: str, uid: Any, calculator_id: Any, entities: dict[str, Any], label: str, lower: str,
                     upper: str, output_type: str) -> dict[str, Any]:
    """One row of the recompute table: the row's keys and :func:`recompute_row`."""
    return {"split": split, "uid": int(uid), "calculator_id": int(calculator_id),
            **recompute_row(int(calculator_id), entities, label, lower, upper, output_type)}


def _recompute_rows(rows: Sequence[Row]) -> list[dict[str, Any]]:
    return [recompute_record(r.split, r.uid, r.calculator_id, r.entities, r.label, r.lower, r.upper, r.output_type)
            for r in rows]


def recompute_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The recompute table of :func:`recompute_row` dicts (with ``split``, ``uid``, ``calculator_id``)."""
    df = pd.DataFrame(rows)
    df["agrees_with_original"] = df["agrees_with_original"].astype("boolean")
    df["rel_err"] = df["rel_err"].astype("float64")
    return df


def recompute(instances: pd.DataFrame, progress: bool = False) -> pd.DataFrame:
    """One row per instance: ``uid``, ``split``, ``calculator_id``, the recomputation and its finding.
    (Stage ``recompute`` runs it together with the checks: ``stages.recompute.recompute_and_check``.)"""
    load_all()
    return recompute_frame(map_chunks(_recompute_rows, rows_of(instances), workers=1, progress="recompute" if progress else None))


def per_calculator(rec: pd.DataFrame, instances: pd.DataFrame) -> list[dict[str, Any]]:
    """Per calculator: rows, computable rate, agreement rate among computable rows, flags."""
    names: dict[int, str] = {}
    for row in rows_of(instances):  # the first row's name of each calculator
        names.setdefault(row.calculator_id, row.calculator_name)
    out = []
    for key, g in rec.groupby("calculator_id"):
        cid = int(cast(int, key))  # a calculator_id: a whole number
        comp = g["computable"]
        agree = g.loc[comp, "agrees_with_original"].astype(bool)
        out.append({
            "calculator_id": cid,
            "calculator": names.get(cid, str(cid)),
            "rows": int(len(g)),
            "computable_rate": round(float(comp.mean()), 4),
            "agreement_rate": round(float(agree.mean()), 4) if len(agree) else None,
            "flagged": int(g["finding"].isin(FLAGGING).sum()),
        })
    return out


def per_calculator_agreement(rec: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """The agreement rates of :func:`per_calculator` as a two-column table (for ``dvc plots``)."""
    rows = [{"calculator": d["calculator"], "agreement": d["agreement_rate"] or 0.0} for d in per_calculator(rec, instances)]
    return pd.DataFrame(rows).sort_values("agreement", kind="stable").reset_index(drop=True)


def summarise(rec: pd.DataFrame, instances: pd.DataFrame, maintained: pd.DataFrame | None = None,
              findings: pd.DataFrame | None = None) -> dict[str, Any]:
    """Per-calculator computable and agreement rates, and (given maintained labels) the detector's
    precision and recall for "the original label diverges from the maintained label"."""
    per_calc = per_calculator(rec, instances)
    summary: dict[str, Any] = {
        "rows": int(len(rec)),
        "computable": int(rec["computable"].sum()),
        "computable_rate": round(float(rec["computable"].mean()), 4),
        "agreement_rate": round(float(rec.loc[rec["computable"], "agrees_with_original"].astype(bool).mean()), 4),
        "findings": {f: int((rec["finding"] == f).sum()) for f in FINDINGS},
        "per_calculator": per_calc,
    }
    if maintained is not None:
        summary["detector"] = detector_quality(rec, maintained)
        if findings is not None:
            from medcalc_maintained.quality.checks.metrics import detector_metrics

            summary["checks"] = detector_metrics(findings, maintained)
    return summary


def detector_quality(rec: pd.DataFrame, maintained: pd.DataFrame) -> dict[str, Any]:
    """Precision/recall of ``finding in FLAGGING`` for rows whose maintained label differs from the
    original, over rows the campaign verified (status corrected/abstain/confirmed)."""
    m = maintained[maintained["Label Status"].isin(["corrected", "abstain", "confirmed"])]
    truth = m.set_index(["split", "uid"])["Label Status"].isin(["corrected", "abstain"])
    flags = rec.set_index(["split", "uid"])["finding"].isin(FLAGGING)
    joined = pd.concat([truth.rename("diverges"), flags.rename("flagged")], axis=1, join="inner")
    tp = int((joined["diverges"] & joined["flagged"]).sum())
    fp = int((~joined["diverges"] & joined["flagged"]).sum())
    fn = int((joined["diverges"] & ~joined["flagged"]).sum())
    return {
        "rows": int(len(joined)),
        "diverging": int(joined["diverges"].sum()),
        "flagged": int(joined["flagged"].sum()),
        "true_positives": tp,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
    }
