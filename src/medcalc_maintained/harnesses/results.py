"""Saved results of the harnesses that run MedCalc-Bench, read into one shape for ``regrade``.

Each harness's reader (``harnesses/<name>_harness/reader.py``, named by the harness table
:data:`~medcalc_maintained.harnesses.registry.HARNESSES`) reads one file or run directory into
:class:`Results`: one :class:`ResultRow` per graded row (the model's output, the row's identity as
recorded, the labels the harness graded against and its verdict) and the score the harness
recorded. :class:`Harness` is one row of that table; :func:`read_plain` reads ``evaluate``'s own
predictions (:mod:`medcalc_maintained.grading.predictions`: nothing recorded to reproduce). Every
problem is a :class:`DataError` naming the file (and line, sample or instance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from medcalc_maintained.core.errors import DataError, shown
from medcalc_maintained.core.json_text import loads_json
from medcalc_maintained.core.readers import read_jsonl, read_text_bounded

# the columns a grader reads, as the harnesses record them (harnesses/common.py: LABEL_FIELDS)
GRADING_FIELDS = ("Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type", "Calculator ID", "Category")
# What a run's summary may weigh (verifiers' metadata.json, lm-eval's results_<date>.json), checked
# before a byte is read: json.loads costs up to ~27x a file's size. Measured: verifiers' metadata.json
# 0.8 KB, lm-eval's results_<date>.json 9 KB; a hostile-file bound with headroom, not a tuning knob.
SUMMARY_MAX_BYTES = 16 << 20


@dataclass
class ResultRow:
    """One graded row of a results file, as the harness recorded it."""

    where: str                      # file and line / sample / instance
    output: str                     # the model's output (upstream: its extracted answer)
    uid: int | None = None          # our uid or upstream's Row Number, as recorded
    by: str = "uid"                 # what ``uid`` is: "uid" or "Row Number" (None: only Note ID + Calculator ID)
    calculator_id: str | None = None
    note_id: str | None = None
    note: str | None = None
    question: str | None = None     # the prompt's text after the note, from its question on (with ``note``)
    labels: dict[str, str] = field(default_factory=dict)  # the grading columns the harness recorded
    verdict: bool | None = None     # the harness's own verdict on this row (None: none recorded)


@dataclass
class Results:
    """One results file or run directory, read."""

    path: Path
    format: str
    harness: str                    # how the report names it: "lm-eval", "Inspect", "HELM", ...
    rows: list[ResultRow]
    metric: str | None = None       # the harness's metric, e.g. "acc"
    rule: str | None = None         # the grader of grading/graders.py that is the harness's own rule
    recorded: float | None = None   # the score the harness recorded
    recorded_from: str = ""         # where that score was read
    whole_outputs: bool = True      # False: only an extracted answer is kept (no tag to count)
    extracts: bool = True           # False: the harness graded the whole stripped text (HELM's own metric),
                                    # not the answer our one rule extracts (core/answers.py: graded_answer)
    notes: list[str] = field(default_factory=list)
    model: str | None = None        # the model the results name (EEE's model_id), when they name one


# (results path, the max_line_bytes of a JSON Lines file, the harness's row) -> what it recorded
Reader = Callable[[Path, "int | None", "Harness"], Results]


@dataclass(frozen=True)
class Harness:
    """One row of the harness table: what its saved results look like, who reads them, the rule it
    grades with, the extra it needs and the version its adapter gives its task."""

    name: str                       # --format, and the format regrade.json records
    label: str                      # how the reports name the harness
    reader: Reader
    grader: str | None = None       # its own rule, a grader of grading/graders.py (None: nothing to reproduce)
    extra: str | None = None        # the pyproject.toml extra its adapter and reader import (None: none, or its own venv)
    task_version: int | None = None  # the version its adapter gives its task (None: no task of ours)
    folder: str | None = None       # harnesses/<folder>/: its reader (None: evaluate's own predictions)
    adapters: tuple[str, ...] = ()  # its adapter's modules under harnesses/ (what runs a release in the harness)
    run_files: tuple[str, ...] = ()  # a run directory: the files that make one (the first may be given alone)
    suffixes: tuple[str, ...] = ()  # a results file of one of these endings
    first_line: Callable[[dict[str, Any]], bool] | None = None  # a JSON Lines file whose first line this accepts
    shape: str = ""                 # how a refusal names such results, e.g. "a HELM run (scenario_state.json)"

    def results(self, path: Path, rows: list[ResultRow], **recorded: Any) -> Results:
        """:class:`Results` of this harness (its format, label and rule; ``recorded`` may name another rule)."""
        return Results(path, self.name, self.label, rows, **{"rule": self.grader, **recorded})


def text(value: Any) -> str:
    """A recorded cell as text ('' for missing); integral floats without '.0' (a JSON 3.0 is Row Number 3)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def int_or_none(value: Any, where: str, what: str) -> int | None:
    """A recorded row number as an int; ``None`` when missing; a :class:`DataError` when not an integer."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise DataError(where, f"{what} must be an integer, got {shown(value)}")
    try:
        f = float(str(value).strip())
    except ValueError:
        raise DataError(where, f"{what} must be an integer, got {shown(value)}") from None
    if not f.is_integer():
        raise DataError(where, f"{what} must be an integer, got {shown(value)}")
    return int(f)


def recorded_labels(row: dict[str, Any]) -> dict[str, str]:
    """The grading columns present in a recorded row, as text."""
    return {k: text(row[k]) for k in GRADING_FIELDS if k in row and row[k] is not None}


def row_from_record(rec: dict[str, Any], where: str, output: str, verdict: bool | None) -> ResultRow:
    """A :class:`ResultRow` from a recorded dataset row (``doc``, ``metadata``, ``info``, ``extra_data``):
    its ``uid`` (else ``Row Number``), calculator, note and grading columns."""
    uid, by = (rec.get("uid"), "uid") if rec.get("uid") not in (None, "") else (rec.get("Row Number"), "Row Number")
    return ResultRow(where=where, output=output, uid=int_or_none(uid, where, by), by=by,
                     calculator_id=text(rec.get("Calculator ID")) or None, note_id=text(rec.get("Note ID")) or None,
                     note=rec.get("Patient Note") if isinstance(rec.get("Patient Note"), str) else None,
                     labels=recorded_labels(rec), verdict=verdict)


def verdict_of(value: Any, where: str, metric: str) -> bool:
    """A recorded per-row metric (1/0, 1.0/0.0, true/false) as a verdict; anything else is refused."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value)
    raise DataError(where, f"metric {metric!r} must be 0 or 1 (correct or not), got {shown(value)}")


def json_file(path: Path, what: str, max_bytes: int) -> Any:
    """A JSON file a harness wrote, refused unread when over ``max_bytes``."""
    return loads_json(read_text_bounded(path, max_bytes, what), path, max_depth=64)


def first_record(path: Path, max_line_bytes: int | None) -> dict[str, Any]:
    """The first line of a JSON Lines results file."""
    for _, rec in read_jsonl(path, "results", "{...}", max_line_bytes=max_line_bytes):
        return rec
    raise DataError(path, "no results in the file (it is empty)")


def read_plain(path: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """``evaluate``'s predictions (JSONL or CSV, the harness row ``jsonl`` or ``csv``): the rows, nothing recorded."""
    from medcalc_maintained.grading.predictions import read_predictions_lines

    lines = read_predictions_lines(path, max_line_bytes=max_line_bytes, as_csv=harness.name == "csv")
    rows = [ResultRow(where=f"{path}, line {n}", output=out, uid=uid) for uid, (out, n) in lines.items()]
    return harness.results(path, rows)
