"""Helpers shared by the triage and review tests: configs built from parameters written in the test,
the relabel labels and audit flags of the real split, and filling a packet as a reviewer would."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
from openpyxl import load_workbook

from medcalc_maintained.core.answers import format_answer, parse_answer
from medcalc_maintained.planning.triage import Reviewer, TriageConfig
from medcalc_maintained.project import Project, defaults, merge
from medcalc_maintained.quality.recompute import FLAGGING
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
