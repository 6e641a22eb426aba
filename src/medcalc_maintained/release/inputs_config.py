"""Config ``inputs`` (releases from ``core/versions.py: INPUTS_CONFIG_FROM`` on): the certified inputs of
every verified row as a table, one row per row and input.

Each verified row of ``full`` carries its inputs as the JSON document of its ``Evidence`` column
(:mod:`medcalc_maintained.release.row_evidence`); this config is those documents flattened, in ``full``'s
row order and each document's input order, so a model developer can load the values a label must be
computed from, and where the note states them, without parsing JSON::

    load_dataset("org/medcalc-maintained", "inputs", revision="v2.4.0")

Columns: the row (``Row Number``, ``Calculator ID``, ``Calculator Name``, ``Label Status``, ``Evidence
Status``), then the input in the shape of stage ``certify``'s table (``ledger/evidence_rows.py: COLUMNS``):
``name``, ``value`` (JSON text: a number, text or true/false), ``unit``, ``source``, ``verdict``,
``convention``, the quote (``quote_start``, ``quote_end``, ``quote_text``; ``quote_in`` says whether the
offsets index the ``Patient Note`` or the ``Question``), ``note_value`` (JSON text: the note's other value
of a contradicted input), ``rule``, ``reason``, ``declared`` and ``used``. Contract ``inputs``
(:mod:`medcalc_maintained.contracts.release_inputs`) checks the table against ``full`` and the notes.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from medcalc_maintained.ledger.evidence_rows import frame
from medcalc_maintained.release.tables import INPUT_COLUMNS as COLUMNS
from medcalc_maintained.release.tables import INPUT_ROW_COLUMNS as ROW_COLUMNS
from medcalc_maintained.release.tables import INPUTS as NAME

EVIDENCE = "Evidence"


def table(full: pd.DataFrame) -> pd.DataFrame:
    """The ``inputs`` rows of one split of ``full`` (a row with an ``Evidence`` document gives one row per
    input of it; an unverified row, whose cell is empty, gives none). A document that is not JSON raises
    ``ValueError`` naming the row: the builder never ships a guess."""
    rows: list[dict[str, Any]] = []
    docs: list[list[dict[str, Any]]] = []
    for r in full.to_dict("records"):
        cell = r.get(EVIDENCE)
        if cell is None or cell is pd.NA or (isinstance(cell, float) and cell != cell):
            continue
        try:
            inputs = json.loads(str(cell))["inputs"]
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"row {r.get('Row Number')}: its {EVIDENCE} cell is not a document with inputs ({e})") from e
        rows.append({"split": "", "uid": int(r["Row Number"]), "Calculator ID": int(r["Calculator ID"])})
        docs.append(list(inputs))
    flat = frame(rows, docs)
    by_row = {int(r["Row Number"]): r for r in full.to_dict("records")}
    out = pd.DataFrame({c: flat[c] for c in COLUMNS if c not in ROW_COLUMNS})
    for c in reversed(ROW_COLUMNS):
        out.insert(0, c, [by_row[int(u)][c] for u in flat["uid"]])
    return out[COLUMNS].reset_index(drop=True)


__all__ = ["COLUMNS", "NAME", "ROW_COLUMNS", "table"]
