"""Issue 27: the stochastic stage's outputs are the same bytes on every machine, whatever the number
of worker processes, the BLAS thread count or the BLAS CPU kernel (OpenBLAS picks one per CPU; the
kernel forced with OPENBLAS_CORETYPE stands in for another machine)."""

from __future__ import annotations

import numpy as np

from medcalc_maintained.planning import error_model as em

CFG = em.ModelConfig(signals=("s", "t"), prior_rate=0.2, prior_sd_mu=2.0, prior_sd_beta=2.5, tau=1.5)


def _log_posterior_gradient(m: em.Fit, x, calc, y, n_calculators) -> np.ndarray:
    """The gradient of the log posterior at the fit, written out here from the model's definition."""
    mean = np.concatenate([[np.log(0.2 / 0.8)], np.zeros(x.shape[1] + n_calculators)])
    prec = np.concatenate([[2.0 ** -2], np.full(x.shape[1], 2.5 ** -2), np.full(n_calculators, 1.5 ** -2)])
    eta = m.theta[0] + x @ m.theta[1:1 + x.shape[1]] + m.theta[1 + x.shape[1] + calc]
    resid = y - 1 / (1 + np.exp(-eta))
    z = np.zeros((len(y), len(m.theta)))
    z[:, 0], z[:, 1:1 + x.shape[1]] = 1.0, x
    z[np.arange(len(y)), 1 + x.shape[1] + calc] = 1.0
    return z.T @ resid - prec * (m.theta - mean)


def test_the_fit_reaches_the_optimum_when_a_signal_separates_the_few_rows_revealed():
    # early in the replay: a handful of rows, one signal present on exactly the wrong ones. A full
    # Newton step overshoots and cycles here; the fit must still end at the posterior mode
    x = np.array([[1, 0], [1, 0], [1, 1], [0, 1], [0, 0], [0, 0], [0, 0], [0, 1]], dtype=float)
    y = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=float)
    calc = np.array([0, 0, 1, 1, 2, 2, 3, 3])
    for start in (None, np.full(3 + 4, 6.0), np.full(3 + 4, -6.0)):
        m = em.fit(x, calc, y, 4, CFG, start=start)
        assert np.abs(_log_posterior_gradient(m, x, calc, y, 4)).max() < 1e-6


def test_rows_with_the_same_signals_and_calculator_get_the_same_probability():
    rng = np.random.default_rng(0)
    x = (rng.random((300, 2)) < 0.4).astype(float)
    calc = rng.integers(0, 7, 300)
    y = (rng.random(300) < 0.3).astype(float)
    m = em.fit(x, calc, y, 7, CFG)
    p = m.predict(x, calc)
    for key in {(tuple(r), c) for r, c in zip(x, calc)}:
        same = (x == key[0]).all(axis=1) & (calc == key[1])
        assert len(set(p[same].tolist())) == 1
