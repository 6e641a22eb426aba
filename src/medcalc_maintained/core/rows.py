"""The upstream MedCalc-Bench row in one place: its columns, reading an upstream CSV file, and its
``Relevant Entities`` literal.

Every module that reads upstream rows (the ``ingest`` stage, the upstream diff, the release
tables, scoring and the contracts) takes them from here; no library module imports a stage.
"""

from __future__ import annotations

import ast
import io as _io
import json
from pathlib import Path
from typing import Any, cast

import pandas as pd

from medcalc_maintained.core.io import DataError

UPSTREAM_COLUMNS = [
    "Row Number",
    "Calculator ID",
    "Calculator Name",
    "Category",
    "Output Type",
    "Note ID",
    "Note Type",
    "Patient Note",
    "Question",
    "Relevant Entities",
    "Ground Truth Answer",
    "Lower Limit",
    "Upper Limit",
    "Ground Truth Explanation",
]


def row_dicts(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``df`` as dicts keyed by column name (``df.to_dict("records")``, typed)."""
    return cast("list[dict[str, Any]]", df.to_dict("records"))


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    raise ValueError(f"value of type {type(value).__name__} is not allowed in Relevant Entities")


def parse_entities(text: str) -> dict[str, Any]:
    """Parse the Python-literal ``Relevant Entities`` dict safely (never ``eval``)."""
    value = ast.literal_eval(text)
    if not isinstance(value, dict):
        raise ValueError(f"expected a dict, got {type(value).__name__}")
    return _jsonable(value)


def entities_or_empty(value: Any) -> dict[str, Any]:
    """The entities of one cell, ``{}`` when missing or not a readable dict: a dict as it is, else
    the text read by :func:`parse_entities` (upstream's Python literal) or as JSON (the
    ``entities`` column ``ingest`` writes, whose ``true``/``false``/``null`` are no Python literal).
    What the release tables, the contracts, scoring and the ledger read a row's entities with."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.strip():
        return {}
    try:
        return parse_entities(value)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        return {}
    return parsed if isinstance(parsed, dict) else {}


def read_upstream_csv(path: Path) -> pd.DataFrame:
    """Read one upstream CSV as text, checking encoding and structure."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    raw = path.read_bytes()
    if not raw.strip():
        raise DataError(path, "file is empty")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(path, f"bytes are not valid UTF-8 (byte offset {exc.start}, line {line})") from None
    try:
        df = pd.read_csv(_io.StringIO(text), dtype=str, keep_default_na=False)
    except pd.errors.ParserError as exc:
        raise DataError(path, f"not a readable CSV: {exc}") from None
    except pd.errors.EmptyDataError:
        raise DataError(path, "file is empty") from None
    missing = [c for c in UPSTREAM_COLUMNS if c not in df.columns]
    if missing:
        raise DataError(path, f"missing column(s): {', '.join(missing)}")
    if df.empty:
        raise DataError(path, "file has a header but no rows")
    bad_rn = df.index[~df["Row Number"].str.strip().str.fullmatch(r"\d+")]
    if len(bad_rn):
        i = int(bad_rn[0])
        raise DataError(path, f"Row Number {df.at[i, 'Row Number']!r} is not a positive integer",
                        row=i + 2, field="Row Number")
    dup = df["Row Number"].astype(int).duplicated(keep=False)
    if dup.any():
        values = sorted(set(df.loc[dup, "Row Number"].astype(int)))
        raise DataError(path, f"duplicate Row Number: {', '.join(map(str, values[:10]))}", field="Row Number")
    return df
