"""Reading the files a user or an earlier stage gives: a file's size checked before a byte is read,
UTF-8 text within a bound, a JSON-lines file line by line (each line bounded and one JSON object),
a stage's parquet output (naming the stage that makes it when missing), a file's sha256."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.json_text import loads_json


def check_size(path: os.PathLike | str, max_bytes: int, what: str) -> int:
    """The size of a file a user names, refused (:class:`DataError`) when missing, not a regular file or
    over ``max_bytes``, before a byte of it is read."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, f"{what}: no such file")
    size = path.stat().st_size
    if size > max_bytes:
        raise DataError(path, f"{what}: {size} bytes, over the {max_bytes}-byte limit; refused unread")
    return size


def read_text_bounded(path: os.PathLike | str, max_bytes: int, what: str) -> str:
    """The UTF-8 text of a file a user names, refused (:class:`DataError`) when missing, not a
    regular file, over ``max_bytes`` (by its size, before a byte is read) or not UTF-8."""
    path = Path(path)
    check_size(path, max_bytes, what)
    with path.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise DataError(path, f"{what}: over the {max_bytes}-byte limit; refused")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(path, f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def sha256_file(path: os.PathLike | str) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_parquet(path: os.PathLike | str, what: str, stage: str):
    """A required parquet input; when it is missing, the error names the stage that makes it."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise DataError(path, f"{what} not found (run `dvc repro {stage}`, or `medcalc-maintained {stage}`)")
    return pd.read_parquet(path)


def _bounded_lines(path: Path, max_line_bytes: int | None):
    """``(line number, text)`` of a UTF-8 file read line by line; a line over ``max_line_bytes``
    bytes is refused after reading at most one byte more than the limit."""
    with path.open("rb") as fh:
        n = 0
        while True:
            raw = fh.readline(-1 if max_line_bytes is None else max_line_bytes + 2)
            if not raw:
                return
            n += 1
            body = raw.rstrip(b"\r\n")
            if max_line_bytes is not None and len(body) > max_line_bytes:
                raise DataError(f"{path}, line {n}", f"line longer than {max_line_bytes} bytes (the limit of "
                                "one line); nothing was read past it")
            try:
                yield n, body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DataError(f"{path}, line {n}", f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def read_jsonl(path: os.PathLike | str, what: str, shape: str, *, max_line_bytes: int | None = None):
    """``(line number, object)`` for every non-blank line of a JSONL file of ``what``; a
    :class:`DataError` names the file (and line) when it is missing, not UTF-8, not JSON, a line
    is not a JSON object (``shape`` describes the expected object) or, with ``max_line_bytes``,
    a line is longer than that (refused without reading the rest of it). Yields nothing for an
    empty file."""

    path = Path(path)
    if not path.is_file():
        raise DataError(path, f"{what} file not found")
    for n, line in _bounded_lines(path, max_line_bytes):
        if not line.strip():
            continue
        where = f"{path}, line {n}"
        try:
            rec = loads_json(line, where)
        except DataError as exc:
            raise DataError(where, f"{exc.problem}; each line must be one JSON object") from None
        if not isinstance(rec, dict):
            raise DataError(where, f"each line must be a JSON object {shape}")
        yield n, rec
