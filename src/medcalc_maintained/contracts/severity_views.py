"""Contract view ``change_severity`` of a built release: the severity column of ``full`` and
``corrections``, one row per row of ``full`` and per record of ``corrections``.

Facts (``expectations/release.json``):

``severity_allowed``     the value is one of ``L0``-``L3`` (no missing value);
``severity_consistent``  it agrees with whether the label changed: ``L0`` when the two labels are
                         the same value, never ``L0`` when they are different labels
                         (``core.answers.labels_agree`` fails: outside tolerance, or one abstains);
``severity_matches``     it equals the level :func:`medcalc_maintained.calculators.severity.change_level`
                         computes from the values, the calculator and the row's entities (``full``:
                         original -> maintained label; ``corrections``: ``old_value`` ->
                         ``new_value``, the calculator and entities of the record's row in ``full``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from medcalc_maintained.calculators.severity import LEVELS, change_level
from medcalc_maintained.core.answers import labels_agree, parse_answer, same_value
from medcalc_maintained.core.rows import entities_or_empty, row_dicts

VIEW = "change_severity"
ID_COLUMNS = {VIEW: ["config", "split", "uid", "id"]}
COLUMNS = ["config", "split", "uid", "id", "value", "severity_allowed", "severity_consistent", "severity_matches"]
FULL_COLUMN, CORRECTIONS_COLUMN = "Change Severity", "change_severity"


def _facts(value: Any, cid: Any, old: Any, new: Any, otype: str, entities: dict) -> tuple[bool, bool, bool]:
    v = None if value is None or (isinstance(value, float) and value != value) else str(value)
    allowed = v in LEVELS
    try:
        valid = parse_answer(str(old), otype).is_valid and parse_answer(str(new), otype).is_valid
        unchanged = valid and same_value(str(old), str(new), otype)
        different = valid and not labels_agree(str(new), str(old), otype)
        expected = change_level(cid, str(old), str(new), otype, entities) if valid else None
    except (ValueError, TypeError, KeyError):
        return allowed, False, False
    consistent = allowed and (v == "L0" if unchanged else True) and (v != "L0" if different else True)
    return allowed, consistent, allowed and v == expected


def severity_view(full: pd.DataFrame, corrections: pd.DataFrame) -> pd.DataFrame:
    """The ``change_severity`` view (see the module doc) of a release's ``full`` and ``corrections``."""
    rows: list[dict[str, Any]] = []
    if len(full):
        values = full[FULL_COLUMN] if FULL_COLUMN in full.columns else pd.Series([None] * len(full), index=full.index)
        for r, v in zip(row_dicts(full), values):
            ents = entities_or_empty(r.get("Relevant Entities"))
            facts = _facts(v, r.get("Calculator ID"), r.get("Original Ground Truth Answer"), r.get("Ground Truth Answer"),
                           str(r.get("Output Type")), ents)
            rows.append({"config": "full", "split": str(r.get("split")), "uid": r.get("uid"), "id": "", "value": v,
                         **dict(zip(COLUMNS[5:], facts))})
    if len(corrections):
        by_row = {(str(r.get("split")), int(r["uid"])): r for r in row_dicts(full)} if len(full) else {}
        values = corrections[CORRECTIONS_COLUMN] if CORRECTIONS_COLUMN in corrections.columns \
            else pd.Series([None] * len(corrections), index=corrections.index)
        for r, v in zip(row_dicts(corrections), values):
            row = by_row.get((str(r.get("split")), int(r["uid"])), {})
            facts = _facts(v, row.get("Calculator ID"), r.get("old_value"), r.get("new_value"), str(row.get("Output Type")),
                           entities_or_empty(row.get("Relevant Entities"))) if row else (v in LEVELS, False, False)
            rows.append({"config": "corrections", "split": str(r.get("split")), "uid": r.get("uid"), "id": str(r.get("id")),
                         "value": v, **dict(zip(COLUMNS[5:], facts))})
    return pd.DataFrame(rows, columns=COLUMNS)
