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

The work is :mod:`medcalc_maintained.planning.simulate` (the model
:mod:`medcalc_maintained.planning.error_model`, the policies :mod:`medcalc_maintained.planning.allocation`,
the replay :mod:`medcalc_maintained.planning.replay`); this module reads the files and writes the outputs.
"""


from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_json
from medcalc_maintained.core.csv_for_people import read_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.planning import replay
from medcalc_maintained.planning import simulate as sim
from medcalc_maintained.project import Project
from medcalc_maintained.stages._metrics import METRICS

ROWS, RATES, ESTIMATE = "rows.csv", "calculator_rates.csv", "unverified_estimate.json"
SUMMARY = "summary.json"
RELIABILITY, ERRORS, ESTIMATION = "reliability.csv", "errors_found.csv", "estimation_error.csv"


def _read_queue(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(path, "triage queue not found (run `dvc repro triage`, or `medcalc-maintained triage`)")
    q = read_csv_for_people(path, dtype={"split": str}, keep_default_na=False, na_values=[""])
    missing = [c for c in sim.EVIDENCE_COLUMNS if c not in q.columns]
    if missing:
        raise DataError(path, f"missing column(s) {missing}")
    return q[sim.EVIDENCE_COLUMNS].assign(uid=q["uid"].astype(int))


def load_inputs(project: Project, cfg: sim.SimulateConfig) -> tuple[sim.Inputs, pd.DataFrame | None, pd.DataFrame | None]:
    """The evidence table and signals of every row; also the findings and the recompute audit."""
    q = _read_queue(project.triage_queue)
    m = read_parquet(project.maintained, "maintained instances", "apply")
    t = sim.evidence_table(q, m, project.maintained)
    findings = read_parquet(project.findings, "check findings", "recompute") if project.findings.is_file() else None
    recompute = read_parquet(project.recompute, "recompute audit", "recompute") if project.recompute.is_file() else None
    return sim.inputs(t, findings, cfg), findings, recompute


def release_estimates(project: Project, inp: sim.Inputs, cfg: sim.SimulateConfig) -> dict[str, Any]:
    """``unverified_estimate.json``: :func:`medcalc_maintained.planning.simulate.release_estimates` on
    the ``full`` config of every release of releases.yaml."""
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.tables import load_config

    fulls = {rel.version: load_config(project, rel.version, "full")
             for rel in load_releases(project.releases_file).releases}
    return sim.release_estimates(inp, cfg, fulls)


@dataclass
class SimulateRun:
    metrics: dict[str, Any]
    rates: pd.DataFrame
    estimates: dict[str, Any]
    paths: dict[str, Path]


def run(project: Project, *, out_dir: Path | None = None,
        progress: Callable[[str, int], None] | None = None, workers: int = 1) -> SimulateRun:
    """The whole stage (``progress(policy, seed)`` after each replay run; ``workers``: processes
    for the replay runs, see :func:`medcalc_maintained.planning.replay.run`). The outputs are the
    same bytes for any ``workers`` and any BLAS thread count or CPU."""
    from medcalc_maintained.planning.triage import TriageConfig
    from medcalc_maintained.stages import triage_simulate_plots as plots

    started = time.perf_counter()
    cfg = sim.SimulateConfig.from_project(project)
    weights = TriageConfig.from_project(project).weights
    inp, _findings, recompute = load_inputs(project, cfg)
    instances = read_parquet(project.instances, "instances", "ingest")
    cal, rel = sim.calibration(inp, cfg)
    _model, rows, rates, fitted = sim.full_fit(inp, cfg)
    estimates = release_estimates(project, inp, cfg)
    u = sim.universe(inp, instances, recompute, cfg, weights)
    curves = replay.run(u, cfg.replay, cfg.model, progress, workers=workers)
    metrics = sim.summary_document(cal, fitted, u, replay.summarise(curves, cfg.report_at), cfg)
    out = Path(out_dir) if out_dir else project.triage_simulate_dir
    paths = {"rows": write_atomic(out / ROWS, lambda p: rows.to_csv(p, index=False)),
             "rates": write_atomic(out / RATES, lambda p: rates.round(4).to_csv(p, index=False)),
             "estimate": write_json(out / ESTIMATE, estimates),
             "reliability": write_atomic(out / RELIABILITY, lambda p: rel.to_csv(p, index=False))}
    errors, estimation = sim.curve_table(curves, "errors"), sim.curve_table(curves, "estimation")
    paths["errors"] = write_atomic(out / ERRORS, lambda p: errors.to_csv(p, index=False))
    paths["estimation"] = write_atomic(out / ESTIMATION, lambda p: estimation.to_csv(p, index=False))
    paths.update(plots.write_plots(out, rel, cal, errors, estimation, cfg.replay.policies))
    paths["summary"] = write_json(out / SUMMARY, metrics)  # no run time in it: the stage's outputs are reproducible
    paths["metrics"] = write_json(out / METRICS, sim.headline(metrics))
    metrics = {**metrics, "seconds": round(time.perf_counter() - started, 2)}
    return SimulateRun(metrics, rates, estimates, paths)


__all__ = ["SimulateRun", "load_inputs", "release_estimates", "run"]
