"""Impact-aware triage: rank the queue by expected harm, not only by the evidence of an error.

A wrong CURB-65 that sends a patient home and a decimal off by 6% are not worth the same physician
review. Each queue row gets

``p_wrong``            the probability its label is wrong, read from the evidence priority of
                       :mod:`medcalc_maintained.planning.triage`: ``min(1, priority / saturation)``
                       (``triage.impact.saturation``: the priority at which the evidence is taken as
                       certain; 0 without evidence);
``expected_severity``  the level (``calculators/severity.py``) the change would have if the label is
                       wrong, from the row's own evidence: the change from the current label to the
                       relabel's label (when the relabel labelled the row and disagrees), else to
                       the recompute's value (when the recompute found an aggregation mismatch),
                       else the calculator's prior (``severity_source`` says which);
``severity_weight``    ``triage.impact.weights[expected_severity]``; the prior of a calculator is the
                       mean weight of the levels ``L1`` up to the worst level its thresholds can
                       reach (:attr:`Threshold.max_level`);
``harm``               ``p_wrong * severity_weight``.

``triage.ranking: harm`` orders the queue by harm (ties: priority, split, uid); ``evidence`` keeps
the ranking by priority alone. Policy contradictions routed for re-review stay first either way.
:func:`severity_metrics` measures both rankings and uniform sampling against the adjudicated
labels: errors (``Label Status`` corrected or abstain) and severe errors (``Change Severity`` L2+)
found within the review budget, on every row and on the adjudicated rows only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medcalc_maintained.calculators.severity import LEVELS, SEVERE, change_level
from medcalc_maintained.calculators.thresholds import thresholds
from medcalc_maintained.core.answers import parse_answer, same_value
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import ERROR_STATUSES, UNVERIFIED
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.planning.requeue import MARKERS

RANKINGS = ("harm", "evidence")
IMPACT_COLUMNS = ["p_wrong", "expected_severity", "severity_source", "severity_weight", "harm"]


@dataclass(frozen=True)
class ImpactConfig:
    """The ``triage.ranking`` and ``triage.impact`` parameters, checked."""

    ranking: str
    weights: dict[str, float]
    saturation: float

    @classmethod
    def from_section(cls, section: dict[str, Any], where: str) -> "ImpactConfig":
        ranking = str(section.get("ranking", "harm"))
        if ranking not in RANKINGS:
            raise DataError(where, f"ranking {ranking!r} is not one of {list(RANKINGS)}", field="triage.ranking")
        impact = section.get("impact") or {}
        raw = impact.get("weights") or {}
        if set(raw) != set(LEVELS):
            raise DataError(where, f"weights must give each of {list(LEVELS)}, got {sorted(raw)}",
                            field="triage.impact.weights")
        weights = {}
        for lv in LEVELS:
            try:
                weights[lv] = float(raw[lv])
            except (TypeError, ValueError):
                raise DataError(where, f"{raw[lv]!r} is not a number", field=f"triage.impact.weights.{lv}") from None
            if weights[lv] < 0:
                raise DataError(where, f"{weights[lv]} must be >= 0", field=f"triage.impact.weights.{lv}")
        if [weights[lv] for lv in LEVELS] != sorted(weights.values()):
            raise DataError(where, "weights must not decrease from L0 to L3", field="triage.impact.weights")
        sat = impact.get("saturation")
        if not isinstance(sat, (int, float)) or isinstance(sat, bool) or not sat > 0:
            raise DataError(where, f"saturation must be a number > 0, not {sat!r}", field="triage.impact.saturation")
        return cls(ranking, weights, float(sat))

    @classmethod
    def from_project(cls, project: Any) -> "ImpactConfig":
        return cls.from_section(project.section("triage"), str(project.params_file))

    def prior_weight(self, calculator_id: int) -> float:
        top = LEVELS.index(thresholds()[int(calculator_id)].max_level)
        return float(np.mean([self.weights[lv] for lv in LEVELS[1:top + 1]]))


def _alternative(r: dict[str, Any], otype: str) -> tuple[Any, str] | None:
    """The value the row's evidence proposes instead of its label, and where it comes from."""
    if r.get("relabel_status") == "labeled" and r.get("relabel_label") is not None:
        return r["relabel_label"], "relabel"
    rec = r.get("recomputed")
    if r.get("recompute_finding") == "aggregation_mismatch" and rec is not None and str(rec).strip():
        if parse_answer(str(rec), otype).is_valid:
            return str(rec), "recompute"
    return None


