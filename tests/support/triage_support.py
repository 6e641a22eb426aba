"""Helpers shared by the triage and review tests: configs built from parameters written in the test,
the relabel labels and audit flags of the real split (and a project holding them), filling a packet
as a reviewer would, and a small project with a filled packet."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import yaml
from openpyxl import load_workbook

from medcalc_maintained.core.answers import format_answer, parse_answer
from medcalc_maintained.planning.triage import Reviewer, TriageConfig
from medcalc_maintained.project import Project, defaults, merge
from medcalc_maintained.quality.recompute import FLAGGING
from medcalc_maintained.review import packet as pkt
from medcalc_maintained.review.layout import COL, REVIEW

REVIEWER = Reviewer("md-im-1", "physician", "internal medicine")


def project(**triage) -> Project:
    """A project whose ``triage`` parameters are the built-in defaults with ``triage`` laid over them
    (as a params.yaml holding them would give)."""
    path = Path("test-params.yaml")
    return Project(Path("."), merge(defaults(), {"triage": triage}, path))


def config(**triage) -> TriageConfig:
    return TriageConfig.from_project(project(**triage))


def relabel_and_flags(instances: pd.DataFrame, recompute: pd.DataFrame, campaign_table: pd.DataFrame):
    """Relabel labels (the published consensus y_new in the relabel stage's schema) and audit flags
    (the rules audit: 1 run per row, wrong when the recompute flags the row)."""
    otype = instances.set_index("uid")["Output Type"]
    y_new = dict(zip(campaign_table["uid"].astype(int), campaign_table["y_new"]))
    rows = []
    for uid in instances["uid"].astype(int):
        row = {"uid": uid, "split": "test", "status": "deferred", "label": None, "votes": 0,
               "backend": "replay", "model": "published-consensus"}
        if uid in y_new:
            row.update(status="labeled", votes=1, label=format_answer(parse_answer(y_new[uid], otype[uid]), otype[uid]))
        rows.append(row)
    wrong = recompute["finding"].isin(FLAGGING)
    flags = pd.DataFrame({"uid": recompute["uid"], "split": recompute["split"], "runs": 1,
                          "votes_wrong": wrong.astype(int), "flagged": wrong})
    return pd.DataFrame(rows), flags


def write_relabel_and_flags(p: Project, instances: pd.DataFrame, recompute: pd.DataFrame,
                            campaign_table: pd.DataFrame) -> None:
    """:func:`relabel_and_flags` written where project ``p``'s stages read them (the relabel and
    audit outputs)."""
    relabel, flags = relabel_and_flags(instances, recompute, campaign_table)
    for path, frame in ((p.relabel_labels, relabel), (p.audit_flags, flags)):
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(path, index=False)


def fill(path: Path, answers: dict[str, dict], out: Path) -> dict[str, int]:
    """Fill a packet as a reviewer would: type values into the answer/comment cells by row id."""
    wb = load_workbook(path)
    ws = wb[REVIEW]
    where = {}
    for r in range(2, ws.max_row + 1):
        rid = ws.cell(row=r, column=1).value
        where[rid] = r
        for key, value in answers.get(rid, {}).items():
            ws.cell(row=r, column=COL[key], value=value)
    wb.save(out)
    return where


CASES = {
    # row: (relabel status, relabel label) of the controlled relabel table
    41: ("labeled", "4"),                          # CHA2DS2-VASc, current label 4
    146: ("labeled", "38"),                        # MDRD, current label N/A (campaign abstention)
    928: ("labeled", "09/12/2014"),                # due date, current 09/12/2014
    1029: ("labeled", "('14 weeks', '2 days')"),   # gestational age, current 14 weeks 1 day
    15: ("deferred", None),                        # CrCl, unverified 37.663
}
ANSWERS = {
    "test-00041": {"answer": 4, "comment": "CHF, hypertension, age 75+ as documented."},
    "test-00146": {"answer": 38.5, "comment": "Creatinine 1.6 mg/dL from the labs.", "timepoint": "at admission"},
    "test-00928": {"answer": dt.datetime(2014, 9, 20), "comment": "LMP taken from the second visit."},
    "test-01029": {"answer": "14 weeks 2 days", "comment": "Counted from the LMP to the visit date."},
    "test-00015": {"answer": 40.1, "comment": "Actual body weight used."},
}


def controlled_relabel(relabel: pd.DataFrame) -> pd.DataFrame:
    rl = relabel.copy()
    for uid, (status, label) in CASES.items():
        rl.loc[rl["uid"] == uid, ["status", "label"]] = [status, label]
    return rl


PACKET_ROWS = [("test", 41), ("test", 146), ("test", 928)]


def packet_project(root: Path, instances: pd.DataFrame, reviewers: int = 1) -> Path:
    """A small project at ``root`` (``instances``, an empty hand-written ledger, ``reviewers``
    internal-medicine physicians ``md-im-1``...) with a packet of :data:`PACKET_ROWS` for
    :data:`REVIEWER` exported with its export record (``blank.xlsx``) and filled, every row N/A
    (``filled.xlsx``)."""
    (root / "data" / "interim").mkdir(parents=True)
    instances.to_parquet(root / "data" / "interim" / "instances.parquet", index=False)
    (root / "data" / "corrections").mkdir(parents=True)
    physicians = [{"id": f"md-im-{i}", "role": "physician", "specialty": "internal medicine"}
                  for i in range(1, reviewers + 1)]
    (root / "params.yaml").write_text(yaml.safe_dump({
        "apply": {"ledger": ["data/corrections"], "out": "data/maintained"},
        "triage": {"reviewers": physicians, "adjudication": {"agree_with": [], "id_prefix": "review"}}}))
    blank = pkt.export_packet(instances, PACKET_ROWS, REVIEWER, root / "blank.xlsx",
                              exports=root / "data" / "review" / "exports")
    fill(blank, {pkt.row_id(s, u): {"answer": "N/A", "comment": "The note lacks an input."} for s, u in PACKET_ROWS},
         root / "filled.xlsx")
    return root
