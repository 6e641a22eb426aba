"""Which files the corrections ledger is read from.

The ledger readers (``ledger/records.py``, ``ledger/propose.py``, ``upstream/rebase.py``) and the
fingerprint of the stored release tables (``release/tables.py``) list the same files. This module
stands apart from ``ledger/`` so that a reader of a release, which fingerprints the ledger's files
but never reads a record, does not import the ledger package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from medcalc_maintained.core.errors import DataError


def ledger_files(paths: Iterable[Path]) -> list[Path]:
    """YAML files of the given ledger files and directories (``Project.ledger_paths``), sorted by
    name within a directory."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(q for q in p.iterdir() if q.suffix in (".yaml", ".yml") and q.is_file()))
        elif p.is_file():
            out.append(p)
        else:
            raise DataError(p, "ledger path does not exist")
    return out
