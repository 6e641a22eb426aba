"""Run the checks over a whole instances table: one row per finding."""

from __future__ import annotations

import pandas as pd

from medcalc_maintained.core.rows import Row, rows_of
from medcalc_maintained.quality.checks.registry import Instance, run

# the findings table (``findings.parquet`` of stage ``recompute``): the columns it stores
FINDING_COLUMNS = ["split", "uid", "calculator_id", "check", "severity", "reason",
                   "evidence_text", "evidence_start", "evidence_end"]
# the structured fields of a finding that only a table made in memory carries (``structured=True``)
STRUCTURED_COLUMNS = ["unmentioned"]
REC_COLUMNS = ("finding", "missing_inputs", "implausible_inputs", "recomputed")  # what checks read of the recompute


def run_checks(instances: pd.DataFrame, recompute: pd.DataFrame | None = None, *,
               structured: bool = False) -> pd.DataFrame:
    """Findings of every check on every row of ``instances`` (ingest output), with the recompute
    output (``split``, ``uid``, ``finding`` ...) when given. Columns: :data:`FINDING_COLUMNS`, and
    with ``structured`` also :data:`STRUCTURED_COLUMNS` (tuples of names; see :class:`.registry.Finding`).
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
    found = [f for row in rows_of(instances) for f in check_row(row, rec.get((row.split, row.uid)), structured=structured)]
    return findings_frame(found, structured=structured)


def findings_frame(found: list[tuple], *, structured: bool = False) -> pd.DataFrame:
    """The findings table of :func:`check_row` tuples (made with the same ``structured``)."""
    out = pd.DataFrame(found, columns=FINDING_COLUMNS + (STRUCTURED_COLUMNS if structured else []))
    for c in ("uid", "calculator_id", "evidence_start", "evidence_end"):
        out[c] = out[c].astype("int64")
    return out


def check_row(row: Row, rec: dict | None, *, structured: bool = False) -> list[tuple]:
    """The findings of one row (with its recompute record), as tuples in the order of :data:`FINDING_COLUMNS`
    (then :data:`STRUCTURED_COLUMNS` with ``structured``)."""
    inst = Instance.of(row, rec)
    split, uid, cid = inst.split, inst.uid, inst.calculator_id
    return [(split, uid, cid, f.check, f.severity, f.reason, f.evidence_text, f.evidence_start, f.evidence_end,
             *((f.unmentioned,) if structured else ())) for f in run(inst)]
