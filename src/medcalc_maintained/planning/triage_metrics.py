"""How good the triage queue is, measured against the adjudicated changes of the maintained labels.

Truth: a row's maintained ``Label Status`` is ``corrected`` or ``abstain``. The metrics give
precision@k of the queue next to uniform random sampling (expected precision = the base rate, and a
seeded simulation with a 95% interval), the same for the queue without the relabel evidence (the
relabel of the offline pipeline replays the campaign's own consensus labels, so that ablation is the
non-circular figure), and errors found per review within the budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from medcalc_maintained.core.labels import ERROR_STATUSES, UNVERIFIED
from medcalc_maintained.planning.triage import TriageConfig, relabel_part, sort_queue


def _status(queue: pd.DataFrame, maintained: pd.DataFrame) -> list[str]:
    """Per queue row (in queue order): its maintained ``Label Status`` (``unverified`` when absent)."""
    keyed = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int))
    st = keyed.set_index(["split", "uid"])["Label Status"].astype(str)
    return [st.get((s, u), UNVERIFIED) for s, u in zip(queue["split"], queue["uid"])]


def truth(queue: pd.DataFrame, maintained: pd.DataFrame) -> np.ndarray:
    """Per queue row (in queue order): is the maintained label an adjudicated change?"""
    return np.array([s in ERROR_STATUSES for s in _status(queue, maintained)])


def precision_at(hits_in_order: np.ndarray, k: int) -> float:
    k = min(k, len(hits_in_order))
    return float(hits_in_order[:k].mean()) if k else float("nan")


def uniform_simulation(hits: np.ndarray, k: int, n: int, seed: int) -> dict[str, Any]:
    """Precision of ``n`` seeded uniform samples of ``k`` rows without replacement."""
    rng = np.random.default_rng(seed)
    k = min(k, len(hits))
    keys = rng.random((n, len(hits)))
    idx = np.argpartition(keys, k - 1, axis=1)[:, :k] if k < len(hits) else np.tile(np.arange(len(hits)), (n, 1))
    prec = hits[idx].mean(axis=1)
    lo, hi = np.percentile(prec, [2.5, 97.5])
    return {"mean": round(float(prec.mean()), 4), "ci95": [round(float(lo), 4), round(float(hi), 4)]}


def ablate_relabel(queue: pd.DataFrame, cfg: TriageConfig) -> pd.DataFrame:
    """The ranking recomputed with every relabel weight set to 0 (audit + recompute evidence only)."""
    q = queue.copy()
    q["priority"] = (q["priority"] - relabel_part(q, cfg.weights)).round(6)
    return sort_queue(q).reset_index(drop=True)


def _precision_table(hits: np.ndarray, hits_ablated: np.ndarray, unverified: np.ndarray, base: float,
                     cfg: TriageConfig) -> dict[str, Any]:
    pk: dict[str, Any] = {}
    for i, k in enumerate(cfg.ks):
        sim = uniform_simulation(hits, k, cfg.simulations, cfg.seed + i)
        pk[str(k)] = {
            "triage": round(precision_at(hits, k), 4),
            "triage_without_relabel": round(precision_at(hits_ablated, k), 4),
            "uniform_expected": round(base, 4),
            "uniform_simulated": sim["mean"],
            "uniform_ci95": sim["ci95"],
            "lift": round(precision_at(hits, k) / base, 2) if base else None,
            "unverified_in_top_k": int(unverified[:k].sum()),
        }
    return pk


def _per_review(queue: pd.DataFrame, hits: np.ndarray, cfg: TriageConfig) -> dict[str, Any]:
    routed = queue["in_budget"].to_numpy(dtype=bool)
    # uniform sampling draws from every row not already settled by a skipped source (a physician)
    pool = ~queue["label_source"].isin(cfg.skip_sources).to_numpy(dtype=bool)
    found = int(hits[routed].sum())
    reviews = int(routed.sum())
    base_pool = float(hits[pool].mean()) if pool.any() else float("nan")
    return {
        "triage": round(found / reviews, 4) if reviews else None,
        "uniform": round(base_pool, 4) if pool.any() else None,
        "uniform_pool": int(pool.sum()),
        "errors_found": found,
        "reviews": reviews,
    }


def metrics(queue: pd.DataFrame, maintained: pd.DataFrame, cfg: TriageConfig) -> tuple[dict[str, Any], pd.DataFrame]:
    """The metrics JSON and the cumulative errors-found curve (for ``dvc plots`` and the PNG)."""
    hits = truth(queue, maintained)
    hits_ablated = truth(ablate_relabel(queue, cfg), maintained)
    unverified = np.array([s == UNVERIFIED for s in _status(queue, maintained)])
    n, errors = len(hits), int(hits.sum())
    base = errors / n if n else float("nan")
    routed = queue["in_budget"].to_numpy(dtype=bool)
    per_reviewer = queue.loc[routed].groupby("reviewer").size().to_dict()
    out = {
        "rows": n,
        "truth": {"definition": "maintained Label Status in {corrected, abstain}", "errors": errors,
                  "unverified": int(unverified.sum())},
        "base_rate": round(base, 4),
        "budget": cfg.budget,
        "eligible": int(queue["eligible"].to_numpy(dtype=bool).sum()),
        "routed": int(routed.sum()),
        "per_reviewer": {str(k): int(v) for k, v in sorted(per_reviewer.items())},
        "no_reviewer": int(queue["routing"].str.startswith(("no reviewer", "no specialty")).sum()),
        "precision_at_k": _precision_table(hits, hits_ablated, unverified, base, cfg),
        "errors_found_per_review": _per_review(queue, hits, cfg),
        "uniform_simulations": cfg.simulations,
        "seed": cfg.seed,
    }
    m = min(cfg.curve_max, n)
    ks = np.arange(1, m + 1)
    curve = pd.DataFrame({
        "reviews": ks,
        "triage": np.cumsum(hits[:m]),
        "triage_without_relabel": np.cumsum(hits_ablated[:m]),
        "uniform_expected": np.round(ks * base, 3),
    })
    return out, curve


__all__ = ["metrics", "truth", "precision_at", "uniform_simulation", "ablate_relabel"]
