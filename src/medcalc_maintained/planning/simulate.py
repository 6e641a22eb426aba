"""The ``triage-simulate`` stage's work: the evidence of every row as the error model reads it,
the model's calibration and fits (on every adjudicated row, and per release on the rows that release
had adjudicated), the adjudicated rows as the replay's simulated physician sees them, and the tables
of the replay curves.

The model is :mod:`medcalc_maintained.planning.error_model`, the policies
:mod:`medcalc_maintained.planning.allocation`, the replay :mod:`medcalc_maintained.planning.replay`;
the stage (:mod:`medcalc_maintained.stages.triage_simulate`) reads the files and writes the outputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from medcalc_maintained.calculators.severity import LEVELS
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import ERROR_STATUSES, UNVERIFIED
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.planning import allocation, impact, replay
from medcalc_maintained.planning import error_model as em
from medcalc_maintained.planning.triage import relabel_part

# the triage queue's columns the model reads (the per-row evidence)
EVIDENCE_COLUMNS = ["split", "uid", "calculator_id", "calculator", "priority", "recompute_finding", "audit_flag",
                    "audit_votes_wrong", "audit_runs", "relabel_disagrees", "abstention_mismatch", "relabel_status",
                    "relabel_rel_err"]
# the maintained labels' columns it reads (truth, and the level of each adjudicated change)
MAINTAINED_COLUMNS = ["split", "uid", "output_type", "Original Ground Truth Answer", "Ground Truth Answer",
                      "Label Status", "Change Severity"]


@dataclass(frozen=True)
class SimulateConfig:
    model: em.ModelConfig
    replay: replay.ReplayConfig
    report_at: tuple[int, ...]
    impact_config: impact.ImpactConfig  # triage.impact: the one set of severity weights
    folds: int
    cv_seed: int
    draws: int
    draws_seed: int

    @classmethod
    def from_project(cls, project: Any) -> "SimulateConfig":
        where = str(project.params_file)
        s = project.section("triage_simulate")
        bad = sorted(set(s["policies"]) - set(allocation.POLICIES))
        if bad:
            raise DataError(where, f"unknown policy(ies) {bad}; known: {list(allocation.POLICIES)}",
                            field="triage_simulate.policies")
        for k in ("batch", "max_per_calculator", "max_reviews", "folds", "draws"):
            if int(s[k]) < (2 if k == "folds" else 1):
                raise DataError(where, f"{k} must be >= {2 if k == 'folds' else 1}, not {s[k]}", field=f"triage_simulate.{k}")
        if not 0 < float(s["pool_fraction"]) <= 1:
            raise DataError(where, f"pool_fraction must be in (0, 1], not {s['pool_fraction']}",
                            field="triage_simulate.pool_fraction")
        if not s["seeds"]:
            raise DataError(where, "needs at least one seed", field="triage_simulate.seeds")
        rc = replay.ReplayConfig(tuple(s["policies"]), tuple(int(x) for x in s["seeds"]), int(s["batch"]),
                                 int(s["max_per_calculator"]), int(s["max_reviews"]), float(s["pool_fraction"]),
                                 float(s["prior_strength"]))
        return cls(em.ModelConfig.from_section(project.section("error_model"), where), rc,
                   tuple(int(k) for k in s["report_at"]), impact.ImpactConfig.from_project(project),
                   int(s["folds"]), int(s["cv_seed"]),
                   int(s["draws"]), int(s["draws_seed"]))


@dataclass
class Inputs:
    table: pd.DataFrame      # one row per instance: evidence, label status, original and maintained label
    x: np.ndarray            # signals
    calc: np.ndarray         # calculator index
    calculators: np.ndarray  # calculator id per index
    known: np.ndarray        # 1 wrong / 0 right for adjudicated rows, NaN for unverified


def evidence_table(queue: pd.DataFrame, maintained: pd.DataFrame, where: Path | str) -> pd.DataFrame:
    """The queue's :data:`EVIDENCE_COLUMNS` of every row with its maintained label's
    :data:`MAINTAINED_COLUMNS`, sorted by split and uid; ``where`` (the maintained labels' file)
    names the file in an error."""
    m = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int))
    missing = [c for c in MAINTAINED_COLUMNS if c not in m.columns]
    if missing:
        raise DataError(where, f"missing column(s) {missing} (written by `dvc repro apply`)", field=missing[0])
    t = queue.merge(m[MAINTAINED_COLUMNS], on=["split", "uid"], how="left", validate="one_to_one")
    if t["Label Status"].isna().any():
        r = t[t["Label Status"].isna()].iloc[0]
        raise DataError(where, "queue row missing from the maintained labels", row=f"{r['split']} uid {r['uid']}", field="uid")
    bad = ~t["Change Severity"].astype(str).isin(LEVELS)
    if bad.any():
        r = t[bad].iloc[0]
        raise DataError(where, f"Change Severity {r['Change Severity']!r} is not one of {list(LEVELS)}",
                        row=f"{r['split']} uid {r['uid']}", field="Change Severity")
    return t.sort_values(["split", "uid"], kind="mergesort").reset_index(drop=True)


def inputs(table: pd.DataFrame, findings: pd.DataFrame | None, cfg: SimulateConfig) -> Inputs:
    """The signals, calculator index and known outcome of every row of :func:`evidence_table`
    (``findings``: the check findings, for the ``check_*`` signals)."""
    calculators, calc = np.unique(table["calculator_id"].astype(int).to_numpy(), return_inverse=True)
    status = table["Label Status"].astype(str)
    known = np.where(status == UNVERIFIED, np.nan, status.isin(ERROR_STATUSES).astype(float))
    x = em.signals(table, findings, cfg.model.signals)
    return Inputs(table, x, calc, calculators, known)


def calibration(inp: Inputs, cfg: SimulateConfig) -> tuple[dict[str, Any], pd.DataFrame]:
    adj = ~np.isnan(inp.known)
    y = inp.known[adj]
    p = em.cross_validate(inp.x[adj], inp.calc[adj], y, len(inp.calculators), cfg.model, cfg.folds, cfg.cv_seed)
    base = np.full(len(y), y.mean())
    return ({"rows": int(adj.sum()), "errors": int(y.sum()), "folds": cfg.folds, "seed": cfg.cv_seed,
             "brier": round(em.brier(p, y), 4), "brier_base_rate": round(em.brier(base, y), 4),
             "log_loss": round(float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))), 4)},
            em.reliability(p, y))


def full_fit(inp: Inputs, cfg: SimulateConfig) -> tuple[em.Fit, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The model on every adjudicated row: per-row probabilities and per-calculator rates."""
    adj = ~np.isnan(inp.known)
    model = em.fit(inp.x[adj], inp.calc[adj], inp.known[adj], len(inp.calculators), cfg.model,
                   calculators=inp.calculators)
    p = model.predict(inp.x, inp.calc)
    rows = inp.table[["split", "uid", "calculator_id", "Label Status"]].assign(p_wrong=np.round(p, 4))
    rates, total = em.rate_intervals(model, inp.x, inp.calc, inp.known, cfg.draws, cfg.draws_seed)
    names = inp.table.drop_duplicates("calculator_id").set_index("calculator_id")["calculator"]
    rates.insert(1, "calculator", [names.get(c, "") for c in rates["calculator_id"]])
    sd = np.sqrt(np.diag(model.covariance))
    coef = {"intercept_mu": [round(model.mu, 4), round(float(sd[0]), 4)],
            **{s: [round(float(b), 4), round(float(sd[1 + i]), 4)] for i, (s, b) in enumerate(zip(cfg.model.signals, model.beta))}}
    return model, rows, rates, {"coefficients_mean_sd": coef, "unverified_total": total}


def release_estimates(inp: Inputs, cfg: SimulateConfig, fulls: Mapping[str, pd.DataFrame]) -> dict[str, Any]:
    """Per release (``fulls``: version -> that release's ``full`` config, in releases.yaml order): the
    model fitted on the rows that release had adjudicated, the share of wrong labels among its
    unverified rows (total and per calculator)."""
    out: dict[str, Any] = {}
    keys = inp.table.set_index(["split", "uid"]).index
    for version, full in fulls.items():
        st = full.assign(split=full["split"].astype(str), uid=full["uid"].astype(int)).set_index(["split", "uid"])["Label Status"]
        status = st.reindex(keys).fillna(UNVERIFIED).astype(str).to_numpy()
        known = np.where(status == UNVERIFIED, np.nan, np.isin(status, list(ERROR_STATUSES)).astype(float))
        adj = ~np.isnan(known)
        model = em.fit(inp.x[adj], inp.calc[adj], known[adj], len(inp.calculators), cfg.model, calculators=inp.calculators)
        rates, total = em.rate_intervals(model, inp.x, inp.calc, known, cfg.draws, cfg.draws_seed)
        names = inp.table.drop_duplicates("calculator_id").set_index("calculator_id")["calculator"]
        per = [{"calculator_id": int(r["calculator_id"]), "calculator": str(names.get(r["calculator_id"], "")),
                "unverified_rows": int(r["unverified_rows"]), "mean": round(r["unverified_mean"], 4),
                "ci95": [round(r["unverified_lo"], 4), round(r["unverified_hi"], 4)]}
               for r in row_dicts(rates) if r["unverified_rows"] > 0]
        out[version] = {"fitted_on_adjudicated_rows": int(adj.sum()), "adjudicated_wrong": int(np.nansum(known)),
                        "unverified_rows": int((~adj).sum()), "total": total, "per_calculator": per,
                        "method": method_text(cfg)}
    return out


def method_text(cfg: SimulateConfig) -> str:
    m = cfg.model
    return (f"hierarchical logistic regression of P(label wrong) on the signals {', '.join(m.signals)} with a "
            f"random intercept per calculator (tau {m.tau:g}), fitted (MAP, Laplace posterior) to the rows the "
            f"release had adjudicated (wrong = corrected or abstain); the share of wrong labels among the "
            f"unverified rows is the posterior mean of the sum of their probabilities over their number, with a 95% "
            f"credible interval from {cfg.draws} draws of the parameters (Laplace approximation). "
            f"It assumes the unverified rows are like the adjudicated ones with the same signals and calculator.")


def universe(inp: Inputs, instances: pd.DataFrame, recompute: pd.DataFrame | None, cfg: SimulateConfig,
             weights: dict[str, Any]) -> replay.Universe:
    """The adjudicated rows as the replay's simulated physician sees them (``weights``: the
    triage weights, for the ranking's relabel part); a changed row's ``true_harm`` is the weight of
    the maintained table's ``Change Severity`` (the level apply checked). ``instances``: the upstream rows (their v1.0
    label and entities), for :func:`expected_weights`."""
    adj = ~np.isnan(inp.known)
    t = inp.table[adj]
    expected = expected_weights(t, instances, recompute, cfg.impact_config)
    w = cfg.impact_config.weights
    true = [w[str(level)] if wrong else 0.0 for level, wrong in zip(t["Change Severity"], inp.known[adj])]
    return replay.Universe(inp.x[adj], inp.calc[adj], inp.known[adj], ranking_priority(t, cfg, weights), expected,
                           np.array(true), len(inp.calculators))


def expected_weights(t: pd.DataFrame, instances: pd.DataFrame, recompute: pd.DataFrame | None,
                     icfg: impact.ImpactConfig) -> np.ndarray:
    """The ``harm`` policy's weight of each row of ``t``: :func:`impact.expected_severity`'s
    ``severity_weight`` (``triage.impact.weights``) of the change from the v1.0 label to the
    recompute's value, else the calculator's prior. The relabel is left out: offline it replays
    the campaign's own decisions (as :func:`ranking_priority` leaves out its part)."""
    evidence = t.drop(columns=[c for c in ("relabel_status", "relabel_label") if c in t.columns])
    if recompute is None:
        recompute = pd.DataFrame({"split": pd.Series(dtype=str), "uid": pd.Series(dtype=int)})
    return impact.expected_severity(evidence, instances, recompute, icfg)["severity_weight"].to_numpy(dtype=float)


def ranking_priority(t: pd.DataFrame, cfg: SimulateConfig, weights: dict[str, Any]) -> np.ndarray:
    """The queue priority; without its relabel part when the model leaves the relabel signals out
    (the offline relabel replays the campaign's own decisions: using it would be circular)."""
    if set(em.RELABEL_SIGNALS) & set(cfg.model.signals):
        return t["priority"].to_numpy(dtype=float)
    return (t["priority"] - relabel_part(_evidence_types(t), weights)).to_numpy(dtype=float)


def _evidence_types(t: pd.DataFrame) -> pd.DataFrame:
    out = t.copy()
    for c in ("relabel_disagrees", "abstention_mismatch"):
        out[c] = out[c].astype(str).str.lower().isin(("true", "1"))
    out["relabel_rel_err"] = pd.to_numeric(out["relabel_rel_err"], errors="coerce")
    return out


def curve_table(curves: dict[str, dict[str, np.ndarray]], measure: str) -> pd.DataFrame:
    """``reviews`` and, per policy, the mean and the 2.5th / 97.5th percentiles over seeds."""
    first = next(iter(curves.values()))[measure]
    out = pd.DataFrame({"reviews": np.arange(first.shape[1])})
    for policy, m in curves.items():
        arr = m[measure]
        out[policy] = np.round(arr.mean(axis=0), 4)
        out[f"{policy}_lo"] = np.round(np.percentile(arr, 2.5, axis=0), 4)
        out[f"{policy}_hi"] = np.round(np.percentile(arr, 97.5, axis=0), 4)
    return out


def headline(summary: dict[str, Any]) -> dict[str, Any]:
    """The scalars of ``summary.json`` that ``dvc metrics show`` displays."""
    cal = summary["calibration"]
    return {"brier": cal["brier"], "brier_base_rate": cal["brier_base_rate"],
            "unverified_wrong": summary["model"]["unverified_total"]["mean"]}


def summary_document(cal: dict[str, Any], fitted: dict[str, Any], u: replay.Universe, replayed: dict[str, Any],
                     cfg: SimulateConfig) -> dict[str, Any]:
    """``summary.json``: the calibration, the model on every adjudicated row and the replay's numbers."""
    rc = cfg.replay
    return {
        "calibration": cal, "model": {"signals": list(cfg.model.signals), "tau": cfg.model.tau, **fitted},
        "replay": {"adjudicated_rows": int(len(u.y)), "pool_fraction": rc.pool_fraction, "seeds": list(rc.seeds),
                   "batch": rc.batch, "max_per_calculator": rc.cap, "policies": list(rc.policies),
                   "interval": "2.5th-97.5th percentile over seeds", **replayed},
    }


__all__ = ["EVIDENCE_COLUMNS", "MAINTAINED_COLUMNS", "Inputs", "SimulateConfig", "calibration", "curve_table",
           "evidence_table", "expected_weights", "full_fit", "headline", "inputs", "method_text", "ranking_priority",
           "release_estimates", "summary_document", "universe"]
