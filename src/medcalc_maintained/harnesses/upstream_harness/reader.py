"""MedCalc-Bench's own ``evaluation/run.py`` output (JSONL: ``Row Number``, ``Calculator ID``,
``Note ID``, ``LLM Answer``, ``Ground Truth Answer``, ``Result`` ...): only the *extracted* answer is
kept (no output text, so no ``<answer>`` tag to count); upstream writes ``N/A`` when it found no
answer, read here as no answer (never as an abstention). The recorded score is the share of
``Result == "Correct"`` (its ``compute_overall_accuracy``). Rule: ``upstream``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError, shown
from medcalc_maintained.core.readers import read_jsonl
from medcalc_maintained.harnesses.results import Harness, ResultRow, Results, int_or_none, text

UPSTREAM_KEYS = ("Row Number", "Calculator ID", "Note ID", "LLM Answer", "Ground Truth Answer", "Result")
UPSTREAM_RESULTS = {"Correct": True, "Incorrect": False}
# upstream's run.py writes this when it extracted no answer (its check then fails): no answer, not an abstention
UPSTREAM_NOT_FOUND = "N/A"


def is_run_output(rec: dict[str, Any]) -> bool:
    """Whether a first JSON line is a line of run.py's output."""
    return "LLM Answer" in rec and "Result" in rec


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


def read(path: Path, max_line_bytes: int | None, harness: Harness) -> Results:
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
    return harness.results(path, rows, metric="Result", recorded=k / len(rows),
                           recorded_from="the share of Result 'Correct' (compute_overall_accuracy)",
                           whole_outputs=False, notes=notes)
