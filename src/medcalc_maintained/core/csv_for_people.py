"""CSV files meant to be opened by people in a spreadsheet.

The rule (one place): a spreadsheet application treats a cell whose text starts with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return as a formula. In the CSV files the package writes for people
(triage ``queue.csv``, ``quarantine.csv``, ``unreadable.csv``, evaluate's ``graded.csv`` and
``per_calculator.csv``) every *text* cell that starts with one of those characters, or with an
apostrophe, gets one leading apostrophe; a text cell that is a plain number (``-3``, ``+2.5``) is left
as it is (a spreadsheet reads it as that number, not a formula); numeric, boolean and empty cells are
never touched. The apostrophe is the only change, so :func:`read_csv_for_people` restores the exact
text by removing it. CSV files read only by machines (the ``dvc plots`` tables: numbers and
calculator names) are written with plain ``to_csv``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from medcalc_maintained.core.atomic import write_atomic

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def spreadsheet_safe(value: object) -> object:
    """``value`` with a leading apostrophe when it is text a spreadsheet would run as a formula."""
    if isinstance(value, str) and value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.match(value):
        return "'" + value
    return value


def spreadsheet_text(value: object) -> object:
    """The inverse of :func:`spreadsheet_safe` for a cell read back from such a CSV."""
    if isinstance(value, str) and value.startswith("'"):
        return value[1:]
    return value


def _is_text(series) -> bool:
    import pandas as pd

    return series.dtype == object or pd.api.types.is_string_dtype(series.dtype)


def write_csv_for_people(path: os.PathLike | str, df) -> Path:
    """``df`` as CSV (no index) to ``path`` atomically, its text cells made spreadsheet-safe."""
    out = df.copy()
    for col in out.columns:
        if _is_text(out[col]):
            out[col] = out[col].map(spreadsheet_safe)
    return write_atomic(path, lambda p: out.to_csv(p, index=False))


def read_csv_for_people(path: os.PathLike | str, **kwargs):
    """A CSV written by :func:`write_csv_for_people`, with its text restored exactly."""
    import pandas as pd

    df = pd.read_csv(path, **kwargs)
    for col in df.columns:
        if _is_text(df[col]):
            df[col] = df[col].map(spreadsheet_text)
    return df
