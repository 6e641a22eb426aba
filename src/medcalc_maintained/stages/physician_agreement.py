"""Stage ``physician-agreement``: original, recomputed and maintained labels against the 50
blinded physician labels of the phase-3 workbook, with seeded bootstrap 95% CIs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.core.io import read_parquet, write_json
from medcalc_maintained.ledger import campaign
from medcalc_maintained.project import Project
from medcalc_maintained.quality import agreement


def run(project: Project, *, out: Path | None = None, bootstrap: int | None = None,
        seed: int | None = None) -> tuple[dict[str, Any], Path]:
    p = project.section("report.physician_agreement")
    inst = read_parquet(project.instances, "instances", "ingest")
    maintained = read_parquet(project.maintained, "maintained instances", "apply")
    camp = campaign.read_workbooks(*project.campaign_workbooks)
    rep = agreement.agreement_report(camp, inst, maintained, n_boot=bootstrap or int(p["bootstrap"]),
                                     seed=int(p["seed"]) if seed is None else seed)
    target = out or project.physician_agreement
    write_json(target, rep)
    return rep, target
