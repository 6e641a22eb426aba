"""The one safe way to write a ledger file: check the whole ledger with the new text, then replace.

The candidate text is read back and applied, together with every other ledger record, to the
upstream instances in a scratch directory; only when that succeeds is ``target`` replaced
atomically. A problem is reported against ``target`` (never the scratch file) and nothing is written.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from medcalc_maintained.core.io import write_text_atomic
from medcalc_maintained.ledger.apply import check_and_apply
from medcalc_maintained.ledger.records import LedgerError, Record, load


def write_checked(target: Path, text: str, *, others: list[Record], instances: pd.DataFrame) -> list[Record]:
    """Write ``text`` to ``target`` if it parses and the ledger ``others`` + it still applies.

    Returns the records read from the new text. Raises :class:`LedgerError` (problems of the
    candidate are named by ``target``) and leaves ``target`` untouched otherwise.
    """
    target = Path(target)
    with tempfile.TemporaryDirectory(prefix="medcalc-ledger-write-") as tmp:
        cand = Path(tmp) / target.name
        cand.write_text(text, encoding="utf-8")
        try:
            new = load([cand])
            for rec in new:  # checked as if it were at target: same order and names as after the write
                rec.path = str(target)
            check_and_apply(instances, list(others) + new, upto=None)
        except LedgerError as exc:
            for p in exc.problems:
                if p.path == str(cand):
                    p.path = str(target)
            raise
    write_text_atomic(target, text)
    return new
