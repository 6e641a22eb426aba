"""Saved results of the harnesses that run MedCalc-Bench, read into one shape for ``regrade``.

:func:`~.registry.read_results` reads one file or run directory (its format detected by :func:`detect_format`
or named, ``--format``) into :class:`Results`: one :class:`ResultRow` per graded row (the model's
output, the row's identity as recorded, the labels the harness graded against and its verdict) and
the score the harness recorded. The formats:

``lm-eval``
    lm-evaluation-harness ``samples_<task>_<date>.jsonl`` (``--log_samples``): per line ``doc`` (the
    dataset row), ``filtered_resps`` (the output graded) and the metric (``acc``); the recorded score
    is ``results[task]["acc,<filter>"]`` of the ``results_<date>.json`` beside it, else the mean of
    the per-sample metric. Harness rule: ``ours`` (the adapter's ``process_results``).
``inspect``
    an Inspect log (``.eval`` or ``.json``), read with ``inspect_ai.log.read_eval_log`` (the extra
    ``inspect``): per sample ``id`` (= ``Row Number``), ``output.completion``, the score and the
    grading columns in ``metadata``; the recorded score is the log's ``accuracy``. Rule: ``ours``.
``helm``
    a HELM run directory (``scenario_state.json``, ``per_instance_stats.json``, ``stats.json``):
    our scenario (instance id ``uid<Row Number>``, stat ``medcalc_correct``, rule ``ours``) or
    HELM's own ``medcalc_bench`` (id = upstream's ``Row Number``, stat ``medcalc_bench_accuracy``,
    rule ``helm``).
``verifiers``
    a verifiers results directory (``results.jsonl`` + ``metadata.json``, what ``vf-eval`` and
    ``Environment.evaluate(save_results=True)`` write): per line ``completion``, ``info`` (the
    grading columns) and ``metrics.correct``; the recorded score is ``avg_metrics.correct``. Rule: ``ours``.
``upstream``
    MedCalc-Bench's own ``evaluation/run.py`` output (JSONL: ``Row Number``, ``Calculator ID``,
    ``Note ID``, ``LLM Answer``, ``Ground Truth Answer``, ``Result`` ...): only the *extracted*
    answer is kept (no output text, so no ``<answer>`` tag to count); upstream writes ``N/A`` when it
    found no answer, read here as no answer (never as an abstention). The recorded score is the share
    of ``Result == "Correct"`` (its ``compute_overall_accuracy``). Rule: ``upstream``.
``jsonl`` / ``csv``
    ``evaluate``'s predictions (:mod:`medcalc_maintained.grading.predictions`): nothing recorded to reproduce.

The harness readers, and :func:`read_results`, are in :mod:`.registry`. Every problem is a :class:`DataError` naming
the file (and line, sample or instance).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medcalc_maintained.core.io import DataError, read_jsonl, shown

FORMATS = ("lm-eval", "inspect", "helm", "verifiers", "upstream", "jsonl", "csv")
# the columns a grader reads, as the harnesses record them (harnesses/common.py: LABEL_FIELDS)
GRADING_FIELDS = ("Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type", "Calculator ID", "Category")
UPSTREAM_KEYS = ("Row Number", "Calculator ID", "Note ID", "LLM Answer", "Ground Truth Answer", "Result")
UPSTREAM_RESULTS = {"Correct": True, "Incorrect": False}
# upstream's run.py writes this when it extracted no answer (its check then fails): no answer, not an abstention
UPSTREAM_NOT_FOUND = "N/A"


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


# -- detection ------------------------------------------------------------------------------------

def _first_record(path: Path, max_line_bytes: int | None) -> dict[str, Any]:
    for _, rec in read_jsonl(path, "results", "{...}", max_line_bytes=max_line_bytes):
        return rec
    raise DataError(path, "no results in the file (it is empty)")


def detect_format(path: os.PathLike | str, max_line_bytes: int | None = None) -> str:
    """The format of a results file or directory (see the module doc), from its name and, for a
    JSONL file, the keys of its first line; a :class:`DataError` when it is none of :data:`FORMATS`."""
    path = Path(path)
    if path.is_dir():
        if (path / "scenario_state.json").is_file():
            return "helm"
        if (path / "results.jsonl").is_file() and (path / "metadata.json").is_file():
            return "verifiers"
        raise DataError(path, "unknown results directory: neither a HELM run (scenario_state.json) nor verifiers "
                              "results (results.jsonl + metadata.json)")
    if not path.is_file():
        raise DataError(path, "results file not found")
    suffix = path.suffix.lower()
    if path.name == "scenario_state.json":
        return "helm"
    if path.name == "results.jsonl" and (path.parent / "metadata.json").is_file():
        return "verifiers"
    if suffix == ".eval":
        return "inspect"
    if suffix == ".csv":
        return "csv"
    if suffix == ".json":
        return "inspect"  # an Inspect log in JSON; anything else is refused by its reader
    rec = _first_record(path, max_line_bytes)
    if "doc" in rec and ("filtered_resps" in rec or "resps" in rec):
        return "lm-eval"
    if "LLM Answer" in rec and "Result" in rec:
        return "upstream"
    if "uid" in rec:
        return "jsonl"
    raise DataError(f"{path}, line 1", f"unknown results format: keys {sorted(rec)[:12]}; expected lm-eval samples "
                    "(doc, filtered_resps), MedCalc-Bench's run.py output (Row Number, LLM Answer, Result) or "
                    f"predictions (uid, output); or name it with --format ({', '.join(FORMATS)})")


# -- plain predictions and upstream's format ------------------------------------------------------

def read_plain(path: Path, max_line_bytes: int | None, fmt: str = "jsonl") -> Results:
    """``evaluate``'s predictions (JSONL or CSV, ``fmt``): the rows, nothing recorded."""
    from medcalc_maintained.grading.predictions import read_predictions_lines

    lines = read_predictions_lines(path, max_line_bytes=max_line_bytes, as_csv=fmt == "csv")
    rows = [ResultRow(where=f"{path}, line {n}", output=out, uid=uid) for uid, (out, n) in lines.items()]
    return Results(path, fmt, f"predictions ({fmt.upper()})", rows)


