"""Stage ``ingest``: upstream MedCalc-Bench CSV files -> typed ``instances.parquet``.

Every upstream column is kept verbatim (as text) and typed columns are added:

``uid``            int, from ``Row Number`` (unique within a split)
``split``          the split name (``test``, ``train``)
``calculator_id``  int, from ``Calculator ID``
``output_type``    ``decimal`` | ``integer`` | ``date``
``entities``       JSON text of ``Relevant Entities`` (:func:`~medcalc_maintained.core.rows.parse_entities`)
``gt_kind``        kind of the parsed ground truth (see :mod:`medcalc_maintained.core.answers`)
``gt_value``       its number (days for gestational age; null for dates)
``gt_date``        its ISO date (dates only)
``instance_key``   the stable content id of the row (:func:`~medcalc_maintained.upstream.identity.instance_keys`:
                   calculator + note + question fingerprints, independent of ``Row Number``)

Rows that cannot be parsed go to ``quarantine.csv`` (``split``, ``row_number``, ``column``,
``reason``). Structural problems of a file raise :class:`~medcalc_maintained.core.errors.DataError` before
anything is written.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from medcalc_maintained.core.answers import OUTPUT_TYPES, parse_answer
from medcalc_maintained.core.atomic import write_atomic
from medcalc_maintained.core.csv_for_people import write_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import UPSTREAM_COLUMNS, parse_entities, read_upstream_csv
from medcalc_maintained.project import Project
from medcalc_maintained.upstream.identity import instance_keys

TYPED_COLUMNS = ["uid", "split", "calculator_id", "output_type", "entities", "gt_kind", "gt_value", "gt_date"]
QUARANTINE_COLUMNS = ["split", "row_number", "column", "reason"]


@dataclass
class IngestResult:
    instances: pd.DataFrame
    quarantine: pd.DataFrame
    files: list[tuple[str, Path, int]]  # (split, path, rows read)


def _type_rows(df: pd.DataFrame, split: str) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    typed: dict[str, list[Any]] = {c: [] for c in TYPED_COLUMNS}
    keep: list[bool] = []
    quarantine: list[dict[str, Any]] = []
    for rec in df.to_dict("records"):
        rn = int(rec["Row Number"])
        problems: list[tuple[str, str]] = []
        try:
            calc_id = int(rec["Calculator ID"])
        except ValueError:
            calc_id = None
            problems.append(("Calculator ID", f"not an integer: {rec['Calculator ID']!r}"))
        otype = rec["Output Type"].strip()
        if otype not in OUTPUT_TYPES:
            problems.append(("Output Type", f"{otype!r} not in {', '.join(OUTPUT_TYPES)}"))
        entities = None
        try:
            entities = json.dumps(parse_entities(rec["Relevant Entities"]), ensure_ascii=False, sort_keys=False)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            problems.append(("Relevant Entities", f"not a Python-literal dict: {exc}"))
        gt = None
        if otype in OUTPUT_TYPES:
            for col in ("Ground Truth Answer", "Lower Limit", "Upper Limit"):
                a = parse_answer(rec[col], otype)
                if a.kind == "invalid":
                    problems.append((col, f"cannot parse {rec[col]!r} as {otype}: {a.reason}"))
                elif a.kind == "abstain" and rec[col].strip() == "":
                    problems.append((col, "empty"))
                if col == "Ground Truth Answer":
                    gt = a
        for column, reason in problems:
            quarantine.append({"split": split, "row_number": rn, "column": column, "reason": reason})
        keep.append(not problems)
        if problems or gt is None:  # no Ground Truth Answer parsed: a problem was noted
            continue
        typed["uid"].append(rn)
        typed["split"].append(split)
        typed["calculator_id"].append(calc_id)
        typed["output_type"].append(otype)
        typed["entities"].append(entities)
        typed["gt_kind"].append(gt.kind)
        typed["gt_value"].append(gt.number if gt.is_number else None)
        typed["gt_date"].append(gt.value.isoformat() if isinstance(gt.value, dt.date) else None)
    good = df.loc[keep].reset_index(drop=True)
    out = pd.concat([good, pd.DataFrame(typed)], axis=1)
    return out, quarantine


def ingest(sources: Iterable[tuple[str, Path]]) -> IngestResult:
    """Read and type each ``(split, path)``; raises :class:`DataError` on a structural problem."""
    frames, quarantine, files = [], [], []
    seen = set()
    for split, path in sources:
        if split in seen:
            raise DataError(path, f"split {split!r} given twice")
        seen.add(split)
        df = read_upstream_csv(path)
        typed, q = _type_rows(df, split)
        keys = dict(zip(df["Row Number"], instance_keys(df)))  # over the whole file: duplicates get suffixes
        typed["instance_key"] = typed["Row Number"].map(keys)
        frames.append(typed)
        quarantine.extend(q)
        files.append((split, Path(path), len(df)))
    if not frames:
        raise DataError("params.yaml", "no upstream file to ingest")
    instances = pd.concat(frames, ignore_index=True)
    instances = instances.astype({"uid": "int64", "calculator_id": "int64", "gt_value": "float64"})
    for c in ("split", "output_type", "entities", "gt_kind", "gt_date", "instance_key", *UPSTREAM_COLUMNS):
        instances[c] = instances[c].astype("string")
    qdf = pd.DataFrame(quarantine, columns=QUARANTINE_COLUMNS)
    return IngestResult(instances, qdf, files)


def write_outputs(result: IngestResult, out_dir: Path, *, write_instances: bool = True) -> None:
    """Write ``quarantine.csv`` and (unless told not to) ``instances.parquet`` atomically."""
    out_dir = Path(out_dir)
    write_csv_for_people(out_dir / "quarantine.csv", result.quarantine)
    if write_instances:
        write_atomic(out_dir / "instances.parquet", lambda p: result.instances.to_parquet(p, index=False))


@dataclass
class IngestRun:
    result: IngestResult
    written: list[Path]
    notes: list[str]
    limit: int

    @property
    def too_many(self) -> bool:
        return len(self.result.quarantine) > self.limit


def sources(project: Project) -> tuple[list[tuple[str, Path]], list[str]]:
    """``(split, path)`` of every split of ``upstream.splits``, and notes on optional splits left out."""
    out, notes = [], []
    for name, path, required in project.upstream_sources():
        if not path.exists() and not required:
            notes.append(f"split {name!r}: {path} is absent (optional), skipped")
            continue
        out.append((name, path))
    return out, notes


def run(project: Project, *, files: list[tuple[str, Path]] | None = None, out_dir: Path | None = None,
        max_quarantine: int | None = None) -> IngestRun:
    """Ingest the upstream splits (or ``files``) into ``ingest.out``. ``instances.parquet`` is not
    written when more than ``ingest.max_quarantine`` rows are quarantined (the caller fails then)."""
    chosen, notes = (files, []) if files is not None else sources(project)
    out_dir = Path(out_dir) if out_dir is not None else project.instances.parent
    limit = project.param("ingest.max_quarantine") if max_quarantine is None else max_quarantine
    result = ingest(chosen)
    run = IngestRun(result, [], notes, int(limit))
    write_outputs(result, out_dir, write_instances=not run.too_many)
    run.written = [out_dir / "quarantine.csv"] + ([] if run.too_many else [out_dir / "instances.parquet"])
    return run
