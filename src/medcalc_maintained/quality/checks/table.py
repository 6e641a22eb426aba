"""Run the checks over a whole instances table: one row per finding."""

from __future__ import annotations

import json

import pandas as pd

from medcalc_maintained.quality.checks.registry import Instance, run

FINDING_COLUMNS = ["split", "uid", "calculator_id", "check", "severity", "reason",
                   "evidence_text", "evidence_start", "evidence_end"]
_REC_COLS = ("finding", "missing_inputs", "implausible_inputs", "recomputed")


def run_checks(instances: pd.DataFrame, recompute: pd.DataFrame | None = None) -> pd.DataFrame:
    """Findings of every check on every row of ``instances`` (ingest output), with the recompute
    output (``split``, ``uid``, ``finding`` ...) when given. Columns: :data:`FINDING_COLUMNS`."""
    rec: dict[tuple[str, int], dict] = {}
    if recompute is not None and len(recompute):
        cols = [c for c in _REC_COLS if c in recompute.columns]
        keys = zip(recompute["split"].tolist(), recompute["uid"].astype(int).tolist())
        vals = recompute[cols].to_dict("records")
        for v in vals:  # a value the recompute could not work out is None, not NaN
            if "recomputed" in v and isinstance(v["recomputed"], float) and v["recomputed"] != v["recomputed"]:
                v["recomputed"] = None
        rec = dict(zip(keys, vals))
    cols = ["split", "uid", "calculator_id", "Patient Note", "Question", "entities", "Ground Truth Answer", "output_type"]
    rows: list[tuple] = []
    for split, uid, cid, note, question, ents, label, otype in zip(*(instances[c].tolist() for c in cols)):
        uid, cid = int(uid), int(cid)
        inst = Instance(note or "", question or "", json.loads(ents) if isinstance(ents, str) else dict(ents or {}),
                        str(label), otype, cid, rec.get((split, uid)), split, uid)
        for f in run(inst):
            rows.append((split, uid, cid, f.check, f.severity, f.reason, f.evidence_text, f.evidence_start, f.evidence_end))
    out = pd.DataFrame(rows, columns=FINDING_COLUMNS)
    for c in ("uid", "calculator_id", "evidence_start", "evidence_end"):
        out[c] = out[c].astype("int64")
    return out
