"""``Evidence Status`` and ``Evidence`` of ``full`` (from ``core/versions.py: EVIDENCE_ROWS_FROM``): every
input of every verified row read against its note.

A verified label is its declared definition applied to the row's inputs (upstream's entities patched by
the inputs its ledger record recorded). For each of them the release states what the note says
(``calculators/certify.py``): ``supports`` with the quote the evidence verifier certifies (or the
definition's convention for an unmentioned input), ``contradicts`` with the note's other value and its
quote, or ``not_addressed``. The row's ``Evidence Status`` is ``certified`` (every input supported: the
label is derived from evidence), ``contradicted`` (an input contradicted) or ``not_addressed``;
unverified rows have neither column.

The documents come from stage ``certify`` (``certify.out``/inputs.parquet) where the release's row
has the ledger records that stage read (the same ``Correction IDs`` as ``apply``'s maintained labels),
and are certified anew otherwise, so a release never ships another row's reading. A published release
ships the cells it published (``frozen``: ``data/released/published.json``), whatever a later verifier
or search reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from medcalc_maintained.calculators.certify import row_verdict
from medcalc_maintained.core.labels import UNVERIFIED
from medcalc_maintained.ledger.evidence_rows import certify_items, documents, row_document, row_items
from medcalc_maintained.ledger.published import evidence_key
from medcalc_maintained.project import Project

EVIDENCE_STATUS, EVIDENCE = "Evidence Status", "Evidence"
STAGE_FILE = "inputs.parquet"


def _stage_documents(project: Project) -> tuple[dict[tuple[str, int], list[dict[str, Any]]], dict[tuple[str, int], str]]:
    """Stage ``certify``'s documents per row and the ``Correction IDs`` each row had there (empty when
    the stage has not run)."""
    table = Path(project.path(project.param("certify.out"))) / STAGE_FILE
    if not table.is_file() or not project.maintained.is_file():
        return {}, {}
    maintained = pd.read_parquet(project.maintained, columns=["split", "uid", "Correction IDs"])
    ids = {(str(s), int(u)): str(c or "") for s, u, c in zip(maintained["split"], maintained["uid"],
                                                             maintained["Correction IDs"])}
    return documents(pd.read_parquet(table)), ids


def columns(project: Project, maintained: pd.DataFrame, instances: pd.DataFrame, records: Iterable[Any],
            frozen: Mapping[str, str] | None = None) -> tuple[list[str | None], list[str | None]]:
    """``Evidence Status`` and ``Evidence`` of every row of a release's maintained frame, in its order;
    ``frozen``: the cells the release published, by ``evidence_key`` (``ledger/published.py``)."""
    rows: list[dict[str, Any]] = [{str(k): v for k, v in r.items()} for r in maintained.to_dict("records")]
    keys = [(str(r["split"]), int(r["uid"])) for r in rows]
    verified = [str(r["Label Status"]) != UNVERIFIED for r in rows]
    cells_of = frozen or {}
    published = {i: cells_of[evidence_key(*k)] for i, (k, v) in enumerate(zip(keys, verified))
                 if v and evidence_key(*k) in cells_of}
    unpublished = any(v and i not in published for i, v in enumerate(verified))
    stage, stage_ids = _stage_documents(project) if unpublished else ({}, {})  # a frozen release reads no stage output
    fresh = [i for i, (k, r, v) in enumerate(zip(keys, rows, verified))
             if v and i not in published and not (k in stage and stage_ids.get(k) == str(r.get("Correction IDs") or ""))]
    if fresh:
        entities = {(str(s), int(u)): e for s, u, e in zip(instances["split"], instances["uid"], instances["entities"])}
        by_id = {r.id: r.data for r in records if r.valid}
        done = certify_items(row_items([rows[i] for i in fresh], entities, by_id),
                             workers=int(project.param("certify.workers")))
        stage = {**stage, **{keys[i]: d for i, d in zip(fresh, done)}}
    cells: list[str | None] = [published[i] if i in published else row_document(stage[k]) if v else None
                               for i, (k, v) in enumerate(zip(keys, verified))]
    status = [None if c is None else str(json.loads(c)["status"]) if i in published else row_verdict(stage[k])
              for i, (k, c) in enumerate(zip(keys, cells))]
    return status, cells


__all__ = ["EVIDENCE", "EVIDENCE_STATUS", "columns"]
