"""The upstream MedCalc-Bench row in one place: its columns, reading an upstream CSV file, its
``Relevant Entities`` literal, and :class:`Row`, the one per-row carrier.

Every module that reads upstream rows (the ``ingest`` stage, the upstream diff, the release
tables, scoring and the contracts) takes them from here; no library module imports a stage.
A module that needs one Python object per row (the checks' ``Instance``, row identity's
``Fingerprint``, the ledger's record rules, the MCP server's lookup) makes it from the
:class:`Row` objects of :func:`rows_of`, never from the frame's columns itself.
"""

from __future__ import annotations

import ast
import io as _io
import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import pandas as pd

from medcalc_maintained.core.errors import DataError

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


@dataclass
class Row:
    """One benchmark row, whichever frame it came from: an upstream CSV (upstream column names),
    ingest's ``instances.parquet`` (the same columns plus ``split``, ``uid``, ``output_type``,
    ``entities`` ...), or a maintained or released frame. Made by :func:`rows_of`."""

    split: str
    uid: int
    calculator: str             # ``Calculator ID`` as text, stripped (row identity keys on it)
    calculator_name: str
    output_type: str            # ``decimal`` | ``integer`` | ``date`` (stripped)
    note: str | None            # ``Patient Note``; None when the frame carries no note
    question: str | None        # ``Question``; None when the frame carries none
    note_id: str                # ``Note ID``, stripped
    label: str                  # ``Ground Truth Answer``
    lower: str                  # ``Lower Limit``
    upper: str                  # ``Upper Limit``
    explanation: str            # ``Ground Truth Explanation``
    entities_cell: Any = field(default=None, repr=False)  # the entities as the frame holds them
    entities_json: bool = field(default=False, repr=False)  # the cell is ingest's JSON ``entities``

    @property
    def calculator_id(self) -> int:
        """The calculator as a number (ingest's ``calculator_id``; raises ``ValueError`` on an upstream
        file whose ``Calculator ID`` is no integer, a row ingest quarantines)."""
        return int(self.calculator)

    @cached_property
    def entities(self) -> dict[str, Any]:
        """The row's entities as a dict, read once on first use: ingest's JSON ``entities`` as JSON,
        else by :func:`entities_or_empty` (``{}`` when missing or unreadable)."""
        cell = self.entities_cell
        if self.entities_json and isinstance(cell, str):
            try:
                parsed = json.loads(cell)
            except (ValueError, RecursionError):
                parsed = None
            if isinstance(parsed, dict):
                return parsed
        return entities_or_empty(cell)


def _texts(df: pd.DataFrame, column: str, default: Any = "") -> list[Any]:
    """The cells of ``column`` as text (``default`` for a missing cell or column)."""
    if column not in df.columns:
        return [default] * len(df)
    return [v if type(v) is str else default if v is None or v is pd.NA or (isinstance(v, float) and v != v)
            else str(v) for v in df[column].tolist()]


def rows_of(df: pd.DataFrame, split: str = "test") -> list[Row]:
    """One :class:`Row` per row of ``df``, in frame order: the one place a frame's row columns are
    read into per-row objects. Takes ingest's columns where the frame has them (``split``, ``uid``,
    ``output_type``, ``entities``), else the upstream ones (``Row Number``, ``Output Type``,
    ``Relevant Entities``; the split is ``split``). A column the frame lacks reads as empty
    (note and question: ``None``)."""
    n = len(df)
    splits = _texts(df, "split") if "split" in df.columns else [split] * n
    uids = [int(u) for u in df["uid" if "uid" in df.columns else "Row Number"].tolist()]
    otypes = [t.strip() for t in _texts(df, "output_type" if "output_type" in df.columns else "Output Type")]
    ents_col = "entities" if "entities" in df.columns else "Relevant Entities"
    ents = df[ents_col].tolist() if ents_col in df.columns else [None] * n
    as_json = ents_col == "entities"
    calcs = _texts(df, "Calculator ID" if "Calculator ID" in df.columns else "calculator_id")
    cols = zip(splits, uids, [c.strip() for c in calcs], _texts(df, "Calculator Name"), otypes,
               _texts(df, "Patient Note", None), _texts(df, "Question", None),
               [i.strip() for i in _texts(df, "Note ID")], _texts(df, "Ground Truth Answer"),
               _texts(df, "Lower Limit"), _texts(df, "Upper Limit"), _texts(df, "Ground Truth Explanation"), ents)
    return [Row(s, u, c, name, t, note, q, nid, label, lo, hi, expl, e, as_json)
            for s, u, c, name, t, note, q, nid, label, lo, hi, expl, e in cols]
