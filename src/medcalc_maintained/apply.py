"""Stage ``apply``: upstream instances + accepted ledger records -> maintained instances.

The output keeps every v1.0 column (a drop-in replacement) with ``Ground Truth Answer`` set to the
maintained label and ``Lower Limit``/``Upper Limit`` recomputed from it (±5% for decimals, equal to
the answer otherwise, ``N/A`` for abstentions), and adds ``Label Status`` (corrected | abstain |
confirmed | unverified), ``Original Ground Truth Answer``, ``Label Source``, ``Correction IDs`` and
``Error Type``. Rows without an accepted record keep their upstream label as ``unverified``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from medcalc_maintained import ledger
from medcalc_maintained.io import write_atomic

TYPED = ["uid", "split", "calculator_id", "output_type"]


def build(instances: pd.DataFrame, ledger_paths: Iterable[Path], upto: str | None = None) -> pd.DataFrame:
    """Maintained instances; raises :class:`ledger.LedgerError` listing every ledger problem."""
    records, problems = ledger.collect(ledger_paths)
    out = ledger.check_and_apply(instances, records, upto=upto, prior=problems)
    drop = [c for c in ("entities", "gt_kind", "gt_value", "gt_date") if c in out.columns]
    return out.drop(columns=drop)


def write(maintained: pd.DataFrame, out_dir: Path) -> Path:
    return write_atomic(Path(out_dir) / "instances.parquet", lambda p: maintained.to_parquet(p, index=False))
