"""lm-evaluation-harness samples ``samples_<task>_<date>.jsonl`` (``--log_samples``): per line ``doc``
(the dataset row), ``filtered_resps`` (the output graded) and the metric (``acc``); the recorded score
is ``results[task]["acc,<filter>"]`` of the ``results_<date>.json`` beside it, else the mean of the
per-sample metric. Harness rule: ``ours`` (the adapter's ``process_results``)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_jsonl
from medcalc_maintained.harnesses.results import (
    SUMMARY_MAX_BYTES,
    Harness,
    Results,
    json_file,
    row_from_record,
    text,
    verdict_of,
)

# samples_<task>_<date>.jsonl, with <date> as lm-eval writes it: datetime.now().isoformat() with "-" for ":"
LM_EVAL_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl$")
LM_EVAL_METRIC = "acc"


def is_sample(rec: dict[str, Any]) -> bool:
    """Whether a first JSON line is an lm-eval sample."""
    return "doc" in rec and ("filtered_resps" in rec or "resps" in rec)


def _lm_eval_output(rec: dict[str, Any], where: str) -> str:
    for key in ("filtered_resps", "resps"):
        value = rec.get(key)
        while isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, str):
            return value
    raise DataError(where, "no generated text in filtered_resps/resps (is this a generate_until task?)")


def _lm_eval_recorded(path: Path, metric: str, filt: str) -> tuple[float | None, str]:
    """``results[task]["<metric>,<filter>"]`` of the ``results_<date>.json`` lm-eval wrote beside the samples."""
    m = LM_EVAL_NAME.match(path.name)
    if not m:
        return None, ""
    agg = path.with_name(f"results_{m['date']}.json")
    if not agg.is_file():
        return None, ""
    doc = json_file(agg, "lm-eval results", SUMMARY_MAX_BYTES)
    value = doc.get("results", {}).get(m["task"], {}).get(f"{metric},{filt}") if isinstance(doc, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DataError(agg, f"no numeric results[{m['task']!r}][{metric + ',' + filt!r}] for the samples {path.name}")
    return float(value), f"{agg.name}: results[{m['task']!r}][{metric + ',' + filt!r}]"


def read(path: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """lm-evaluation-harness samples (``--log_samples``)."""
    rows, filters = [], set()
    metric = None
    for n, rec in read_jsonl(path, "lm-eval samples", "with doc, filtered_resps and the metric",
                             max_line_bytes=max_line_bytes):
        where = f"{path}, line {n}"
        doc = rec.get("doc")
        if not isinstance(doc, dict):
            raise DataError(where, "missing key 'doc' (the dataset row); is this an lm-eval samples file?")
        names = rec.get("metrics") if isinstance(rec.get("metrics"), list) else []
        metric = metric or (LM_EVAL_METRIC if LM_EVAL_METRIC in rec else next((k for k in names if k in rec), None))
        if metric is None or metric not in rec:
            raise DataError(where, f"no per-sample metric (expected {LM_EVAL_METRIC!r} or one of {names})")
        filters.add(text(rec.get("filter", "none")))
        rows.append(row_from_record(doc, where, _lm_eval_output(rec, where), verdict_of(rec[metric], where, metric)))
    if not rows:
        raise DataError(path, "no samples in the file (it is empty)")
    if len(filters) > 1:
        raise DataError(path, f"samples of several filters {sorted(filters)}; regrade one filter's samples at a time")
    recorded, source = _lm_eval_recorded(path, str(metric), filters.pop())
    if recorded is None:
        k = sum(bool(r.verdict) for r in rows)
        recorded, source = k / len(rows), f"the mean of the per-sample {metric!r} (no results_<date>.json beside it)"
    return harness.results(path, rows, metric=metric, recorded=recorded, recorded_from=source)
