"""Physician-agreement report: how close each label set is to the blinded physician labels.

Rules (the audit's, documented in ``../shared/README.md``):

* a cell's number is its first numeric token; ``N/A`` and text without a number are N/A;
* both N/A agree, exactly one N/A disagrees;
* a row is *ordinal* when the physician label and every non-N/A candidate label compared on it
  are integer-like with ``|value| <= 20``; ordinal rows agree when ``|y* - y| <= 1``, all others
  when ``|y* - y| <= 5% of |y*|`` (``|y| <= 0.05`` when ``y* = 0``);
* sMAPE is the mean of ``200 |y* - y| / (|y*| + |y|)`` over rows where both are numbers (0 when
  both are 0).

Confidence intervals are percentile bootstraps over rows with a fixed seed.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from medcalc_maintained.core.answers import first_number, parse_answer

ORDINAL_LIMIT = 20


def cell_number(cell: Any, output_type: str | None = None) -> float | None:
    """Number of a label cell: parsed answers first (gestational age as days), else first token."""
    if isinstance(cell, str) and output_type:
        a = parse_answer(cell, output_type)
        if a.is_abstain:
            return None
        if a.is_number:
            return a.number
    return first_number(cell)


def _int_like(x: float) -> bool:
    return float(x).is_integer() and abs(x) <= ORDINAL_LIMIT


def agreement_flags(star: Sequence[float | None], candidates: Mapping[str, Sequence[float | None]]) -> dict[str, np.ndarray]:
    """Per candidate label set, a boolean array: does the label agree with the physician's?"""
    n = len(star)
    out = {name: np.zeros(n, dtype=bool) for name in candidates}
    for i in range(n):
        s = star[i]
        values = {name: vals[i] for name, vals in candidates.items()}
        ordinal = s is not None and _int_like(s) and all(_int_like(v) for v in values.values() if v is not None)
        for name, y in values.items():
            if s is None or y is None:
                out[name][i] = s is None and y is None
            elif ordinal:
                out[name][i] = abs(s - y) <= 1
            elif s == 0:
                out[name][i] = abs(y) <= 0.05
            else:
                out[name][i] = abs(s - y) <= 0.05 * abs(s)
    return out


def smape_terms(star: Sequence[float | None], y: Sequence[float | None]) -> np.ndarray:
    """Per row, the sMAPE term ``200 |s - v| / (|s| + |v|)`` (0 when both are 0), ``NaN`` where
    either value is missing (N/A); aligned with the rows, so a bootstrap can resample them."""
    terms = []
    for s, v in zip(star, y):
        if s is None or v is None:
            terms.append(np.nan)
            continue
        denom = abs(s) + abs(v)
        terms.append(0.0 if denom == 0 else 200.0 * abs(s - v) / denom)
    return np.asarray(terms, dtype=float)


def _ci(values: np.ndarray) -> list[float]:
    lo, hi = np.percentile(values, [2.5, 97.5])
    return [round(float(lo), 4), round(float(hi), 4)]


def physician_agreement(star: Sequence[float | None], candidates: Mapping[str, Sequence[float | None]],
                        n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Agreement count and sMAPE (with bootstrap 95% CIs) of each candidate label set."""
    star = list(star)
    n = len(star)
    flags = agreement_flags(star, candidates)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n)) if n else np.zeros((0, 0), dtype=int)
    result: dict[str, Any] = {"rows": n, "bootstrap": {"resamples": n_boot, "seed": seed}, "label_sets": {}}
    for name, vals in candidates.items():
        vals = list(vals)
        agree = flags[name]
        both = np.array([s is not None and v is not None for s, v in zip(star, vals)])
        terms_all = smape_terms(star, vals)
        smape = float(np.nanmean(terms_all)) if both.any() else math.nan
        boot_agree = agree[idx].sum(axis=1) if n else np.zeros(1)
        with np.errstate(invalid="ignore"):
            boot_smape = np.nanmean(terms_all[idx], axis=1) if n else np.zeros(1)
        boot_smape = boot_smape[~np.isnan(boot_smape)]
        result["label_sets"][name] = {
            "agree": int(agree.sum()),
            "rows": n,
            "agreement_rate": round(float(agree.mean()), 4) if n else None,
            "agree_ci95": _ci(boot_agree),
            "smape": round(smape, 4),
            "smape_rows": int(both.sum()),
            "smape_ci95": _ci(boot_smape) if len(boot_smape) else None,
        }
    return result


def campaign_candidates(campaign: pd.DataFrame, instances: pd.DataFrame, maintained: pd.DataFrame | None
                        ) -> tuple[list[int], list[float | None], dict[str, list[float | None]]]:
    """Physician-labelled rows of the campaign and the label sets to compare on them."""
    col = "physician_sampled" if "physician_sampled" in campaign.columns else "physician"
    rows = campaign[campaign[col].map(lambda c: not (isinstance(c, str) and c.strip() == ""))]
    otype = instances[instances["split"] == "test"].set_index("uid")["Output Type"].astype(str)
    uids = [int(u) for u in rows["uid"]]
    star = [first_number(c) for c in rows[col]]
    cands: dict[str, list[float | None]] = {
        "original": [cell_number(c, otype.get(u)) for c, u in zip(rows["y_orig"], uids)],
        "recomputed": [cell_number(c, otype.get(u)) for c, u in zip(rows["y_new"], uids)],
    }
    if maintained is not None:
        m = maintained[maintained["split"] == "test"].set_index("uid")
        cands["maintained"] = [cell_number(str(m.at[u, "Ground Truth Answer"]), otype.get(u)) for u in uids]
    return uids, star, cands


def agreement_report(campaign: pd.DataFrame, instances: pd.DataFrame, maintained: pd.DataFrame | None,
                     n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Each label set scored on its own against the physician labels.

    The ordinal rule looks at the candidate labels compared on a row: the published figures compare
    the original and the recomputed labels together; the maintained labels are scored with the
    same two plus themselves.
    """
    uids, star, cands = campaign_candidates(campaign, instances, maintained)
    base = {k: cands[k] for k in ("original", "recomputed")}
    report = physician_agreement(star, base, n_boot=n_boot, seed=seed)
    if "maintained" in cands:
        with_m = physician_agreement(star, cands, n_boot=n_boot, seed=seed)
        report["label_sets"]["maintained"] = with_m["label_sets"]["maintained"]
    report["uids"] = uids
    return report
