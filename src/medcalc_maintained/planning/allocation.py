"""Which rows physicians review next: allocation policies for a review budget, batch by batch.

Every policy picks a batch greedily by a per-row score among the rows not reviewed yet, with at
most ``cap`` rows of one calculator per batch (a batch is never spent on one calculator; when every
calculator left is at the cap the cap is lifted). Scores are compared rounded to
:data:`SCORE_DECIMALS` decimals, so rows whose scores differ only in the last bits of the
arithmetic (which depend on the CPU and the BLAS thread count) tie, and ties go to the earlier row
of ``order``: the same choices on every machine.

``ranking``      the current triage queue's priority (:mod:`medcalc_maintained.planning.triage`);
``p_error``      the error model's ``P(label wrong)`` (:mod:`medcalc_maintained.planning.error_model`);
``information``  the expected information gain about the row's calculator error rate: with the
                 rate ``theta_c ~ Beta(a0 + wrong_c, b0 + right_c)`` (reviews so far, prior
                 ``Beta(a0, b0)``) and the answer ``y ~ Bernoulli(theta_c)``, the mutual information
                 ``I(y; theta_c) = H(E theta_c) - E H(theta_c)`` (nats). Within a batch each pick
                 adds its expected answer to its calculator's counts, so the next pick there gains
                 less; ties inside a calculator go to the row whose outcome is least certain
                 (highest binary entropy of ``P(wrong)``);
``harm``         expected harm ``P(wrong) x harm_weight``, the weight (``triage.impact.weights``) of
                 the severity the row's change would have, :func:`medcalc_maintained.planning.impact.expected_severity`
                 (the replay's :func:`medcalc_maintained.planning.simulate.expected_weights`);
``uniform``      a uniformly random batch (the floor), no cap.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from scipy.special import digamma

POLICIES = ("ranking", "p_error", "information", "harm", "uniform")
SCORE_DECIMALS = 10  # scores equal to this many decimals are ties (see the module doc)


def binary_entropy(p: np.ndarray | float) -> np.ndarray:
    p = np.clip(np.asarray(p, dtype=float), 1e-12, 1 - 1e-12)
    return -(p * np.log(p) + (1 - p) * np.log(1 - p))


def beta_bernoulli_information(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """``I(y; theta)`` in nats for ``theta ~ Beta(a, b)``, ``y | theta ~ Bernoulli(theta)``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = a + b
    e_theta_log = a / n * (digamma(a + 1) - digamma(n + 1))
    e_rest_log = b / n * (digamma(b + 1) - digamma(n + 1))
    return binary_entropy(a / n) + e_theta_log + e_rest_log


def greedy(score: np.ndarray, calc: np.ndarray, available: np.ndarray, batch: int, cap: int,
           *, order: np.ndarray | None = None, secondary: np.ndarray | None = None,
           update: Callable[[int, np.ndarray], None] | None = None) -> list[int]:
    """Indices of a batch: highest ``score`` first (then ``secondary``, then ``order``; both scores
    compared at :data:`SCORE_DECIMALS` decimals), at most ``cap`` per calculator while another
    calculator is left; ``update(i, score)`` may change the scores after each pick."""
    score = np.asarray(score, dtype=float).copy()
    avail = np.asarray(available, dtype=bool).copy()
    order = np.arange(len(score)) if order is None else np.asarray(order)
    rank = np.empty(len(order), dtype=int)
    rank[order] = np.arange(len(order))
    sec = np.zeros(len(score)) if secondary is None else np.asarray(secondary, dtype=float)
    calc = np.asarray(calc, dtype=int)
    used = np.zeros(int(calc.max()) + 1 if len(calc) else 0, dtype=int)
    picked: list[int] = []
    while len(picked) < batch and avail.any():
        under = (used[calc] < cap) & avail
        cand = np.flatnonzero(under if under.any() else avail)
        key = np.round(score[cand], SCORE_DECIMALS)
        best = np.lexsort((rank[cand], -np.round(sec[cand], SCORE_DECIMALS), -key))[0]
        i = int(cand[best])
        picked.append(i)
        avail[i] = False
        used[calc[i]] += 1
        if update is not None:
            update(i, score)
    return picked


def choose(policy: str, state: dict[str, Any], batch: int, cap: int, rng: np.random.Generator) -> list[int]:
    """The next batch of ``policy`` (see the module doc). ``state`` holds per-row arrays ``p``
    (P(wrong)), ``calc`` (calculator index), ``priority``, ``harm_weight``, ``available`` and
    ``order`` (tie-break), and for ``information`` the per-calculator ``wrong`` and ``right``
    review counts and the prior ``a0``, ``b0``."""
    p, calc, avail, order = state["p"], state["calc"], state["available"], state.get("order")
    if policy == "uniform":
        idx = np.flatnonzero(avail)
        return [int(i) for i in rng.permutation(idx)[:batch]]
    if policy == "ranking":
        return greedy(state["priority"], calc, avail, batch, cap, order=order)
    if policy == "p_error":
        return greedy(p, calc, avail, batch, cap, order=order)
    if policy == "harm":
        return greedy(p * state["harm_weight"], calc, avail, batch, cap, order=order)
    if policy == "information":
        a = state["a0"] + np.asarray(state["wrong"], dtype=float)
        b = state["b0"] + np.asarray(state["right"], dtype=float)

        def update(i: int, score: np.ndarray) -> None:
            c = calc[i]
            m = a[c] / (a[c] + b[c])
            a[c] += m
            b[c] += 1 - m
            score[calc == c] = beta_bernoulli_information(a[c], b[c])

        return greedy(beta_bernoulli_information(a, b)[calc], calc, avail, batch, cap, order=order,
                      secondary=binary_entropy(p), update=update)
    raise ValueError(f"unknown policy {policy!r}; known: {list(POLICIES)}")


__all__ = ["POLICIES", "SCORE_DECIMALS", "choose", "greedy", "beta_bernoulli_information", "binary_entropy"]
