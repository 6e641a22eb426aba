"""Every Eval Ever (EEE) instance-level results: the ``<uuid>_samples.jsonl`` its converters write from
lm-eval, Inspect and HELM logs (and ``regrade`` writes, ``eee/*.jsonl``), one
``InstanceLevelEvaluationLog`` per line: ``sample_id``, ``input.raw`` (the prompt), ``input.reference``,
``output.raw`` (the model's outputs), ``evaluation.is_correct``.

Rows are identified by ``metadata.uid`` where ``regrade`` wrote it, else by the note and question the
prompt states (``Patient note: ... Question: ...``, the user turn of ``grading/prompts.py``, in the text a chat
template rendered or in the JSON chat messages a harness recorded): EEE records
no dataset revision, and ``sample_id`` is a harness's own index (lm-eval's ``doc_id``). One file is one
evaluation (one ``evaluation_id`` and ``evaluation_result_id``). The recorded score is the aggregate
``<uuid>.json`` beside the file (``evaluation_results[].score_details.score`` of that result), else the
mean of ``evaluation.score``. The rule reproduced: ``metadata.grader`` where ``regrade`` wrote it, else
``ours`` for a task of our adapters (``evaluation_name`` ``medcalc_maintained...``); results of any other
task are re-scored but not reproduced (their rule is not known), and the output says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError, shown
from medcalc_maintained.core.readers import read_jsonl
from medcalc_maintained.grading.prompts import build_prompt
from medcalc_maintained.harnesses.results import (
    SUMMARY_MAX_BYTES,
    Harness,
    ResultRow,
    Results,
    int_or_none,
    json_file,
    text,
)

OUR_TASKS = "medcalc_maintained"  # the task names of our adapters start so (lm-eval, Inspect, HELM)
# the user turn of grading/prompts.py (build_prompt): "<NOTE_OPENS><note><QUESTION_OPENS><question>"
NOTE_OPENS, QUESTION_OPENS = build_prompt("\0", "\1")[1]["content"].split("\1")[0].split("\0")
SAMPLES_SUFFIX = "_samples.jsonl"


def is_instance(rec: dict[str, Any]) -> bool:
    """Whether a first JSON line is an EEE instance-level log."""
    return {"schema_version", "evaluation_id", "sample_id", "evaluation"} <= set(rec)


def _field(rec: dict[str, Any], where: str, *path: str) -> Any:
    value: Any = rec
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise DataError(where, f"missing {'.'.join(path)} (is this an EEE instance-level file?)")
        value = value[key]
    return value


def _output(rec: dict[str, Any], where: str) -> str:
    raw = _field(rec, where, "output", "raw")
    if not isinstance(raw, list) or not raw or not all(isinstance(x, str) for x in raw):
        raise DataError(where, f"output.raw must be a non-empty list of strings, got {shown(raw)}")
    if len(raw) > 1:
        raise DataError(where, f"{len(raw)} outputs for one sample; regrade takes one output per row")
    return raw[0]


def _user_turn(raw: str) -> str:
    """The last user message of a prompt recorded as JSON chat messages (``[{"role", "content"}, ...]``, as a
    harness without a chat template records it), else the prompt itself (rendered by a chat template)."""
    if not raw.lstrip().startswith("["):
        return raw
    try:
        messages = json.loads(raw)
    except ValueError:
        return raw
    users = [m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"] \
        if isinstance(messages, list) else []
    return users[-1] if users and isinstance(users[-1], str) else raw


def _prompt(raw: Any) -> tuple[str | None, str | None]:
    """``(note, the prompt after the note's question marker)`` of a prompt that states them, else ``(None, None)``."""
    if not isinstance(raw, str):
        return None, None
    raw = _user_turn(raw)
    start, end = raw.find(NOTE_OPENS), raw.rfind(QUESTION_OPENS)
    if start < 0 or end < start:
        return None, None
    return raw[start + len(NOTE_OPENS):end], raw[end + len(QUESTION_OPENS):]


def _row(rec: dict[str, Any], where: str, ours: bool) -> ResultRow:
    verdict = _field(rec, where, "evaluation", "is_correct")
    if not isinstance(verdict, bool):
        raise DataError(where, f"evaluation.is_correct must be true or false, got {shown(verdict)}")
    meta: dict[str, Any] = rec["metadata"] if isinstance(rec.get("metadata"), dict) else {}
    note, question = _prompt(_field(rec, where, "input", "raw"))
    labels: dict[str, str] = {}
    if "label" in meta:  # written by regrade: the labels it graded against
        labels = {k: text(meta.get(m)) for k, m in (("Ground Truth Answer", "label"), ("Lower Limit", "lower_limit"),
                                                    ("Upper Limit", "upper_limit"), ("Output Type", "output_type"))
                  if meta.get(m) is not None}
    elif ours:
        ref = rec["input"].get("reference")
        if isinstance(ref, list) and len(ref) == 1 and isinstance(ref[0], str):
            labels = {"Ground Truth Answer": ref[0]}
    return ResultRow(where=where, output=_output(rec, where), uid=int_or_none(meta.get("uid"), where, "metadata.uid"),
                     note=note, question=question, labels=labels, verdict=verdict)


def _recorded(path: Path, evaluation: str, result: str | None) -> tuple[float | None, str]:
    """The score of the aggregate ``<uuid>.json`` beside ``<uuid>_samples.jsonl``, when there is one."""
    if not path.name.endswith(SAMPLES_SUFFIX):
        return None, ""
    agg = path.with_name(path.name[: -len(SAMPLES_SUFFIX)] + ".json")
    if not agg.is_file():
        return None, ""
    doc = json_file(agg, "EEE aggregate", SUMMARY_MAX_BYTES)
    found = [r for r in (doc.get("evaluation_results") or []) if isinstance(r, dict)
             and r.get("evaluation_name") == evaluation and r.get("evaluation_result_id") == result] \
        if isinstance(doc, dict) else []
    score = found[0].get("score_details", {}).get("score") if len(found) == 1 else None
    if not isinstance(score, (int, float)) or isinstance(score, bool):
        raise DataError(agg, f"no score_details.score of evaluation {evaluation!r} (result {result!r}) for the "
                             f"samples {path.name}")
    return float(score), f"{agg.name}: evaluation_results[{evaluation!r}, {result!r}].score_details.score"


def read(path: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """One EEE instance-level file (one evaluation)."""
    recs = [(f"{path}, line {n}", rec) for n, rec in read_jsonl(
        path, "EEE instance-level results", "an InstanceLevelEvaluationLog", max_line_bytes=max_line_bytes)]
    if not recs:
        raise DataError(path, "no instances in the file (it is empty)")
    for key in ("evaluation_id", "evaluation_result_id", "evaluation_name"):
        seen = sorted({text(rec.get(key)) for _, rec in recs})
        if len(seen) > 1:
            raise DataError(path, f"instances of several {key}s {seen[:4]}; regrade one evaluation at a time")
    first = recs[0][1]
    name, result = text(first.get("evaluation_name")), first.get("evaluation_result_id")
    meta: dict[str, Any] = first["metadata"] if isinstance(first.get("metadata"), dict) else {}
    ours = name.startswith(OUR_TASKS)
    rows = [_row(rec, where, ours) for where, rec in recs]
    rule = meta.get("grader") if isinstance(meta.get("grader"), str) else ("ours" if ours else None)
    notes = [] if rule else [f"{path}: evaluation {name!r} is no task of ours, so its rule is not known: its "
                             "recorded verdicts are not reproduced, its outputs are re-scored"]
    recorded, source = _recorded(path, name, result)
    if recorded is None:
        scores = [_field(rec, where, "evaluation", "score") for where, rec in recs]
        recorded = sum(float(s) for s in scores) / len(scores)
        source = "the mean of evaluation.score (no aggregate <uuid>.json beside the file)"
    return harness.results(path, rows, metric=text(result) or "is_correct", rule=rule, recorded=recorded,
                           recorded_from=source, notes=notes, model=text(first.get("model_id")) or None)
