"""Replay study: the allocation policies run against the adjudicated rows as a simulated physician.

For each seed, the pool is a random ``pool_fraction`` of the adjudicated rows (so seeds differ for
every policy, not only for uniform sampling) and their decisions are hidden. Each policy picks a
batch (:func:`medcalc_maintained.planning.allocation.choose`), the simulated physician reveals the
adjudicated decision of each picked row, and the error model is refitted on everything revealed
before the next batch. After every review the study records:

``errors``      adjudicated label changes found so far;
``harm``        the severity weight of the changes found so far (each change at its real level);
``estimation``  the mean absolute error, over the calculators of the pool, of the estimated
                error rate against the truth. The estimate of calculator ``c`` is
                ``(wrong labels revealed + sum of P(wrong) over the rows not revealed) / rows``,
                the truth the share of adjudicated changes among its pool rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from medcalc_maintained.planning import allocation, error_model


@dataclass(frozen=True)
class ReplayConfig:
    policies: tuple[str, ...]
    seeds: tuple[int, ...]
    batch: int
    cap: int
    max_reviews: int
    pool_fraction: float
    prior_strength: float


@dataclass
class Universe:
    """The adjudicated rows: signals ``x``, calculator index ``calc`` (``n_calculators`` in all),
    truth ``y`` (1 = the label was changed), the queue ``priority``, the policy's ``harm_weight``
    (expected level) and ``true_harm`` (the weight of the real change, 0 for a confirmed row)."""

    x: np.ndarray
    calc: np.ndarray
    y: np.ndarray
    priority: np.ndarray
    harm_weight: np.ndarray
    true_harm: np.ndarray
    n_calculators: int


def _estimation_error(p: np.ndarray, revealed: np.ndarray, y: np.ndarray, calc: np.ndarray, n_c: np.ndarray,
                      true_rate: np.ndarray, present: np.ndarray) -> float:
    contrib = np.where(revealed, y, p)
    est = np.bincount(calc, weights=contrib, minlength=len(n_c))[present] / n_c[present]
    return float(np.mean(np.abs(est - true_rate[present])))


def run_one(u: Universe, policy: str, seed: int, cfg: ReplayConfig, mcfg: error_model.ModelConfig) -> dict[str, np.ndarray]:
    """One policy on one seed's pool: the curves of :data:`module doc <medcalc_maintained.planning.replay>`
    at 0 .. max_reviews reviews."""
    pool_rng = np.random.default_rng(seed)
    pool = np.flatnonzero(pool_rng.random(len(u.y)) < cfg.pool_fraction)
    order = pool_rng.permutation(len(pool))
    rng = np.random.default_rng([seed, allocation.POLICIES.index(policy)])
    x, calc, y = u.x[pool], u.calc[pool], u.y[pool].astype(float)
    n_c = np.bincount(calc, minlength=u.n_calculators).astype(float)
    present = n_c > 0
    true_rate = np.bincount(calc, weights=y, minlength=u.n_calculators) / np.maximum(n_c, 1)
    revealed = np.zeros(len(pool), dtype=bool)
    model = error_model.fit(x[:0], calc[:0], y[:0], u.n_calculators, mcfg, covariance=False)
    p = model.predict(x, calc)
    total = min(cfg.max_reviews, len(pool))
    curves = {k: np.full(cfg.max_reviews + 1, np.nan) for k in ("errors", "harm", "estimation")}
    curves["errors"][0] = curves["harm"][0] = 0.0
    curves["estimation"][0] = _estimation_error(p, revealed, y, calc, n_c, true_rate, present)
    a0 = mcfg.prior_rate * cfg.prior_strength
    b0 = (1 - mcfg.prior_rate) * cfg.prior_strength
    r, found, harm = 0, 0.0, 0.0
    while r < total:
        wrong = np.bincount(calc[revealed], weights=y[revealed], minlength=u.n_calculators)
        state = {"p": p, "calc": calc, "available": ~revealed, "order": order, "priority": u.priority[pool],
                 "harm_weight": u.harm_weight[pool], "wrong": wrong,
                 "right": np.bincount(calc[revealed], minlength=u.n_calculators) - wrong, "a0": a0, "b0": b0}
        for i in allocation.choose(policy, state, min(cfg.batch, total - r), cfg.cap, rng):
            r += 1
            revealed[i] = True
            found += y[i]
            harm += u.true_harm[pool][i]
            curves["errors"][r], curves["harm"][r] = found, harm
            curves["estimation"][r] = _estimation_error(p, revealed, y, calc, n_c, true_rate, present)
        model = error_model.fit(x[revealed], calc[revealed], y[revealed], u.n_calculators, mcfg,
                                start=model.theta, covariance=False)
        p = model.predict(x, calc)
        curves["estimation"][r] = _estimation_error(p, revealed, y, calc, n_c, true_rate, present)
    return curves


def run(u: Universe, cfg: ReplayConfig, mcfg: error_model.ModelConfig,
        progress: Callable[[str, int], None] | None = None, *, workers: int = 1) -> dict[str, dict[str, np.ndarray]]:
    """Every policy on every seed: ``{policy: {measure: array seeds x (max_reviews + 1)}}``.

    ``workers`` > 1 spreads the (policy, seed) runs over that many forked processes
    (:func:`medcalc_maintained.core.parallel.map_chunks`); each run is seeded by its own policy and
    seed and the results are put back in order, so the curves are the same bits for any ``workers``.
    ``progress(policy, seed)`` is called after each run (with workers, once all are back)."""
    from medcalc_maintained.core.parallel import map_chunks

    jobs = [(policy, seed) for policy in cfg.policies for seed in cfg.seeds]
    if workers <= 1:
        done = []
        for policy, seed in jobs:
            done.append(run_one(u, policy, seed, cfg, mcfg))
            if progress is not None:
                progress(policy, seed)
    else:
        done = map_chunks(lambda part: [run_one(u, p, s, cfg, mcfg) for p, s in part], jobs, workers=workers, chunk=1)
        if progress is not None:
            for policy, seed in jobs:
                progress(policy, seed)
    runs = dict(zip(jobs, done))
    return {policy: {k: np.vstack([runs[policy, s][k] for s in cfg.seeds]) for k in runs[policy, cfg.seeds[0]]}
            for policy in cfg.policies}


def summarise(curves: dict[str, dict[str, np.ndarray]], at: tuple[int, ...]) -> dict[str, Any]:
    """Mean and 95% interval over seeds (2.5th and 97.5th percentiles) of every measure at ``at``
    reviews, per policy, and which policy wins each measure there (most errors / harm found,
    least estimation error)."""
    table: dict[str, Any] = {}
    for policy, measures in curves.items():
        table[policy] = {}
        for m, arr in measures.items():
            table[policy][m] = {}
            for k in at:
                if k >= arr.shape[1]:
                    continue
                v = arr[:, k]
                lo, hi = np.percentile(v, [2.5, 97.5])
                table[policy][m][str(k)] = {"mean": round(float(v.mean()), 4), "ci95": [round(float(lo), 4), round(float(hi), 4)]}
    winners: dict[str, dict[str, str]] = {}
    for m in ("errors", "harm", "estimation"):
        winners[m] = {}
        for k in at:
            vals = {p: table[p][m][str(k)]["mean"] for p in table if str(k) in table[p].get(m, {})}
            if vals:
                pick = min(vals, key=lambda p: vals[p]) if m == "estimation" else max(vals, key=lambda p: vals[p])
                winners[m][str(k)] = pick
    return {"at": table, "winner": winners}


__all__ = ["ReplayConfig", "Universe", "run", "run_one", "summarise"]
