"""A probabilistic model of where labels are wrong: ``P(label wrong)`` per row, per-calculator rates.

The model is a hierarchical (random-intercept) logistic regression, fitted by maximum a posteriori
with a damped Newton method and summarised by its Laplace approximation (numpy/scipy only; the
fitted parameters are rounded to :data:`DIGITS` decimals and the linear predictor is summed without
BLAS, so the results are the same bits on every CPU and BLAS thread count)::

    logit P(wrong_i) = mu + u[calculator(i)] + beta . x_i
    mu ~ N(logit(prior_rate), prior_sd_mu^2)     u_c ~ N(0, tau^2)     beta_j ~ N(0, prior_sd_beta^2)

``x_i`` are the per-row signals of :data:`SIGNALS` (the evidence the triage queue already carries:
recompute finding, audit flag and vote share, zero-LLM check findings by severity, and optionally
the relabel agreement). The calculator intercepts ``u_c`` share one prior, so a calculator with few
adjudicated rows borrows strength from the others (partial pooling); a calculator without any is
at the pooled mean. Truth is the adjudicated decision: a row whose maintained ``Label Status`` is
``corrected`` or ``abstain`` had a wrong label, one ``confirmed`` had a right one.

Per-calculator error rates with credible intervals are expected shares over the calculator's rows:
the parameters are drawn from the Laplace posterior, each row not adjudicated counts with its
probability under the draw, adjudicated rows with their known outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit, logit

# signal name -> how it is read from the evidence table (see :func:`signals`)
SIGNALS = ("recompute_aggregation_mismatch", "recompute_implausible_input", "recompute_not_computable",
           "audit_flag", "audit_vote_share", "check_error", "check_definition", "check_info",
           "relabel_disagrees", "abstention_mismatch")
RELABEL_SIGNALS = ("relabel_disagrees", "abstention_mismatch")
# decimals kept of fitted parameters and their covariance (see :func:`fit`): far finer than the
# fit's precision, far coarser than the platform-dependent last bits of its arithmetic
DIGITS = 9


@dataclass(frozen=True)
class ModelConfig:
    """The ``error_model`` parameters."""

    signals: tuple[str, ...]
    prior_rate: float
    prior_sd_mu: float
    prior_sd_beta: float
    tau: float

    @classmethod
    def from_section(cls, s: dict[str, Any], where: str = "params.yaml") -> "ModelConfig":
        from medcalc_maintained.core.errors import DataError

        signals = tuple(str(x) for x in (s["signals"] or ()))
        bad = sorted(set(signals) - set(SIGNALS))
        if bad:
            raise DataError(where, f"unknown signal(s) {bad}; known: {list(SIGNALS)}", field="error_model.signals")
        rate = float(s["prior_rate"])
        if not 0.0 < rate < 1.0:
            raise DataError(where, f"prior_rate must be in (0, 1), not {rate}", field="error_model.prior_rate")
        for k in ("prior_sd_mu", "prior_sd_beta", "tau"):
            if not float(s[k]) > 0:
                raise DataError(where, f"{k} must be > 0, not {s[k]}", field=f"error_model.{k}")
        return cls(signals, rate, float(s["prior_sd_mu"]), float(s["prior_sd_beta"]), float(s["tau"]))


def signals(evidence: pd.DataFrame, findings: pd.DataFrame | None, names: Sequence[str]) -> np.ndarray:
    """The signal matrix (rows of ``evidence`` x ``names``), every value in [0, 1].

    ``evidence`` has the triage queue's columns (``recompute_finding``, ``audit_flag``,
    ``audit_votes_wrong``, ``audit_runs``, ``relabel_disagrees``, ``abstention_mismatch``, ``split``,
    ``uid``); ``findings`` the zero-LLM check findings (the recompute's own checks are left out:
    they are the recompute signals already)."""
    sev: dict[tuple[str, int], set[str]] = {}
    if findings is not None and len(findings):
        f = findings[~findings["check"].astype(str).str.startswith("recompute_")]
        for s, u, v in zip(f["split"].astype(str), f["uid"].astype(int), f["severity"].astype(str)):
            sev.setdefault((s, u), set()).add(v)
    keys = list(zip(evidence["split"].astype(str), evidence["uid"].astype(int)))
    runs = evidence["audit_runs"].to_numpy(dtype=float)
    cols = []
    for name in names:
        if name.startswith("recompute_"):
            col = (evidence["recompute_finding"].astype(str) == name[len("recompute_"):]).to_numpy(dtype=float)
        elif name == "audit_vote_share":
            col = np.where(runs > 0, evidence["audit_votes_wrong"].to_numpy(dtype=float) / np.maximum(runs, 1), 0.0)
        elif name.startswith("check_"):
            col = np.array([name[len("check_"):] in sev.get(k, ()) for k in keys], dtype=float)
        else:
            col = _as_bool(evidence[name]).astype(float)
        cols.append(col)
    return np.column_stack(cols) if cols else np.zeros((len(evidence), 0))


def _as_bool(s: pd.Series) -> np.ndarray:
    if s.dtype == object:
        return s.astype(str).str.lower().isin(("true", "1")).to_numpy()
    return s.fillna(False).astype(bool).to_numpy()


@dataclass
class Fit:
    """A fitted model: MAP parameters ``theta = [mu, beta, u]`` and their Laplace covariance."""

    theta: np.ndarray
    cov: np.ndarray | None
    n_signals: int
    calculators: np.ndarray  # the calculator id of each intercept column

    @property
    def covariance(self) -> np.ndarray:
        """``cov``; a ValueError for a model fitted with ``covariance=False`` (it has none)."""
        if self.cov is None:
            raise ValueError("this model was fitted without its covariance (fit(..., covariance=False))")
        return self.cov

    @property
    def mu(self) -> float:
        return float(self.theta[0])

    @property
    def beta(self) -> np.ndarray:
        return self.theta[1:1 + self.n_signals]

    def design(self, x: np.ndarray, calc_index: np.ndarray) -> np.ndarray:
        z = np.zeros((len(x), len(self.theta)))
        z[:, 0] = 1.0
        z[:, 1:1 + self.n_signals] = x
        z[np.arange(len(x)), 1 + self.n_signals + calc_index] = 1.0
        return z

    def linear_predictor(self, x: np.ndarray, calc_index: np.ndarray, theta: np.ndarray | None = None) -> np.ndarray:
        """``mu + u[calc] + beta . x`` per row (per row of ``theta`` when it is a matrix of draws),
        summed term by term in a fixed order without BLAS: the same bits whatever the BLAS kernel
        or thread count, and rows with the same signals and calculator get the same value."""
        th = self.theta if theta is None else np.asarray(theta)
        th2 = np.atleast_2d(th)
        calc_index = np.asarray(calc_index, dtype=int)
        eta = th2[:, [0]] + th2[:, 1 + self.n_signals + calc_index]
        for j in range(self.n_signals):
            eta = eta + th2[:, [1 + j]] * np.asarray(x[:, j], dtype=float)[None, :]
        return eta if th.ndim == 2 else eta[0]

    def predict(self, x: np.ndarray, calc_index: np.ndarray) -> np.ndarray:
        return expit(self.linear_predictor(x, calc_index))

    def draws(self, x: np.ndarray, calc_index: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws of every row's probability from the Laplace posterior (``n`` x rows): the
        parameters are ``theta + L z`` with ``L`` the Cholesky factor of the covariance (rounded to
        :data:`DIGITS` decimals) and ``z`` standard normal, multiplied out term by term (no BLAS)."""
        chol = np.round(np.linalg.cholesky(self.covariance), DIGITS)
        z = rng.standard_normal((n, len(self.theta)))
        th = np.broadcast_to(self.theta, z.shape).copy()
        for j in range(len(self.theta)):
            th = th + z[:, [j]] * chol[:, j][None, :]
        return expit(self.linear_predictor(x, calc_index, th))


