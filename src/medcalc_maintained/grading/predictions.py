"""Reading a model's predictions for ``evaluate``: JSON Lines or CSV, one prediction per uid.

* JSONL (any suffix but ``.csv``): one object per line, ``{"uid": <int>, "output": <string>}``;
  ``"answer"`` may stand for ``"output"``. A JSON number is read as its text; a non-finite JSON
  number (``NaN``, ``Infinity``) becomes the text ``NaN`` / ``Infinity``, which grading reads as
  unparsable (never an abstention, see :func:`medcalc_maintained.core.answers.parse_model_answer`).
* CSV (``.csv``): a header with ``uid`` and ``output`` (or ``answer``); every cell is text.

A line (JSONL) or a field (CSV) longer than ``max_line_bytes`` is refused with a
:class:`DataError` naming file and line, before the rest of it is read: predictions are never
that long, and a hostile line must not exhaust memory or time. Every other problem (a missing
key, a uid that is no integer, a repeated uid, an empty file) is refused the same way.
"""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path

from medcalc_maintained.core.errors import DataError, shown
from medcalc_maintained.core.readers import read_jsonl

SHAPE = '{"uid": <int>, "output": <string>}'
OUTPUT_KEYS = ("output", "answer")


def _output_key(keys, where: str) -> str:
    for key in OUTPUT_KEYS:
        if key in keys:
            return key
    raise DataError(where, "missing key 'output'; each prediction needs \"uid\" and \"output\" (or \"answer\")")


def _output_text(output, where: str) -> str:
    if isinstance(output, bool) or not isinstance(output, (str, int, float)):
        raise DataError(where, f"output must be a string (use \"\" for no answer), got {shown(output)}")
    if isinstance(output, float) and not math.isfinite(output):
        return "NaN" if math.isnan(output) else ("Infinity" if output > 0 else "-Infinity")
    return output if isinstance(output, str) else json.dumps(output)


def _add(out: dict[int, str], first: dict[int, int], uid: int, output: str, n: int, where: str) -> None:
    if uid in out:
        raise DataError(where, f"uid {uid} repeats line {first[uid]}; one prediction per uid")
    out[uid] = output
    first[uid] = n


def _read_jsonl(path: Path, max_line_bytes: int | None) -> tuple[dict[int, str], dict[int, int]]:
    out: dict[int, str] = {}
    first: dict[int, int] = {}
    for n, rec in read_jsonl(path, "predictions", SHAPE, max_line_bytes=max_line_bytes):
        where = f"{path}, line {n}"
        if "uid" not in rec:
            raise DataError(where, "missing key 'uid'; each line needs \"uid\" and \"output\"")
        key = _output_key(rec, where)
        uid = rec["uid"]
        if isinstance(uid, bool) or not isinstance(uid, int):
            raise DataError(where, f"uid must be a JSON integer, got {shown(uid)}")
        _add(out, first, uid, _output_text(rec[key], where), n, where)
    return out, first


def _read_csv(path: Path, max_line_bytes: int | None) -> tuple[dict[int, str], dict[int, int]]:
    out: dict[int, str] = {}
    first: dict[int, int] = {}
    limit = csv.field_size_limit()
    csv.field_size_limit(max_line_bytes if max_line_bytes is not None else limit)
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            try:
                header = reader.fieldnames or []
                if "uid" not in header:
                    raise DataError(f"{path}, line 1", f"header {header} has no 'uid' column; expected uid and output")
                key = _output_key(header, f"{path}, line 1")
                for rec in reader:
                    n = reader.line_num
                    where = f"{path}, line {n}"
                    text = (rec.get("uid") or "").strip()
                    if not text.lstrip("-").isdigit():
                        raise DataError(where, f"uid must be an integer, got {shown(rec.get('uid'))}")
                    _add(out, first, int(text), rec.get(key) or "", n, where)
            except csv.Error as exc:
                raise DataError(f"{path}, line {reader.line_num + 1}",
                                f"not readable CSV ({exc}); a field may hold at most {max_line_bytes} bytes") from exc
            except UnicodeDecodeError as exc:
                raise DataError(path, f"not UTF-8 text ({exc.reason})") from exc
    finally:
        csv.field_size_limit(limit)
    return out, first


def read_predictions_lines(path: os.PathLike | str, *, max_line_bytes: int | None = None,
                           as_csv: bool | None = None) -> dict[int, tuple[str, int]]:
    """``{uid: (output, line number)}`` from a predictions file (CSV by its ``.csv`` suffix, or
    ``as_csv``); the line numbers let a later check name the line of a uid."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "predictions file not found")
    as_csv = path.suffix.lower() == ".csv" if as_csv is None else as_csv
    out, first = _read_csv(path, max_line_bytes) if as_csv else _read_jsonl(path, max_line_bytes)
    if not out:
        raise DataError(path, "no predictions in the file")
    return {uid: (output, first[uid]) for uid, output in out.items()}


def read_predictions(path: os.PathLike | str, *, max_line_bytes: int | None = None) -> dict[int, str]:
    """``{uid: output}`` from a predictions file (JSONL, or CSV by its ``.csv`` suffix)."""
    return {uid: output for uid, (output, _) in read_predictions_lines(path, max_line_bytes=max_line_bytes).items()}
