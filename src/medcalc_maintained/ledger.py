"""The corrections ledger: the one reader of correction records, their checks, and their application.

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
release). All problems are collected and reported with the file, the record and the field; when
there is any, nothing is applied.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Iterator

import jsonschema
import pandas as pd
import yaml

from medcalc_maintained.answers import NA, format_answer, labels_agree, limits, parse_answer, same_value
from medcalc_maintained.io import DataError

DECISIONS = ("accepted", "rejected", "deferred")
STATUSES = ("corrected", "abstain", "confirmed")
ERROR_TYPES = ("extraction", "aggregation", "unanswerable", "underspecified", "other")
SOURCES = ("pipeline", "physician", "contributor")
MAINTAINED_COLUMNS = ["Label Status", "Original Ground Truth Answer", "Label Source", "Correction IDs", "Error Type"]
UNRELEASED = "unreleased"


@dataclass
class LedgerProblem:
    path: str
    problem: str
    record: str | None = None  # record id or "#index"
    field: str | None = None

    def __str__(self) -> str:
        where = self.path
        if self.record:
            where += f", record {self.record}"
        if self.field:
            where += f", field {self.field!r}"
        return f"{where}: {self.problem}"


class LedgerError(DataError):
    """One or more ledger problems; ``problems`` lists them all."""

    def __init__(self, problems: list[LedgerProblem]):
        self.problems = problems
        first = problems[0]
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        super().__init__(first.path, f"{first.problem}{more}", row=None, field=first.field)
        self.args = ("\n".join(str(p) for p in problems),)

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


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


def read_file(path: Path) -> tuple[list[Record], list[LedgerProblem]]:
    """Parse one ledger YAML file and check each record against the JSON Schema."""
    path = Path(path)
    problems: list[LedgerProblem] = []
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        return [], [LedgerProblem(str(path), f"malformed YAML{where}: {getattr(exc, 'problem', exc)}")]
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
        records.append(rec)
    return records, problems


def ledger_files(paths: Iterable[Path]) -> list[Path]:
    """YAML files of the given files and directories, sorted by name within a directory."""
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


def _release_key(release: str) -> tuple:
    if release == UNRELEASED:
        return (1, ())
    return (0, tuple(int(p) for p in release.split(".")))


def label_style(row: pd.Series | dict) -> str | None:
    """How labels of this row are written: gestational age keeps v1.0's ``('W weeks', 'D days')``."""
    original = row.get("Original Ground Truth Answer", row.get("Ground Truth Answer"))
    kind = parse_answer(original, row["Output Type"]).kind
    return "gestational_age" if kind == "gestational_age" else None


def normalise(value: Any, output_type: str, style: str | None) -> str:
    return format_answer(value, output_type, style)


@dataclass
class Step:
    """One accepted record replayed over the labels (see :func:`replay`)."""

    pos: int                   # the caller's position of the record
    key: tuple[str, int]       # (split, uid)
    base: str                  # the row's label before this record
    first_in_release: bool     # no earlier accepted record for this row in the same release
    first_pos: int             # position of the first accepted record of this row and release
    matches_base: bool         # old_value denotes the base label
    applied: bool              # the label moved to new_value


def replay(entries: Iterable[tuple[int, tuple[str, int], str, Any, Any]], labels: dict[tuple[str, int], str],
           otypes: dict[tuple[str, int], str]) -> Iterator[Step]:
    """Replay accepted records over ``labels`` (modified in place), in the order given.

    ``entries`` are ``(pos, (split, uid), release, old_value, new_value)`` sorted by release and
    then ledger order. A record applies when it is the first accepted one of its row in its
    release, its ``old_value`` is the label at that point (its base) and its ``new_value`` parses.
    Rows that do not exist are skipped. The one definition of "the label at the base release",
    used by :func:`check_and_apply` and by the ledger contract.
    """
    first: dict[tuple[str, int, str], int] = {}
    for pos, key, release, old, new in entries:
        if key not in labels:
            continue
        otype = otypes[key]
        base = labels[key]
        slot = (*key, release)
        is_first = slot not in first
        first.setdefault(slot, pos)
        matches = same_value(str(old), base, otype)
        applied = is_first and matches and parse_answer(str(new), otype).is_valid
        if applied:
            labels[key] = str(new)
        yield Step(pos, key, base, is_first, first[slot], matches, applied)


