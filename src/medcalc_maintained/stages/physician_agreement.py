"""Stage ``physician-agreement``: original, recomputed and maintained labels against the 50
blinded physician labels of the phase-3 workbook, with seeded bootstrap 95% CIs.

Writes the full report (``report.physician_agreement.out``: per label set the counts, rates,
sMAPE, their CIs and the rows' uids) and, beside it, ``metrics.json``: the DVC metric, scalars only
(``rows``; per label set ``agree.<set>`` and ``smape.<set>``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.ledger import campaign
from medcalc_maintained.project import Project
from medcalc_maintained.quality import agreement
from medcalc_maintained.stages._metrics import write_report


def run(project: Project, *, out: Path | None = None, bootstrap: int | None = None,
        seed: int | None = None) -> tuple[dict[str, Any], Path]:
    p = project.section("report.physician_agreement")
    inst = read_parquet(project.instances, "instances", "ingest")
    maintained = read_parquet(project.maintained, "maintained instances", "apply")
    camp = campaign.read_workbooks(*project.campaign_workbooks)
    rep = agreement.agreement_report(camp, inst, maintained, n_boot=bootstrap or int(p["bootstrap"]),
                                     seed=int(p["seed"]) if seed is None else seed)
    return rep, write_report(out or project.physician_agreement, rep, headline(rep))


def headline(rep: dict[str, Any]) -> dict[str, Any]:
    """The scalars of the report that ``dvc metrics show`` displays."""
    sets = rep["label_sets"]
    return {"rows": rep["rows"], "agree": {name: s["agree"] for name, s in sets.items()},
            "smape": {name: s["smape"] for name, s in sets.items()}}
