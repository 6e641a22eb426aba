"""Readers of the harnesses' saved results (lm-evaluation-harness samples, Inspect logs, HELM run
directories, verifiers results) and :func:`read_results`, which reads any format of :mod:`.results`
(where the shapes are described)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Callable

from medcalc_maintained.core.io import DataError, check_size, loads_json, read_jsonl, read_text_bounded, shown
from medcalc_maintained.core.zip_bounds import ZipBounds, check_unpacked, open_bounded
from medcalc_maintained.harnesses.results import (
    FORMATS,
    ResultRow,
    Results,
    detect_format,
    int_or_none,
    read_plain,
    read_upstream,
    row_from_record,
    text,
    verdict_of,
)

# samples_<task>_<date>.jsonl, with <date> as lm-eval writes it: datetime.now().isoformat() with "-" for ":"
LM_EVAL_NAME = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[\d.\-]+)\.jsonl$")
LM_EVAL_METRIC = "acc"
INSPECT_SCORER = "medcalc_scorer"
HELM_STATS = {"medcalc_correct": "ours", "medcalc_bench_accuracy": "helm"}  # our scenario's stat, HELM's own
HELM_UID = re.compile(r"^uid(\d+)$")
VERIFIERS_METRIC = "correct"

# What a harness run's files may weigh, checked before a byte is read: json.loads costs up to ~27x a
# file's size (a 100 MB scenario_state.json took 2.7 GB) and inspect-ai unpacks a log whole. Hostile-
# file bounds with headroom, not tuning knobs. Measured: HELM's run of upstream's 1,047 rows (one-line
# outputs) wrote scenario_state.json 6.4 MB, per_instance_stats.json 0.38 MB, stats.json 1.2 KB; an
# output of MAX_NEW_TOKENS (1,024) tokens adds ~4 KB of text and ~45 KB of HELM's per-token record to a
# row, ~50 MB over the 1,047 rows. verifiers' metadata.json 0.8 KB; lm-eval's results_<date>.json 9 KB.
HELM_STATE_MAX_BYTES = 128 << 20    # 20x the measured run; 2x a run whose every output is 1,024 tokens
HELM_STATS_MAX_BYTES = 32 << 20     # per_instance_stats.json, stats.json: 80x (room for HELM's ~20 general stats a row)
SUMMARY_MAX_BYTES = 16 << 20        # verifiers' metadata.json, lm-eval's results_<date>.json: a run's summary
# An Inspect .eval log of 519 rows (mini, one-line outputs) measured 2.9 MB, 567 members, 12.4 MB
# unpacked, its largest member summaries.json 1.9 MB (the largest sample 42 KB), compressed at most
# 11:1 (zstd); for 1,047 rows about 5.8 MB, 1,100 members, 25 MB unpacked. A .json log is the unpacked
# log in one file: bounded as the .eval's unpacked total.
INSPECT_LOG = ZipBounds("an Inspect log", max_bytes=128 << 20, max_unpacked=256 << 20, max_member=64 << 20,
                        max_members=20_000, max_ratio=100)


def _json_file(path: Path, what: str, max_bytes: int) -> Any:
    return loads_json(read_text_bounded(path, max_bytes, what), path, max_depth=64)


# -- lm-evaluation-harness ------------------------------------------------------------------------

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
    doc = _json_file(agg, "lm-eval results", SUMMARY_MAX_BYTES)
    value = doc.get("results", {}).get(m["task"], {}).get(f"{metric},{filt}") if isinstance(doc, dict) else None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise DataError(agg, f"no numeric results[{m['task']!r}][{metric + ',' + filt!r}] for the samples {path.name}")
    return float(value), f"{agg.name}: results[{m['task']!r}][{metric + ',' + filt!r}]"


def read_lm_eval(path: Path, max_line_bytes: int | None) -> Results:
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
    return Results(path, "lm-eval", "lm-eval", rows, metric=metric, rule="ours", recorded=recorded,
                   recorded_from=source)


# -- Inspect --------------------------------------------------------------------------------------

def _inspect_log(path: Path):
    """The log read with inspect-ai, once its size (a .eval: its members, their sizes and compression
    ratios, and what each really unpacks to) is within :data:`INSPECT_LOG`."""
    if path.suffix.lower() == ".eval":
        with open_bounded(path, INSPECT_LOG, "not a readable Inspect log") as zf:
            check_unpacked(path, zf)
    else:
        check_size(path, INSPECT_LOG.max_unpacked, "an Inspect log (JSON)")
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise DataError(path, "reading an Inspect log needs inspect-ai (pip install -e '.[inspect]')") from None
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # a damaged zip, JSON or schema: inspect raises several types
        raise DataError(path, f"not a readable Inspect log ({type(exc).__name__}: {shown(str(exc), 200)})") from None


def _inspect_scorer(log, path: Path) -> tuple[str, float | None]:
    """The scorer with an ``accuracy`` metric (ours first) and the accuracy the log recorded."""
    scores = list(log.results.scores) if log.results else []
    with_acc = [s for s in scores if "accuracy" in s.metrics]
    chosen = next((s for s in with_acc if s.name == INSPECT_SCORER), with_acc[0] if with_acc else None)
    if chosen is None:
        names = [s.name for s in scores]
        raise DataError(path, f"the log records no scorer with an accuracy metric (scorers: {names or 'none'})")
    return chosen.name, float(chosen.metrics["accuracy"].value)


def read_inspect(path: Path, max_line_bytes: int | None = None) -> Results:
    """An Inspect log (``.eval`` or ``.json``), read with inspect-ai."""
    log = _inspect_log(path)  # bounded before inspect-ai is imported
    from inspect_ai.scorer import value_to_float

    scorer, recorded = _inspect_scorer(log, path)
    if not log.samples:
        raise DataError(path, "the log holds no samples (was it written with log_samples=False?)")
    to_float, rows = value_to_float(), []
    for s in log.samples:
        where = f"{path}, sample {s.id} (epoch {s.epoch})"
        score = (s.scores or {}).get(scorer)
        verdict = None if score is None else verdict_of(to_float(score.value), where, scorer)
        meta = dict(s.metadata or {})
        meta.setdefault("Row Number", s.id)
        meta.setdefault("Ground Truth Answer", s.target if isinstance(s.target, str) else None)
        rows.append(row_from_record(meta, where, s.output.completion if s.output else "", verdict))
    notes = [] if log.status == "success" else [f"{path.name}: the log's status is {log.status!r}"]
    return Results(path, "inspect", "Inspect", rows, metric=f"{scorer} accuracy",
                   rule="ours" if scorer == INSPECT_SCORER else None, recorded=recorded,
                   recorded_from=f"the log's results: {scorer} accuracy", notes=notes)


# -- HELM -----------------------------------------------------------------------------------------

def _helm_stat(stats: Any, where: Path) -> tuple[str, float]:
    """The stat of our metric (or HELM's own) on the test split without perturbation, and its mean."""
    found = {}
    for s in stats if isinstance(stats, list) else []:
        name = s.get("name", {}) if isinstance(s, dict) else {}
        if name.get("name") in HELM_STATS and name.get("split") == "test" and not name.get("perturbation"):
            found[name["name"]] = s.get("mean")
    for stat in HELM_STATS:
        if isinstance(found.get(stat), (int, float)):
            return stat, float(found[stat])
    raise DataError(where, f"no test-split stat {' or '.join(HELM_STATS)} with a mean")


def _helm_verdicts(per_instance: Any, stat: str, where: Path) -> dict[str, bool]:
    out = {}
    for p in per_instance if isinstance(per_instance, list) else []:
        if not isinstance(p, dict) or p.get("perturbation") or p.get("train_trial_index", 0) != 0:
            continue
        for s in p.get("stats", []):
            if s.get("name", {}).get("name") == stat and not s.get("name", {}).get("perturbation"):
                out[text(p.get("instance_id"))] = verdict_of(s.get("mean"), f"{where}, instance {p.get('instance_id')}",
                                                             stat)
    return out


def _helm_row(state: dict[str, Any], verdicts: dict[str, bool], run: Path) -> ResultRow | None:
    inst = state.get("instance", {})
    if inst.get("perturbation") or state.get("train_trial_index", 0) != 0 or inst.get("split") != "test":
        return None
    iid = text(inst.get("id"))
    where = f"{run / 'scenario_state.json'}, instance {iid}"
    m = HELM_UID.match(iid)
    extra = inst.get("extra_data") or {}
    completions = (state.get("result") or {}).get("completions") or [{}]
    output = text(completions[0].get("text"))
    if m:  # our scenario: the grading columns in extra_data
        row = row_from_record({**extra, "uid": int(m[1])}, where, output, verdicts.get(iid))
        return row
    refs = [r for r in inst.get("references", []) if "correct" in r.get("tags", [])]
    labels = {"Ground Truth Answer": text(refs[0]["output"]["text"]) if refs else "",
              "Category": text(extra.get("category")), "Lower Limit": text(extra.get("lower_limit")),
              "Upper Limit": text(extra.get("upper_limit"))}
    return ResultRow(where=where, output=output, uid=int_or_none(iid, where, "instance id (Row Number)"),
                     by="Row Number", labels={k: v for k, v in labels.items() if v}, verdict=verdicts.get(iid))


def read_helm(run: Path, max_line_bytes: int | None = None) -> Results:
    """A HELM run directory: our scenario (``uid<N>`` ids) or HELM's own ``medcalc_bench`` (ids = Row Number)."""
    files = {name: run / f"{name}.json" for name in ("scenario_state", "per_instance_stats", "stats")}
    for p in files.values():
        if not p.is_file():
            raise DataError(p, "missing: a HELM run directory holds scenario_state.json, per_instance_stats.json "
                               "and stats.json")
    for name, limit in (("scenario_state", HELM_STATE_MAX_BYTES), ("per_instance_stats", HELM_STATS_MAX_BYTES),
                        ("stats", HELM_STATS_MAX_BYTES)):
        check_size(files[name], limit, f"HELM {name}.json")  # all three, before any is read
    stat, recorded = _helm_stat(_json_file(files["stats"], "HELM stats", HELM_STATS_MAX_BYTES), files["stats"])
    verdicts = _helm_verdicts(_json_file(files["per_instance_stats"], "HELM per-instance stats",
                                         HELM_STATS_MAX_BYTES), stat, files["per_instance_stats"])
    state = _json_file(files["scenario_state"], "HELM scenario state", HELM_STATE_MAX_BYTES)
    states = state.get("request_states") if isinstance(state, dict) else None
    if not isinstance(states, list):
        raise DataError(files["scenario_state"], "no request_states list")
    rows = [r for r in (_helm_row(s, verdicts, run) for s in states if isinstance(s, dict)) if r is not None]
    if not rows:
        raise DataError(files["scenario_state"], "no test instance in the run")
    # HELM's own metric compares the whole stripped completion; our scenario's metric extracts the answer
    return Results(run, "helm", "HELM", rows, metric=stat, rule=HELM_STATS[stat], recorded=recorded,
                   recorded_from=f"stats.json: {stat} (test split) mean", extracts=stat == "medcalc_correct")


# -- verifiers ------------------------------------------------------------------------------------

def read_verifiers(run: Path, max_line_bytes: int | None) -> Results:
    """A verifiers results directory (``results.jsonl`` and ``metadata.json``)."""
    from medcalc_maintained.grading.reward import completion_text

    meta = _json_file(run / "metadata.json", "verifiers metadata", SUMMARY_MAX_BYTES)
    avg = meta.get("avg_metrics", {}) if isinstance(meta, dict) else {}
    recorded = avg.get(VERIFIERS_METRIC) if isinstance(avg, dict) else None
    rows, rewards = [], []
    for n, rec in read_jsonl(run / "results.jsonl", "verifiers results", "with completion, info and metrics",
                             max_line_bytes=max_line_bytes):
        where = f"{run / 'results.jsonl'}, line {n}"
        info = rec.get("info")
        if not isinstance(info, dict):
            raise DataError(where, "missing key 'info' (the grading columns of the row)")
        metrics = rec.get("metrics") if isinstance(rec.get("metrics"), dict) else {}
        value = metrics.get(VERIFIERS_METRIC, rec.get(VERIFIERS_METRIC))
        verdict = None if value is None else verdict_of(value, where, VERIFIERS_METRIC)
        if rec.get("answer") not in (None, ""):
            info = {"Ground Truth Answer": rec["answer"], **info}
        rows.append(row_from_record(info, where, completion_text(rec.get("completion")), verdict))
        rewards.append((where, info, rec.get("completion"), rec.get("reward")))
    if not rows:
        raise DataError(run / "results.jsonl", "no results in the file (it is empty)")
    if not isinstance(recorded, (int, float)) or isinstance(recorded, bool):
        raise DataError(run / "metadata.json", f"no numeric avg_metrics[{VERIFIERS_METRIC!r}] (the environment's "
                                               "accuracy metric)")
    return Results(run, "verifiers", "verifiers", rows, metric=VERIFIERS_METRIC, rule="ours",
                   recorded=float(recorded), recorded_from=f"metadata.json: avg_metrics[{VERIFIERS_METRIC!r}]",
                   notes=[verifiers_reward_note(run, meta, rewards)] if "avg_reward" in meta else [])


def verifiers_reward_note(run: Path, meta: dict[str, Any], rewards: list[tuple[str, dict, Any, Any]]) -> str:
    """Whether the reward verifiers recorded (each row's ``reward``, and ``avg_reward``) is the GRPO
    reward of :mod:`medcalc_maintained.grading.reward` at the run's ``lam`` (its ``env_args``) on the
    labels the run recorded."""
    from medcalc_maintained.grading.reward import score

    head = f"{run.name}: verifiers reward (avg_reward {meta.get('avg_reward')})"
    env_args = meta.get("env_args")
    lam = env_args.get("lam") if isinstance(env_args, dict) else None
    if not isinstance(lam, (int, float)) or isinstance(lam, bool):
        return f"{head} not reproduced: metadata.json records no env_args lam (the reward's weight of a parsable wrong answer)"
    differ = []
    for where, info, completion, recorded in rewards:
        if not isinstance(recorded, (int, float)) or isinstance(recorded, bool):
            return f"{head} not reproduced: {where} records no numeric reward"
        again = score(completion, info["Ground Truth Answer"], info.get("Lower Limit"), info.get("Upper Limit"),
                      str(info.get("Output Type")), lam=float(lam))
        if abs(again - recorded) > 1e-9:
            differ.append(f"{where}: recorded {recorded}, scored {again}")
    mean = sum(r for *_, r in rewards) / len(rewards)
    avg = meta.get("avg_reward")
    if not differ and isinstance(avg, (int, float)) and abs(avg - mean) < 1e-9:
        return f"{head}: reproduced exactly (grading/reward.py score, lam {lam}, on the {len(rewards)} rows' recorded labels)"
    why = differ[:3] + ([f"... {len(differ) - 3} more rows"] if len(differ) > 3 else [])
    if not (isinstance(avg, (int, float)) and abs(avg - mean) < 1e-9):
        why.append(f"avg_reward {avg!r} is not the rows' mean reward {mean!r}")
    return f"{head} NOT reproduced (lam {lam}): " + "; ".join(why)


def read_results(path: os.PathLike | str, fmt: str | None = None, *, max_line_bytes: int | None = None) -> Results:
    """One results file or directory in format ``fmt`` (detected when ``None``)."""
    path = Path(path)
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    fmt = fmt or detect_format(path, max_line_bytes)
    if fmt in ("helm", "verifiers") and path.is_file():
        path = path.parent
    if fmt in ("lm-eval", "inspect", "upstream", "jsonl", "csv") and not path.is_file():
        raise DataError(path, f"{fmt} results must be a file")
    if fmt in ("helm", "verifiers") and not path.is_dir():
        raise DataError(path, f"{fmt} results must be a run directory")
    if fmt in ("jsonl", "csv"):
        return read_plain(path, max_line_bytes, fmt)
    readers: dict[str, Callable[[Path, int | None], Results]] = {"lm-eval": read_lm_eval, "inspect": read_inspect, "helm": read_helm,
               "verifiers": read_verifiers, "upstream": read_upstream}
    return readers[fmt](path, max_line_bytes)