def expected_severity(queue: pd.DataFrame, instances: pd.DataFrame, recompute: pd.DataFrame,
                      cfg: ImpactConfig) -> pd.DataFrame:
    """``queue`` with :data:`IMPACT_COLUMNS` (see the module doc); the order is kept."""
    inst = instances.assign(split=instances["split"].astype(str), uid=instances["uid"].astype(int))
    ents = inst["entities"] if "entities" in inst.columns else pd.Series([None] * len(inst), index=inst.index)
    rows = {(s, u): (g, e) for s, u, g, e in zip(inst["split"], inst["uid"], inst["Ground Truth Answer"], ents)}
    rc = recompute.assign(split=recompute["split"].astype(str), uid=recompute["uid"].astype(int))
    recomputed = dict(zip(zip(rc["split"], rc["uid"]), rc["recomputed"])) if "recomputed" in rc.columns else {}
    levels, sources, weights = [], [], []
    for r in row_dicts(queue):
        k = (str(r["split"]), int(r["uid"]))
        label, entities = rows[k]
        otype = str(r["output_type"])
        alt = _alternative({**r, "recomputed": recomputed.get(k)}, otype)
        level = None
        if alt is not None and not same_value(alt[0], label, otype):
            level = change_level(r["calculator_id"], label, alt[0], otype, entities)
        if level is None or level == "L0" or alt is None:  # a level is only set beside an alternative
            levels.append(thresholds()[int(r["calculator_id"])].max_level)
            sources.append("prior")
            weights.append(cfg.prior_weight(int(r["calculator_id"])))
        else:
            levels.append(level)
            sources.append(alt[1])
            weights.append(cfg.weights[level])
    q = queue.copy()
    q["p_wrong"] = np.clip(q["priority"].astype(float) / cfg.saturation, 0.0, 1.0).round(6)
    q["expected_severity"] = levels
    q["severity_source"] = sources
    q["severity_weight"] = np.round(weights, 6)
    q["harm"] = (q["p_wrong"] * q["severity_weight"]).round(6)
    return q


def order(queue: pd.DataFrame, ranking: str, *, keep_contradictions_first: bool = True) -> pd.DataFrame:
    """The queue in ``ranking`` order (``rank`` renumbered); the marked re-reviews first (policy
    contradictions, then underived labels: :data:`medcalc_maintained.planning.requeue.MARKERS`) if marked."""
    by = (["harm", "priority"] if ranking == "harm" else ["priority"]) + ["split", "uid"]
    asc = [False] * (len(by) - 2) + [True, True]
    if keep_contradictions_first:
        marks = [m for m in MARKERS if m in queue.columns]
        by, asc = [*marks, *by], [*[False] * len(marks), *asc]
    q = queue.sort_values(by, ascending=asc, kind="mergesort").reset_index(drop=True)
    if "rank" in q.columns:
        q["rank"] = np.arange(1, len(q) + 1)
    return q


def rank(queue: pd.DataFrame, instances: pd.DataFrame, recompute: pd.DataFrame, cfg: ImpactConfig) -> pd.DataFrame:
    """The queue with the impact columns, in the configured ranking's order."""
    return order(expected_severity(queue, instances, recompute, cfg), cfg.ranking)


def _truth(queue: pd.DataFrame, maintained: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int)).set_index(["split", "uid"])
    keys = list(zip(queue["split"].astype(str), queue["uid"].astype(int)))
    status = [str(m["Label Status"].get(k, UNVERIFIED)) for k in keys]
    if "Change Severity" in m.columns:
        sev = [str(m["Change Severity"].get(k, "")) for k in keys]
    else:  # maintained labels written before the column existed: derive it as apply does
        ents = m["entities"] if "entities" in m.columns else pd.Series([None] * len(m), index=m.index)
        by = {k: change_level(c, o, g, t, e) for k, c, o, g, t, e in zip(
            m.index, m["calculator_id"], m["Original Ground Truth Answer"].astype(str), m["Ground Truth Answer"].astype(str),
            m["output_type"].astype(str), ents)}
        sev = [by.get(k, "") for k in keys]
    err = np.array([s in ERROR_STATUSES for s in status])
    severe = err & np.array([s in SEVERE for s in sev])
    return err, severe, np.array([s != UNVERIFIED for s in status])


def _found(queue: pd.DataFrame, maintained: pd.DataFrame, k: int, only_adjudicated: bool) -> dict[str, Any]:
    err, severe, adjudicated = _truth(queue, maintained)
    if only_adjudicated:
        err, severe = err[adjudicated], severe[adjudicated]
    k = min(k, len(err))
    return {"errors": int(err[:k].sum()), "severe": int(severe[:k].sum()), "reviews": k,
            "_rate": (float(err.mean()), float(severe.mean())) if len(err) else (0.0, 0.0)}


def severity_metrics(queue: pd.DataFrame, maintained: pd.DataFrame, budget: int, ranking: str) -> dict[str, Any]:
    """Errors and severe (L2+) errors found in the first ``budget`` reviews: harm ranking, evidence
    ranking and uniform sampling (expected: budget x rate), on every row and on adjudicated rows only
    (``Label Status`` != unverified, where the truth is known). Policy contradictions are left out
    of the order: the rankings are judged as predictions of a wrong label."""
    out: dict[str, Any] = {"ranking": ranking, "budget": budget,
                           "severe": f"Change Severity in {list(SEVERE)} of an adjudicated change"}
    for scope, only in (("all_rows", False), ("adjudicated_rows", True)):
        part: dict[str, Any] = {}
        for name in RANKINGS:
            f = _found(order(queue, name, keep_contradictions_first=False), maintained, budget, only)
            rate = f.pop("_rate")
            part[name] = f
        part["uniform_expected"] = {"errors": round(f["reviews"] * rate[0], 2),
                                    "severe": round(f["reviews"] * rate[1], 2), "reviews": f["reviews"]}
        out[scope] = part
    return out


__all__ = ["ImpactConfig", "IMPACT_COLUMNS", "RANKINGS", "expected_severity", "order", "rank", "severity_metrics"]