def check_and_apply(instances: pd.DataFrame, records: list[Record], *, upto: str | None = None,
                    prior: list[LedgerProblem] | None = None) -> pd.DataFrame:
    """Apply accepted records, in release order, to upstream ``instances``; return maintained rows.

    ``upto`` limits application to records of releases <= ``upto`` (``None`` = all, including
    unreleased records). Raises :class:`LedgerError` with every problem found; nothing is returned
    partially.
    """
    df = instances.copy()
    keep = [c for c in df.columns if c not in MAINTAINED_COLUMNS]
    df = df[keep].copy()
    df["Original Ground Truth Answer"] = df["Ground Truth Answer"].astype("string")
    df["Label Status"] = "unverified"
    df["Label Source"] = "upstream"
    df["Correction IDs"] = ""
    df["Error Type"] = ""
    index = {(str(s), int(u)): i for i, (s, u) in enumerate(zip(df["split"], df["uid"]))}
    problems: list[LedgerProblem] = list(prior or [])
    records = [r for r in records if r.valid]
    labels = df["Ground Truth Answer"].astype(str).tolist()
    status = df["Label Status"].tolist()
    source = df["Label Source"].tolist()
    ids = [[] for _ in range(len(df))]
    etype = df["Error Type"].tolist()
    otypes = df["Output Type"].astype(str).tolist()
    styles = [label_style({"Ground Truth Answer": labels[i], "Output Type": otypes[i]}) for i in range(len(df))]

    selected = [r for r in records if upto is None or (r.release != UNRELEASED and _release_key(r.release) <= _release_key(upto))]
    # structural checks on every record (also rejected/deferred ones)
    for rec in selected:
        key = (rec["split"], int(rec["uid"]))
        if key not in index:
            problems.append(LedgerProblem(rec.path, f"uid {key[1]} does not exist in split {key[0]!r}", rec.id, "uid"))
            continue
        i = index[key]
        otype = otypes[i]
        for fld in ("old_value", "new_value"):
            a = parse_answer(rec[fld], otype)
            if a.kind == "invalid":
                problems.append(LedgerProblem(rec.path, f"{rec[fld]!r} is not a valid {otype} answer ({a.reason})", rec.id, fld))
        new = parse_answer(rec["new_value"], otype)
        st = rec["label_status"]
        if st == "abstain" and not new.is_abstain:
            problems.append(LedgerProblem(rec.path, "label_status 'abstain' needs new_value N/A", rec.id, "label_status"))
        if st != "abstain" and new.is_abstain:
            problems.append(LedgerProblem(rec.path, f"new_value N/A needs label_status 'abstain', not {st!r}", rec.id, "label_status"))
        if st in ("corrected", "confirmed") and not new.is_abstain and parse_answer(rec["old_value"], otype).is_valid and new.is_valid:
            agree = labels_agree(rec["new_value"], rec["old_value"], otype)
            if st == "confirmed" and not agree:
                problems.append(LedgerProblem(rec.path, "label_status 'confirmed' but new_value differs from old_value", rec.id, "label_status"))
            if st == "corrected" and agree:
                problems.append(LedgerProblem(rec.path, "label_status 'corrected' but new_value agrees with old_value", rec.id, "label_status"))

    accepted = sorted((r for r in selected if r["decision"] == "accepted"), key=lambda r: (_release_key(r.release), r.path, r.index))
    current = {key: labels[i] for key, i in index.items()}
    row_types = {key: otypes[i] for key, i in index.items()}
    entries = ((n, (r["split"], int(r["uid"])), r.release, r["old_value"], r["new_value"]) for n, r in enumerate(accepted))
    for step in replay(entries, current, row_types):
        rec = accepted[step.pos]
        if not step.first_in_release:
            other = accepted[step.first_pos]
            problems.append(LedgerProblem(
                rec.path, f"second accepted record for {step.key[0]} uid {step.key[1]} in release {rec.release} "
                          f"(first: {other.id} in {other.path})", rec.id, "decision"))
            continue
        if not step.matches_base:
            problems.append(LedgerProblem(
                rec.path, f"old_value {rec['old_value']!r} does not match the current label {step.base!r}", rec.id, "old_value"))
            continue
        if not step.applied:
            continue
        i = index[step.key]
        labels[i] = normalise(rec["new_value"], otypes[i], styles[i])
        status[i] = rec["label_status"]
        source[i] = rec["source"]
        ids[i].append(rec.id)
        etype[i] = rec.get("error_type") or ""
    if problems:
        raise LedgerError(problems)

    lows, highs = [], []
    for lab, otype, style in zip(labels, otypes, styles):
        lo, hi = limits(lab, otype, style)
        lows.append(lo)
        highs.append(hi)
    df["Ground Truth Answer"] = pd.array(labels, dtype="string")
    df["Lower Limit"] = pd.array(lows, dtype="string")
    df["Upper Limit"] = pd.array(highs, dtype="string")
    df["Label Status"] = pd.array(status, dtype="string")
    df["Label Source"] = pd.array(source, dtype="string")
    df["Correction IDs"] = pd.array([";".join(x) for x in ids], dtype="string")
    df["Error Type"] = pd.array(etype, dtype="string")
    return df


def records_frame(records: list[Record]) -> pd.DataFrame:
    """The records as a flat table (reviewer fields spread into columns), in ledger order."""
    rows = []
    for r in records:
        d = dict(r.data)
        rev = d.pop("reviewer", {}) or {}
        ev = d.get("evidence")
        d["evidence"] = "\n".join(ev) if isinstance(ev, list) else (ev or "")
        d.update({"reviewer_id": rev.get("id"), "reviewer_role": rev.get("role"), "reviewer_specialty": rev.get("specialty"),
                  "release": r.release, "file": r.path})
        rows.append(d)
    return pd.DataFrame(rows)


def dump(records: list[dict[str, Any]], path: Path, batch: dict[str, Any] | None = None, header: str = "") -> str:
    """YAML text of a ledger file (``header`` becomes leading comment lines)."""
    doc: dict[str, Any] = {}
    if batch:
        doc["batch"] = batch
    doc["corrections"] = records
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    if header:
        text = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines()) + text
    return text


__all__ = [
    "DECISIONS", "ERROR_TYPES", "SOURCES", "STATUSES", "LedgerError", "LedgerProblem", "Record",
    "check_and_apply", "dump", "load", "read_file", "records_frame", "NA",
]
