"""The v1.0 rows an implementation is compared on: row number, calculator, ``Relevant Entities``, label."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class V1Row:
    """One v1.0 row: its id, calculator, ``Relevant Entities`` and label."""

    row_number: int
    calculator_id: int
    entities: dict[str, Any]
    label: str


def v1_rows(instances: Any) -> list[V1Row]:
    """The v1.0 rows of an ingest ``instances`` table (``entities`` JSON, ``Ground Truth Answer``)."""
    return [V1Row(int(r["Row Number"]), int(r["Calculator ID"]), json.loads(r["entities"]),
                  str(r["Ground Truth Answer"])) for _, r in instances.iterrows()]
