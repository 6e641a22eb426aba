"""Stage ``recompute-report``: metrics of the recompute audit once maintained labels exist.

Per-calculator computable and agreement rates, and the precision and recall of its flags as a
detector of "the original label diverges from the maintained label"; and the metrics of the
zero-LLM checks (``findings.parquet``): per check and combined, plus flags on unverified rows.

Writes the full summary (``recompute_summary.json``, with the per-calculator and per-check tables)
and, beside it, ``metrics.json``: the DVC metric, scalars only (rows, computable and agreement
rates, precision and recall of the recompute flags and of the checks combined).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.project import Project
from medcalc_maintained.quality import definitions
from medcalc_maintained.quality import recompute as rc
from medcalc_maintained.stages._metrics import write_report


def run(project: Project, *, out: Path | None = None) -> tuple[dict[str, Any], Path]:
    rec = read_parquet(project.recompute, "recompute output", "recompute")
    inst = read_parquet(project.instances, "instances", "ingest")
    maintained = read_parquet(project.maintained, "maintained instances", "apply")
    findings_path = project.findings
    findings = read_parquet(findings_path, "check findings", "recompute") if findings_path.is_file() else None
    summary = rc.summarise(rec, inst, maintained, findings)
    contradictions = definitions.policy_contradictions(maintained, inst)
    definitions.write_contradictions(contradictions, project.policy_contradictions)
    summary["policy_contradictions"] = int(len(contradictions))
    return summary, write_report(out or project.recompute_summary, summary, headline(summary))


def headline(summary: dict[str, Any]) -> dict[str, Any]:
    """The scalars of the summary that ``dvc metrics show`` displays."""
    out: dict[str, Any] = {k: summary[k] for k in ("rows", "computable_rate", "agreement_rate")}
    for name, part in (("detector", summary.get("detector")), ("checks", (summary.get("checks") or {}).get("combined"))):
        if part:
            out[name] = {"precision": part["precision"], "recall": part["recall"]}
    return out
