"""Ledger records: the one reader and writer of correction records (files, schema, ids).

A ledger file is YAML::

    batch:                      # optional metadata about the batch
      name: contributor-2026-01
      description: ...
    corrections:
      - id: C-0001
        uid: 328
        split: test
        old_value: "4.4"
        new_value: N/A
        decision: accepted
        label_status: abstain
        error_type: unanswerable
        rationale: The patient is a 1.1 kg cat; the heuristic is for humans.
        evidence: [row 328 patient note]
        source: physician
        reviewer: {id: md-07, role: physician, specialty: pediatrics}
        blinded: true
        decided_at: 2026-01-15

Every record is checked against ``schemas/correction.schema.json`` (structure, enums) and then
against the instances it applies to (uid exists, values parse for the output type, ``old_value`` is
the label at that point, status matches the values, at most one accepted record per row and
release: :mod:`medcalc_maintained.ledger.apply`). All problems are collected and reported with the file, the record and the field; when
there is any, nothing is applied.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import jsonschema
import pandas as pd
import yaml

from medcalc_maintained.core.errors import DataError, ProblemsError, located
from medcalc_maintained.core.labels import RECORD_STATUSES
from medcalc_maintained.core.ledger_files import ledger_files
from medcalc_maintained.core.readers import read_text_bounded
from medcalc_maintained.core.versions import UNRELEASED
from medcalc_maintained.core.yaml_text import YAML_MAX_BYTES, dump_yaml, load_yaml

DECISIONS = ("accepted", "rejected", "deferred", "disputed")
STATUSES = RECORD_STATUSES
ERROR_TYPES = ("extraction", "aggregation", "unanswerable", "underspecified", "other")
SOURCES = ("pipeline", "physician", "contributor", "policy")


@dataclass
class LedgerProblem:
    path: str
    problem: str
    record: str | None = None  # record id or "#index"
    field: str | None = None

    def __str__(self) -> str:
        field = repr(self.field) if self.field else None
        return f"{located(self.path, ('record', self.record), ('field', field))}: {self.problem}"


class LedgerError(ProblemsError):
    """One or more ledger problems; ``problems`` lists them all."""

    def __init__(self, problems: list[LedgerProblem]):
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(problems, f"{problems[0].problem}{more}")


@dataclass
class Record:
    data: dict[str, Any]
    path: str
    index: int
    valid: bool = True  # passed the JSON Schema

    @property
    def id(self) -> str:
        return str(self.data.get("id", f"#{self.index}"))

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)

    @property
    def release(self) -> str:
        return str(self.data.get("release") or UNRELEASED)


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    text = resources.files("medcalc_maintained.schemas").joinpath("correction.schema.json").read_text("utf-8")
    return json.loads(text)


def _yaml_safe(value: Any) -> Any:
    """YAML turns ``2026-01-15`` into a date; the schema wants text."""
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _yaml_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_yaml_safe(v) for v in value]
    return value


def _field_of(error: jsonschema.ValidationError) -> str:
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        m = re.search(r"'([^']+)' is a required property", error.message)
        if m:
            path.append(m.group(1))
    if error.validator == "additionalProperties":
        m = re.search(r"\('([^']+)'", error.message)
        if m:
            path.append(m.group(1))
    return ".".join(path) or "<record>"


# Control characters (C0 but tab, newline and carriage return; DEL; C1) are refused in every text of a
# record: an escape sequence in a rationale would otherwise reach CHANGELOG.md, the card, the tables
# and the terminals that print them. YAML carries them only as escapes in quoted strings (``"\e"``).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_CONTROL_NAMES = {0x00: "NUL", 0x07: "BEL", 0x08: "BS", 0x0B: "VT", 0x0C: "FF", 0x1B: "ESC", 0x7F: "DEL"}


def _control_characters(value: Any, field: str = "") -> Iterator[tuple[str, str]]:
    """``(field, character shown as U+XXXX (NAME))`` for the first control character of every text
    in ``value`` (keys included), fields dotted as in the schema messages (``evidence.1``)."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for k, v in items:
        name = f"{field}.{k}" if field else str(k)
        for text in (k, v) if isinstance(value, dict) else (v,):
            m = _CONTROL.search(text) if isinstance(text, str) else None
            if m:
                code = ord(m.group())
                label = f" ({_CONTROL_NAMES[code]})" if code in _CONTROL_NAMES else ""
                yield name, f"U+{code:04X}{label} at character {m.start() + 1}"
        yield from _control_characters(v, name)