def _upstream_row(rec: dict[str, Any], where: str) -> ResultRow:
    missing = [k for k in UPSTREAM_KEYS if k not in rec]
    if missing:
        raise DataError(where, f"missing key(s) {missing}; MedCalc-Bench's run.py writes {list(UPSTREAM_KEYS)}")
    result = rec["Result"]
    if result not in UPSTREAM_RESULTS:
        raise DataError(where, f"Result must be 'Correct' or 'Incorrect', got {shown(result)}", field="Result")
    answer = rec["LLM Answer"]
    if not isinstance(answer, (str, int, float)) or isinstance(answer, bool):
        raise DataError(where, f"LLM Answer must be text, got {shown(answer)}", field="LLM Answer")
    output = "" if text(answer).strip() == UPSTREAM_NOT_FOUND else text(answer)
    labels = {"Ground Truth Answer": text(rec["Ground Truth Answer"]), "Calculator ID": text(rec["Calculator ID"])}
    if rec.get("Category") is not None:
        labels["Category"] = text(rec["Category"])
    note = rec.get("Patient Note") if isinstance(rec.get("Patient Note"), str) else None
    return ResultRow(where=where, output=output, uid=int_or_none(rec["Row Number"], where, "Row Number"),
                     by="Row Number", calculator_id=text(rec["Calculator ID"]) or None,
                     note_id=text(rec["Note ID"]) or None, note=note, labels=labels, verdict=UPSTREAM_RESULTS[result])


def read_upstream(path: Path, max_line_bytes: int | None) -> Results:
    """MedCalc-Bench's ``evaluation/run.py`` output (see the module doc)."""
    rows = [_upstream_row(rec, f"{path}, line {n}")
            for n, rec in read_jsonl(path, "MedCalc-Bench results", "with " + ", ".join(UPSTREAM_KEYS),
                                     max_line_bytes=max_line_bytes)]
    if not rows:
        raise DataError(path, "no results in the file (it is empty)")
    k = sum(bool(r.verdict) for r in rows)
    not_found = sum(1 for r in rows if r.output == "")
    notes = [f"{path.name}: only the answer upstream's run.py extracted is kept (no output text): tag compliance "
             f"cannot be counted; {not_found} row(s) with LLM Answer 'N/A' (upstream found no answer) are read as no "
             "answer, not as an abstention"]
    return Results(path, "upstream", "MedCalc-Bench run.py", rows, metric="Result", rule="upstream",
                   recorded=k / len(rows), recorded_from="the share of Result 'Correct' (compute_overall_accuracy)",
                   whole_outputs=False, notes=notes)
