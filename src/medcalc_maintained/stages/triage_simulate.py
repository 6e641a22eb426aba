"""Stage ``triage-simulate``: the error model, its calibration, the replay study of the allocation
policies and the estimate of wrong labels among the ``unverified`` rows of every release.

Reads the triage queue (the per-row evidence), the check findings, the recompute audit, the
maintained labels and every release's ``full`` config; writes under ``project.triage_simulate_dir``:

``rows.csv``                  every row's ``P(label wrong)`` from the model fitted on all adjudicated rows;
``calculator_rates.csv``      per calculator: error rate of the v1.0 labels over all rows and among
                              the unverified rows, posterior mean and 95% interval;
``unverified_estimate.json``  per release: the model fitted on that release's adjudicated rows, the
                              estimated share of wrong labels among its unverified rows (read by the card);
``reliability.csv/.png``      calibration on held-out adjudicated rows (k-fold);
``errors_found.csv/.png``, ``estimation_error.csv/.png``  the replay curves (mean and 95% interval over seeds);
``summary.json``              Brier score, coefficients, the replay numbers at ``report_at`` reviews and the winners;
``metrics.json``              the DVC metric, scalars only: held-out Brier score (and the base rate's),
                              estimated share of wrong labels among the unverified rows.

The model is :mod:`medcalc_maintained.quality.error_model`, the policies
:mod:`medcalc_maintained.quality.allocation`, the replay :mod:`medcalc_maintained.quality.replay`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from medcalc_maintained.calculators.severity import LEVELS
from medcalc_maintained.core.io import DataError, read_csv_for_people, read_parquet, write_atomic, write_json
from medcalc_maintained.core.labels import ERROR_STATUSES, UNVERIFIED
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.project import Project
from medcalc_maintained.quality import allocation, impact, replay
from medcalc_maintained.quality import error_model as em

ROWS, RATES, ESTIMATE = "rows.csv", "calculator_rates.csv", "unverified_estimate.json"
SUMMARY, METRICS = "summary.json", "metrics.json"
RELIABILITY, ERRORS, ESTIMATION = "reliability.csv", "errors_found.csv", "estimation_error.csv"
EVIDENCE_COLUMNS = ["split", "uid", "calculator_id", "calculator", "priority", "recompute_finding", "audit_flag",
                    "audit_votes_wrong", "audit_runs", "relabel_disagrees", "abstention_mismatch", "relabel_status",
                    "relabel_rel_err"]


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
    def from_project(cls, project: Project) -> "SimulateConfig":
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


def _read_queue(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(path, "triage queue not found (run `dvc repro triage`, or `medcalc-maintained triage`)")
    q = read_csv_for_people(path, dtype={"split": str}, keep_default_na=False, na_values=[""])
    missing = [c for c in EVIDENCE_COLUMNS if c not in q.columns]
    if missing:
        raise DataError(path, f"missing column(s) {missing}")
    return q[EVIDENCE_COLUMNS].assign(uid=q["uid"].astype(int))


def load_inputs(project: Project, cfg: SimulateConfig) -> tuple[Inputs, pd.DataFrame | None, pd.DataFrame | None]:
    """The evidence table and signals of every row; also the findings and the recompute audit."""
    q = _read_queue(project.triage_queue)
    m = read_parquet(project.maintained, "maintained instances", "apply")
    m = m.assign(split=m["split"].astype(str), uid=m["uid"].astype(int))
    cols = ["split", "uid", "output_type", "Original Ground Truth Answer", "Ground Truth Answer", "Label Status",
            "Change Severity"]
    missing = [c for c in cols if c not in m.columns]
    if missing:
        raise DataError(project.maintained, f"missing column(s) {missing} (written by `dvc repro apply`)",
                        field=missing[0])
    t = q.merge(m[cols], on=["split", "uid"], how="left", validate="one_to_one")
    if t["Label Status"].isna().any():
        r = t[t["Label Status"].isna()].iloc[0]
        raise DataError(project.maintained, "queue row missing from the maintained labels",
                        row=f"{r['split']} uid {r['uid']}", field="uid")
    bad = ~t["Change Severity"].astype(str).isin(LEVELS)
    if bad.any():
        r = t[bad].iloc[0]
        raise DataError(project.maintained, f"Change Severity {r['Change Severity']!r} is not one of {list(LEVELS)}",
                        row=f"{r['split']} uid {r['uid']}", field="Change Severity")
    t = t.sort_values(["split", "uid"], kind="mergesort").reset_index(drop=True)
    findings = read_parquet(project.findings, "check findings", "recompute") if project.findings.is_file() else None
    recompute = read_parquet(project.recompute, "recompute audit", "recompute") if project.recompute.is_file() else None
    calculators, calc = np.unique(t["calculator_id"].astype(int).to_numpy(), return_inverse=True)
    status = t["Label Status"].astype(str)
    known = np.where(status == UNVERIFIED, np.nan, status.isin(ERROR_STATUSES).astype(float))
    x = em.signals(t, findings, cfg.model.signals)
    return Inputs(t, x, calc, calculators, known), findings, recompute


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


def release_estimates(project: Project, inp: Inputs, cfg: SimulateConfig) -> dict[str, Any]:
    """Per release of releases.yaml: the model fitted on the rows that release had adjudicated,
    the share of wrong labels among its unverified rows (total and per calculator)."""
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.tables import load_config

    out: dict[str, Any] = {}
    keys = inp.table.set_index(["split", "uid"]).index
    for rel in load_releases(project.releases_file).releases:
        full = load_config(project, rel.version, "full")
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
        out[rel.version] = {"fitted_on_adjudicated_rows": int(adj.sum()), "adjudicated_wrong": int(np.nansum(known)),
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
    from medcalc_maintained.quality.triage import relabel_part

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


@dataclass
class SimulateRun:
    metrics: dict[str, Any]
    rates: pd.DataFrame
    estimates: dict[str, Any]
    paths: dict[str, Path]


def run(project: Project, *, out_dir: Path | None = None,
        progress: Callable[[str, int], None] | None = None, workers: int = 1) -> SimulateRun:
    """The whole stage (``progress(policy, seed)`` after each replay run; ``workers``: processes
    for the replay runs, see :func:`medcalc_maintained.quality.replay.run`). The outputs are the
    same bytes for any ``workers`` and any BLAS thread count or CPU."""
    from medcalc_maintained.quality.triage import TriageConfig
    from medcalc_maintained.stages import triage_simulate_plots as plots

    started = time.perf_counter()
    cfg = SimulateConfig.from_project(project)
    weights = TriageConfig.from_project(project).weights
    inp, _findings, recompute = load_inputs(project, cfg)
    instances = read_parquet(project.instances, "instances", "ingest")
    cal, rel = calibration(inp, cfg)
    _model, rows, rates, fitted = full_fit(inp, cfg)
    estimates = release_estimates(project, inp, cfg)
    u = universe(inp, instances, recompute, cfg, weights)
    curves = replay.run(u, cfg.replay, cfg.model, progress, workers=workers)
    summary = replay.summarise(curves, cfg.report_at)
    rc = cfg.replay
    metrics: dict[str, Any] = {
        "calibration": cal, "model": {"signals": list(cfg.model.signals), "tau": cfg.model.tau, **fitted},
        "replay": {"adjudicated_rows": int(len(u.y)), "pool_fraction": rc.pool_fraction, "seeds": list(rc.seeds),
                   "batch": rc.batch, "max_per_calculator": rc.cap, "policies": list(rc.policies),
                   "interval": "2.5th-97.5th percentile over seeds", **summary},
    }
    out = Path(out_dir) if out_dir else project.triage_simulate_dir
    paths = {"rows": write_atomic(out / ROWS, lambda p: rows.to_csv(p, index=False)),
             "rates": write_atomic(out / RATES, lambda p: rates.round(4).to_csv(p, index=False)),
             "estimate": write_json(out / ESTIMATE, estimates),
             "reliability": write_atomic(out / RELIABILITY, lambda p: rel.to_csv(p, index=False))}
    errors, estimation = curve_table(curves, "errors"), curve_table(curves, "estimation")
    paths["errors"] = write_atomic(out / ERRORS, lambda p: errors.to_csv(p, index=False))
    paths["estimation"] = write_atomic(out / ESTIMATION, lambda p: estimation.to_csv(p, index=False))
    paths.update(plots.write_plots(out, rel, cal, errors, estimation, rc.policies))
    paths["summary"] = write_json(out / SUMMARY, metrics)  # no run time in it: the stage's outputs are reproducible
    paths["metrics"] = write_json(out / METRICS, headline(metrics))
    metrics = {**metrics, "seconds": round(time.perf_counter() - started, 2)}
    return SimulateRun(metrics, rates, estimates, paths)


__all__ = ["run", "curve_table", "SimulateConfig", "Inputs", "load_inputs", "calibration", "full_fit", "release_estimates", "universe",
           "expected_weights"]