def read_file(path: Path) -> tuple[list[Record], list[LedgerProblem]]:
    """Parse one ledger YAML file and check each record against the JSON Schema. Bytes read before
    (the same file once per release by ``release-tables``, or a copy of it elsewhere) are not parsed
    again: the caller gets a fresh copy of the first reading's records and problems, naming ``path``."""
    path = Path(path)
    size = path.stat().st_size
    if size > YAML_MAX_BYTES:
        return [], [LedgerProblem(str(path), f"{size} bytes, over the {YAML_MAX_BYTES}-byte limit for a ledger file; "
                                             "split it")]
    records, problems = copy.deepcopy(_parsed(path.read_bytes()))
    for record in records:
        record.path = str(path)
    for problem in problems:
        problem.path = str(path)
    return records, problems


_UNNAMED = "<ledger file>"  # the path of a cached reading; read_file puts the real one in its copies


@lru_cache(maxsize=16)
def _parsed(content: bytes) -> tuple[list[Record], list[LedgerProblem]]:
    """:func:`_read_text`, remembered by the bytes alone (shared: :func:`read_file` hands out copies)."""
    return _read_text(Path(_UNNAMED), content)


def _read_text(path: Path, content: bytes) -> tuple[list[Record], list[LedgerProblem]]:
    """:func:`read_file` of ``content``, the bytes of ``path`` (line ends read as ``Path.read_text`` does)."""
    problems: list[LedgerProblem] = []
    try:
        doc = load_yaml(content.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n"), where=str(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = str(getattr(exc, "problem", None) or exc)[:300]
        return [], [LedgerProblem(str(path), f"malformed YAML{where}: {problem}")]
    except UnicodeDecodeError:
        return [], [LedgerProblem(str(path), "file is not UTF-8 text")]
    if doc is None:
        return [], []
    if not isinstance(doc, dict) or not isinstance(doc.get("corrections", []), list):
        return [], [LedgerProblem(str(path), "expected a mapping with a 'corrections' list", field="corrections")]
    validator = jsonschema.Draft202012Validator(schema())
    records = []
    for i, raw in enumerate(doc.get("corrections") or []):
        if not isinstance(raw, dict):
            problems.append(LedgerProblem(str(path), "a correction must be a mapping", record=f"#{i}"))
            continue
        data = _yaml_safe(raw)
        rec = Record(data, str(path), i)
        for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
            problems.append(LedgerProblem(str(path), err.message, record=rec.id, field=_field_of(err)))
            rec.valid = False
        for field, char in _control_characters(data):
            problems.append(LedgerProblem(str(path), f"control character {char}; text in a record may hold tabs and "
                                          "line breaks only", record=f"#{i}" if _CONTROL.search(rec.id) else rec.id,
                                          field=field))
            rec.valid = False
        records.append(rec)
    return records, problems


DERIVATION_FIELDS = ("inputs", "definition", "justification")
INPUTS_MAX_BYTES = 1 << 20  # an inputs file (`ledger derive --inputs`) is a few KB; refused unread above this


def read_derivation_file(path: Path, locate: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """The ``inputs``, ``definition`` and ``justification`` of a derivation file (``ledger derive
    --inputs``), read as a ledger file is (strict YAML, no control characters) and checked against
    the record schema's fields: a :class:`DataError` naming the file and the line or field of the
    first problem (its size is checked before a byte is read). ``locate``, when given, turns the file's
    ``inputs`` before they are checked (``propose`` and ``ledger derive`` pass
    :func:`medcalc_maintained.ledger.quotes.locate_inputs`: an evidence given as text only gets its
    offsets in the row's note)."""
    text = read_text_bounded(path, INPUTS_MAX_BYTES, "inputs file")
    try:
        doc = load_yaml(text.replace("\r\n", "\n").replace("\r", "\n"), where=str(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise DataError(path, f"malformed YAML{where}: {str(getattr(exc, 'problem', None) or exc)[:300]}") from None
    doc = {} if doc is None else doc
    if not isinstance(doc, dict):
        raise DataError(path, "expected a mapping with an 'inputs' list", field="inputs")
    data = _yaml_safe({k: v for k, v in doc.items() if k in DERIVATION_FIELDS})
    if locate is not None and "inputs" in data:
        data["inputs"] = locate(data["inputs"])
    props = schema()["properties"]
    sub = {"type": "object", "properties": {k: props[k] for k in DERIVATION_FIELDS}}
    for err in sorted(jsonschema.Draft202012Validator(sub).iter_errors(data), key=lambda e: list(e.absolute_path)):
        raise DataError(path, err.message[:300], field=_field_of(err))
    for field, char in _control_characters(data):
        raise DataError(path, f"control character {char}; text may hold tabs and line breaks only", field=field)
    return data


def collect(paths: Iterable[Path]) -> tuple[list[Record], list[LedgerProblem]]:
    """Every record of the given ledger files/directories and every file-level problem
    (malformed YAML, schema violations, duplicate ids), without raising."""
    records: list[Record] = []
    problems: list[LedgerProblem] = []
    for f in ledger_files(paths):
        recs, probs = read_file(f)
        records.extend(recs)
        problems.extend(probs)
    first_seen: dict[str, Record] = {}
    for rec in records:
        if "id" not in rec.data:
            continue
        if rec.id in first_seen:
            other = first_seen[rec.id]
            problems.append(LedgerProblem(rec.path, f"id {rec.id!r} is already used in {other.path} (ids are never reused)",
                                          record=rec.id, field="id"))
        else:
            first_seen[rec.id] = rec
    return records, problems


def load(paths: Iterable[Path]) -> list[Record]:
    """Read and schema-check every record; raises :class:`LedgerError` listing every problem."""
    records, problems = collect(paths)
    if problems:
        raise LedgerError(problems)
    return records


def records_frame(records: list[Record]) -> pd.DataFrame:
    """The records as a flat table (reviewer and proposer fields spread into columns), in ledger order."""
    rows = []
    for r in records:
        d = dict(r.data)
        rev = d.pop("reviewer", {}) or {}
        prop = d.pop("proposed_by", {}) or {}
        ev = d.get("evidence")
        d["evidence"] = "\n".join(ev) if isinstance(ev, list) else (ev or "")
        d.update({"reviewer_id": rev.get("id"), "reviewer_role": rev.get("role"), "reviewer_specialty": rev.get("specialty"),
                  "proposed_by_id": prop.get("id"), "proposed_by_role": prop.get("role"),
                  "proposed_by_specialty": prop.get("specialty"), "release": r.release, "file": r.path})
        rows.append(d)
    return pd.DataFrame(rows)


def state_change_severity(rec: dict[str, Any], calculator_id: Any, output_type: str, entities: Any = None) -> dict[str, Any]:
    """Set a new record's ``change_severity`` to the level of its ``old_value`` -> ``new_value``
    (:func:`medcalc_maintained.calculators.severity.record_level`); left out when the level cannot be
    worked out (apply then derives nothing). Returns ``rec``."""
    from medcalc_maintained.calculators.severity import record_level

    level = record_level(calculator_id, rec["old_value"], rec["new_value"], output_type, entities)
    if level is not None:
        rec["change_severity"] = level
    return rec


def dump(records: list[dict[str, Any]], path: Path, batch: dict[str, Any] | None = None, header: str = "") -> str:
    """YAML text of a ledger file (``header`` becomes leading comment lines)."""
    doc: dict[str, Any] = {}
    if batch:
        doc["batch"] = batch
    doc["corrections"] = records
    text = dump_yaml(doc, sort_keys=False, allow_unicode=True, width=100)
    if header:
        text = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines()) + text
    return text


def append(text: str, new: list[dict[str, Any]], path: Path) -> str:
    """``text`` of an existing ledger file with ``new`` records appended to its ``corrections`` list,
    every other line (comments included) kept as it is. Raises :class:`DataError` naming ``path`` when
    the list cannot be extended in place (e.g. ``corrections`` is not the file's last block list)."""
    lines = text.splitlines()
    top = [i for i, line in enumerate(lines) if re.match(r"corrections\s*:", line)]
    if len(top) != 1:
        raise DataError(path, "has no top-level 'corrections:' key to append to", field="corrections")
    head = lines[top[0]]
    rest = re.sub(r"^corrections\s*:\s*", "", head)
    if rest.split("#")[0].strip() in ("[]", "null", "~"):
        lines[top[0]] = "corrections:" + (f"  {rest[rest.index('#'):]}" if "#" in rest else "")
    item = next((m.group(1) for line in lines[top[0] + 1:] if (m := re.match(r"^(\s*)- ", line))), "")
    block = dump_yaml(new, sort_keys=False, allow_unicode=True, width=100)
    block = "".join(item + line + "\n" if line else "\n" for line in block.splitlines())
    out = "\n".join(lines).rstrip("\n") + "\n" + block
    try:
        before = (load_yaml(text) or {}).get("corrections") or []
        after = load_yaml(out)
    except (yaml.YAMLError, AttributeError):
        after = None
    if not isinstance(after, dict) or after.get("corrections") != list(before) + _yaml_dates(new):
        raise DataError(path, "the new record cannot be appended without rewriting the file (is 'corrections' its "
                              "last key, a block list?); append it by hand or use another --file", field="corrections")
    return out


def _yaml_dates(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``records`` as they read back from YAML (ISO date text becomes a date)."""
    return load_yaml(dump_yaml(records, sort_keys=False, allow_unicode=True))
