"""Proposals for unverified rows: what the checks' findings say the label would be, never a label.

From release 2.1.0 on (:data:`~medcalc_maintained.core.versions.DERIVATIONS_FROM`) ``full`` carries

``Proposed Answer``
    the value the declared definition gives on the row's upstream entities patched by the inputs
    its ``error`` findings read from the note (empty when no derivation can be made, and on every
    row without a proposal);
``Proposal``
    JSON, only on an *unverified* row with at least one ``error``-severity finding of the check
    registry (``findings.parquet`` of stage ``recompute``): ``derivation`` (``definition``,
    ``inputs`` with their note evidence, ``value``; ``null`` when none of the findings' checks
    provides a patch) and ``findings`` (each ``check``, ``severity``, ``reason`` and ``evidence``
    ``{start, end, text}``, offsets ``null`` when the finding quotes nothing).

A check provides a patch through ``register(..., patch=...)``
(:mod:`medcalc_maintained.quality.checks.registry`): an aggregation mismatch keeps the row's own
features (``[]``: the reference calculator's value), a contradicted criterion is set absent with
the note's sentence as evidence. The patches of all of a row's error findings are applied in the
findings' order. Verified rows never get a proposal; the label columns are untouched.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.labels import UNVERIFIED
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.core.rows import Row, row_dicts, rows_of
from medcalc_maintained.ledger.derivation import derive
from medcalc_maintained.quality.checks import REGISTRY, Finding, Instance

PROPOSED_ANSWER, PROPOSAL = "Proposed Answer", "Proposal"
SEVERITY = "error"  # the findings that back a proposal


def read_findings(path: Path) -> dict[tuple[str, int], list[Finding]]:
    """The ``error`` findings of ``findings.parquet`` per (split, uid), in the file's order; empty
    when the file does not exist (a project without the recompute stage's output)."""
    if not Path(path).is_file():
        return {}
    frame = read_parquet(path, "check findings", "recompute")
    out: dict[tuple[str, int], list[Finding]] = {}
    for r in row_dicts(frame[frame["severity"] == SEVERITY]):
        f = Finding(str(r["check"]), str(r["severity"]), str(r["reason"]), str(r["evidence_text"] or ""),
                    int(r["evidence_start"]), int(r["evidence_end"]))
        out.setdefault((str(r["split"]), int(r["uid"])), []).append(f)
    return out


def finding_document(f: Finding) -> dict[str, Any]:
    quoted = f.evidence_start >= 0
    return {"check": f.check, "severity": f.severity, "reason": f.reason,
            "evidence": {"start": f.evidence_start if quoted else None, "end": f.evidence_end if quoted else None,
                         "text": f.evidence_text if quoted else ""}}


def patch_of(inst: Instance, findings: list[Finding]) -> list[dict[str, Any]] | None:
    """The inputs the findings read from the note (the checks' patches, in order; a later input of
    the same name replaces an earlier one), or ``None`` when no finding's check provides a patch."""
    patched: dict[str, dict[str, Any]] | None = None
    for f in findings:
        check = REGISTRY.get(f.check)
        got = check.patch(inst, f) if check is not None and check.patch is not None else None
        if got is None:
            continue
        patched = {} if patched is None else patched
        for inp in got:
            patched.pop(str(inp["name"]), None)
            patched[str(inp["name"])] = inp
    return None if patched is None else list(patched.values())


def proposal(row: Row, entities: dict[str, Any], findings: list[Finding]) -> tuple[str, dict[str, Any]]:
    """(``Proposed Answer``, ``Proposal`` document) of one unverified row with error findings, on the
    row's upstream ``entities`` (a maintained frame carries none)."""
    cid = row.calculator_id
    inst = dataclasses.replace(Instance.of(row), entities=entities)
    inputs = patch_of(inst, findings)
    doc: dict[str, Any] = {"derivation": None, "findings": [finding_document(f) for f in findings]}
    if inputs is None:
        return "", doc
    d = derive(cid, entities, inputs)
    doc["derivation"] = {"definition": d.definition, "inputs": inputs, "value": d.value}
    return d.value or "", doc


def row_proposals(maintained: pd.DataFrame, instances: pd.DataFrame,
                  findings: dict[tuple[str, int], list[Finding]]) -> tuple[list[str], list[str | None]]:
    """(``Proposed Answer``, ``Proposal`` JSON) of every row of a maintained frame: ``""`` and
    ``None`` for a verified row or one without an error finding."""
    upstream = {(r.split, r.uid): r for r in rows_of(instances)}
    answers: list[str] = []
    docs: list[str | None] = []
    for r, status in zip(rows_of(maintained), maintained["Label Status"].astype(str).tolist()):
        key = (r.split, r.uid)
        found = findings.get(key)
        if status != UNVERIFIED or not found:
            answers.append("")
            docs.append(None)
            continue
        got = upstream.get(key)
        value, doc = proposal(r, got.entities if got is not None else {}, found)
        answers.append(value)
        docs.append(json.dumps(doc, sort_keys=True, ensure_ascii=False))
    return answers, docs
