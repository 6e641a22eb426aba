"""Stage ``triage``: rank every row by how likely its label is wrong and route the top to physicians.

Reads the instances, the recompute audit, the relabel labels, the audit flags, the maintained
labels, the ledger (for deferred physician reviews) and the input verdicts of stage ``certify``
(rows with a contradicted input are routed after the policy contradictions and the underived rows)
from the project's paths; ranks by
``triage.ranking`` (:mod:`medcalc_maintained.planning.impact`: expected harm, or evidence only); writes, under
``project.triage_dir``, ``queue.csv`` (one row per instance: priority, evidence, in_budget and
reviewer), ``summary.json`` (precision@k against the maintained labels' adjudicated changes next to
uniform sampling, errors found per review; ``severity_found``: errors and severe errors found in
the budget by the harm and the evidence ranking and by uniform sampling), ``metrics.json`` (the DVC
metric, scalars only: rows, eligible, routed, base rate, the queue's precision@k, errors found in
the budget) and ``errors_found.csv``/``.png`` (the curve, for ``dvc plots``). The ranking and
routing are :mod:`medcalc_maintained.planning.triage`, the re-reviews put first
:mod:`medcalc_maintained.planning.requeue`, the metrics :mod:`medcalc_maintained.planning.triage_metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_json
from medcalc_maintained.core.csv_for_people import read_csv_for_people, write_csv_for_people
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.core.versions import UNRELEASED, rules
from medcalc_maintained.ledger import derivation
from medcalc_maintained.ledger.records import load
from medcalc_maintained.planning import impact, requeue
from medcalc_maintained.planning import triage as tr
from medcalc_maintained.planning.triage_metrics import metrics
from medcalc_maintained.project import Project
from medcalc_maintained.stages import certify
from medcalc_maintained.stages._metrics import METRICS

QUEUE, SUMMARY = "queue.csv", "summary.json"
CURVE, PLOT = "errors_found.csv", "errors_found.png"


@dataclass
class TriageRun:
    config: tr.TriageConfig
    queue: pd.DataFrame
    summary: dict[str, Any]
    curve: pd.DataFrame
    paths: dict[str, Path]


def run(project: Project, *, out_dir: Path | None = None, budget: int | None = None) -> TriageRun:
    """The whole stage; ``out_dir`` and ``budget`` override ``triage.out`` and ``triage.budget``."""
    cfg = tr.TriageConfig.from_project(project)
    icfg = impact.ImpactConfig.from_project(project)
    if budget is not None:
        cfg.budget = budget
    inst = read_parquet(project.instances, "instances", "ingest")
    rec = read_parquet(project.recompute, "recompute audit", "recompute")
    rl = read_parquet(project.relabel_labels, "relabel labels", "relabel")
    flags = read_parquet(project.audit_flags, "audit flags", "audit")
    maintained = read_parquet(project.maintained, "maintained instances", "apply")
    records = load(project.ledger_paths)
    deferred = tr.deferred_reviews(records)
    findings_path = project.findings
    findings = read_parquet(findings_path, "check findings", "recompute") if findings_path.is_file() else None
    queue = tr.score(inst, rec, rl, flags, cfg, deferred, relabel_path=str(project.relabel_labels),
                     flags_path=str(project.audit_flags), findings=findings)
    if project.policy_contradictions.is_file():  # maintained labels against the declared policy: re-review first
        contradictions = read_csv_for_people(project.policy_contradictions)
        queue = requeue.mark_queue(queue, requeue.requeue(contradictions))
    queue = requeue.mark_queue(queue, underived_rows(maintained, inst, records), "underived")
    evidence = Path(project.path(project.param("certify.out"))) / certify.INPUTS
    if evidence.is_file():  # stage certify's verdicts (a dep in dvc.yaml): rows with a contradicted input
        queue = requeue.mark_queue(queue, certify.contradicted_rows(read_parquet(evidence, "input verdicts", "certify")),
                                   "contradicted")
    queue = impact.rank(queue, inst, rec, icfg)  # triage.ranking: harm (expected harm) or evidence
    queue = tr.route(queue, maintained, cfg, deferred)
    # the ranking is judged in its own order: the re-reviews of policy contradictions routed first
    # are a consistency check, not a prediction that the label is wrong
    by_ranking = impact.order(queue, icfg.ranking, keep_contradictions_first=False)
    summary, curve = metrics(by_ranking, maintained, cfg)
    summary["ranking"] = icfg.ranking
    summary["severity_found"] = impact.severity_metrics(queue, maintained, cfg.budget, icfg.ranking)
    summary["policy_contradictions_routed"] = int((queue.get("policy_contradiction", False) & queue["in_budget"]).sum())
    summary["underived_routed"] = int((queue.get("underived", False) & queue["in_budget"]).sum())
    summary["contradicted_routed"] = int((queue.get("contradicted", False) & queue["in_budget"]).sum())
    paths = write_outputs(queue, summary, curve, Path(out_dir) if out_dir else project.triage_dir)
    return TriageRun(cfg, queue, summary, curve, paths)


def underived_rows(maintained: pd.DataFrame, instances: pd.DataFrame, records: list[Any]) -> dict[tuple[str, int], str]:
    """Verified rows whose label no recorded derivation reproduces (an override or unexplained, under
    the evidence rules of the releases from 2.2.0 on: a derivation whose recorded inputs the verifier
    rejects is unexplained), ``(split, uid) -> reason``: re-reviewed after the policy contradictions."""
    docs = derivation.row_derivations(maintained, instances, records, rules=rules(UNRELEASED))
    return {(str(s), int(u)): f"label has no derivation ({d['status']}): {d['reason']}"
            for s, u, d in zip(maintained["split"], maintained["uid"], docs) if d and d["status"] in derivation.UNDERIVED}


def plot(curve: pd.DataFrame, summary: dict[str, Any], path: Path) -> Path:
    """Cumulative adjudicated errors found against the number of reviews: queue vs uniform."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    ax.plot(curve["reviews"], curve["triage"], label="triage queue", color="#1f5fa8", linewidth=2)
    ax.plot(curve["reviews"], curve["triage_without_relabel"], label="queue without relabel evidence",
            color="#d07a1a", linewidth=1.5, linestyle="--")
    ax.plot(curve["reviews"], curve["uniform_expected"], label=f"uniform sampling (base rate {summary['base_rate']:.3f})",
            color="#666666", linewidth=1.5, linestyle=":")
    for k in summary["precision_at_k"]:
        kk = int(k)
        if kk <= len(curve):
            ax.axvline(kk, color="#dddddd", linewidth=0.8, zorder=0)
    if summary.get("budget"):
        ax.axvline(summary["budget"], color="#b03030", linewidth=1, label=f"review budget ({summary['budget']})")
    ax.set_xlabel("rows reviewed, in queue order")
    ax.set_ylabel("adjudicated label changes found")
    ax.set_title("Triage: label errors found per physician review")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.grid(alpha=0.2)
    fig.tight_layout()
    target = Path(path)
    write_atomic(target, lambda p: fig.savefig(p, format="png", metadata={"Software": None}))
    plt.close(fig)
    return target


def headline(summary: dict[str, Any]) -> dict[str, Any]:
    """The scalars of ``summary.json`` that ``dvc metrics show`` displays."""
    return {**{k: summary[k] for k in ("rows", "eligible", "routed", "base_rate")},
            "precision_at": {k: v["triage"] for k, v in summary["precision_at_k"].items()},
            "errors_found": summary["errors_found_per_review"].get("errors_found")}


def write_outputs(queue: pd.DataFrame, summary: dict[str, Any], curve: pd.DataFrame, out_dir: Path) -> dict[str, Path]:
    out_dir = Path(out_dir)
    q = queue[tr.QUEUE_COLUMNS + [c for c in (*impact.IMPACT_COLUMNS, *requeue.MARKERS) if c in queue.columns]].copy()
    q["relabel_rel_err"] = q["relabel_rel_err"].round(4)
    paths = {
        "queue": write_csv_for_people(out_dir / QUEUE, q),
        "summary": write_json(out_dir / SUMMARY, summary),
        "metrics": write_json(out_dir / METRICS, headline(summary)),
        "curve": write_atomic(out_dir / CURVE, lambda p: curve.to_csv(p, index=False)),
    }
    paths["plot"] = plot(curve, summary, out_dir / PLOT)
    return paths
