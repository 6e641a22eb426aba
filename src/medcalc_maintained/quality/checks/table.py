"""Run the checks over a whole instances table: one row per finding."""

from __future__ import annotations

import json

import pandas as pd

from medcalc_maintained.quality.checks.registry import Instance, run

FINDING_COLUMNS = ["split", "uid", "calculator_id", "check", "severity", "reason",
                   "evidence_text", "evidence_start", "evidence_end"]
REC_COLUMNS = ("finding", "missing_inputs", "implausible_inputs", "recomputed")  # what checks read of the recompute


def run_checks(instances: pd.DataFrame, recompute: pd.DataFrame | None = None) -> pd.DataFrame:
    """Findings of every check on every row of ``instances`` (ingest output), with the recompute
    output (``split``, ``uid``, ``finding`` ...) when given. Columns: :data:`FINDING_COLUMNS`.
    (Stage ``recompute`` runs the checks in its own pass: ``stages.recompute.recompute_and_check``.)"""
    rec: dict[tuple[str, int], dict] = {}
    if recompute is not None and len(recompute):
        cols = [c for c in REC_COLUMNS if c in recompute.columns]
        keys = zip(recompute["split"].tolist(), recompute["uid"].astype(int).tolist())
        vals = [dict(zip(cols, t)) for t in zip(*(recompute[c].tolist() for c in cols))]
        for v in vals:  # a value the recompute could not work out is None, not NaN
            if "recomputed" in v and isinstance(v["recomputed"], float) and v["recomputed"] != v["recomputed"]:
                v["recomputed"] = None
        rec = dict(zip(keys, vals))
    cols = ["split", "uid", "calculator_id", "Patient Note", "Question", "entities", "Ground Truth Answer", "output_type"]
    rows = [(*r, rec.get((r[0], int(r[1])))) for r in zip(*(instances[c].tolist() for c in cols))]
    return findings_frame(_check_rows(rows))


def findings_frame(found: list[tuple]) -> pd.DataFrame:
    """The findings table of :func:`check_row` tuples."""
    out = pd.DataFrame(found, columns=FINDING_COLUMNS)
    for c in ("uid", "calculator_id", "evidence_start", "evidence_end"):
        out[c] = out[c].astype("int64")
    return out


def check_row(split: str, uid: int, cid: int, note: str | None, question: str | None, entities: dict,
              label, output_type: str, rec: dict | None) -> list[tuple]:
    """The findings of one row, as tuples in the order of :data:`FINDING_COLUMNS`."""
    uid, cid = int(uid), int(cid)
    inst = Instance(note or "", question or "", entities, str(label), output_type, cid, rec, split, uid)
    return [(split, uid, cid, f.check, f.severity, f.reason, f.evidence_text, f.evidence_start, f.evidence_end)
            for f in run(inst)]


def _check_rows(rows) -> list[tuple]:
    out: list[tuple] = []
    for split, uid, cid, note, question, ents, label, otype, rec in rows:
        out.extend(check_row(split, uid, cid, note, question,
                             json.loads(ents) if isinstance(ents, str) else dict(ents or {}), label, otype, rec))
    return out