def _prior(cfg: ModelConfig, k: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    mean = np.zeros(1 + k + c)
    mean[0] = logit(cfg.prior_rate)
    prec = np.concatenate([[cfg.prior_sd_mu ** -2], np.full(k, cfg.prior_sd_beta ** -2), np.full(c, cfg.tau ** -2)])
    return mean, prec


def fit(x: np.ndarray, calc_index: np.ndarray, y: np.ndarray, n_calculators: int, cfg: ModelConfig,
        *, start: np.ndarray | None = None, covariance: bool = True, calculators: np.ndarray | None = None,
        tol: float = 1e-8, max_iter: int = 100) -> Fit:
    """MAP fit by Newton's method with a backtracking line search (the log posterior is strictly
    concave, so the damped steps converge from anywhere; a full Newton step can overshoot and cycle
    when a signal nearly separates the revealed rows, as it does early in the replay).

    ``x``: signals of the adjudicated rows; ``calc_index``: each row's calculator as an index in
    ``0 .. n_calculators-1``; ``y``: 1 when the label was wrong. No rows is fine: the prior."""
    k = x.shape[1]
    mean, prec = _prior(cfg, k, n_calculators)
    shell = Fit(mean.copy() if start is None else start.copy(), None, k,
                np.arange(n_calculators) if calculators is None else np.asarray(calculators))
    z = shell.design(x, calc_index)
    theta = shell.theta
    y = np.asarray(y, dtype=float)

    def log_posterior(th: np.ndarray) -> float:
        eta = shell.linear_predictor(x, calc_index, th)
        return float(np.sum(y * eta - np.logaddexp(0.0, eta)) - 0.5 * np.sum(prec * (th - mean) ** 2))

    current = log_posterior(theta)
    for _ in range(max_iter):
        p = expit(shell.linear_predictor(x, calc_index, theta))
        grad = z.T @ (y - p) - prec * (theta - mean)
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(prec)
        step = np.linalg.solve(hess, grad)
        slope, t = float(np.sum(grad * step)), 1.0
        noise = 1e-10 * (1.0 + abs(current))  # rounding of the sum: near the optimum a full step is taken
        while True:  # Armijo: halve the step until the log posterior rises enough
            trial = log_posterior(theta + t * step)
            if trial >= current + 1e-4 * t * slope - noise or t < 1e-10:
                break
            t /= 2
        theta, current = theta + t * step, trial
        if np.max(np.abs(step)) < tol:
            break
    # rounded: the last bits of a BLAS product depend on the CPU kernel and the thread count, and
    # the replay's choices must not (a refit's parameters are known far below DIGITS decimals)
    theta = np.round(theta, DIGITS)
    shell.theta = theta
    if covariance:
        p = expit(shell.linear_predictor(x, calc_index))
        hess = (z * (p * (1 - p))[:, None]).T @ z + np.diag(prec)
        shell.cov = np.linalg.inv(hess)
        shell.cov = np.round((shell.cov + shell.cov.T) / 2, DIGITS)
    return shell


def brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((np.asarray(p) - np.asarray(y, dtype=float)) ** 2))


def reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> pd.DataFrame:
    """Equal-width bins of the predicted probability: rows, mean prediction, observed frequency."""
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.digitize(p, edges[1:-1]), 0, bins - 1)
    rows = []
    for b in range(bins):
        m = idx == b
        if m.any():
            rows.append({"bin": f"{edges[b]:.1f}-{edges[b + 1]:.1f}", "rows": int(m.sum()),
                         "predicted": round(float(p[m].mean()), 4), "observed": round(float(np.mean(y[m])), 4)})
    return pd.DataFrame(rows, columns=["bin", "rows", "predicted", "observed"])


def cross_validate(x: np.ndarray, calc_index: np.ndarray, y: np.ndarray, n_calculators: int, cfg: ModelConfig,
                   folds: int, seed: int) -> np.ndarray:
    """Held-out probability of every row from a ``folds``-fold split (seeded)."""
    rng = np.random.default_rng(seed)
    fold = rng.permutation(len(y)) % folds
    out = np.empty(len(y))
    for f in range(folds):
        test = fold == f
        m = fit(x[~test], calc_index[~test], y[~test], n_calculators, cfg, covariance=False)
        out[test] = m.predict(x[test], calc_index[test])
    return out


def rate_intervals(model: Fit, x: np.ndarray, calc_index: np.ndarray, known: np.ndarray, draws: int,
                   seed: int, level: float = 0.95) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per calculator: the expected share of wrong labels among all its rows and among its rows with
    no known outcome (``known``: 1/0 for adjudicated rows, NaN otherwise; an unknown row counts with
    its probability), posterior mean and equal-tailed interval from ``draws`` draws of the
    parameters; and the same share over every row with no known outcome (``{rows, mean, ci95}``)."""
    rng = np.random.default_rng(seed)
    p = model.draws(x, calc_index, draws, rng)
    unknown = np.isnan(known)
    outcome = np.where(unknown[None, :], p, np.nan_to_num(known)[None, :])
    point = model.predict(x, calc_index)
    lo_q, hi_q = (1 - level) / 2 * 100, (1 + level) / 2 * 100
    rows = []
    for ci in np.unique(calc_index):
        m = calc_index == ci
        u = m & unknown
        rec: dict[str, Any] = {"calculator_id": int(model.calculators[ci]), "rows": int(m.sum()),
                               "unverified_rows": int(u.sum()), "model_rate": float(point[m].mean())}
        for name, sel in (("release", m), ("unverified", u)):
            if not sel.any():
                rec.update({f"{name}_mean": np.nan, f"{name}_lo": np.nan, f"{name}_hi": np.nan})
                continue
            share = outcome[:, sel].mean(axis=1)
            rec.update({f"{name}_mean": float(share.mean()), f"{name}_lo": float(np.percentile(share, lo_q)),
                        f"{name}_hi": float(np.percentile(share, hi_q))})
        rows.append(rec)
    total: dict[str, Any] = {"rows": int(unknown.sum())}
    if unknown.any():
        share = outcome[:, unknown].mean(axis=1)
        total.update({"mean": round(float(share.mean()), 4),
                      "ci95": [round(float(np.percentile(share, lo_q)), 4), round(float(np.percentile(share, hi_q)), 4)]})
    return pd.DataFrame(rows), total


__all__ = ["SIGNALS", "RELABEL_SIGNALS", "DIGITS", "ModelConfig", "Fit", "signals", "fit", "brier", "reliability",
           "cross_validate", "rate_intervals"]
