"""A HELM run directory (``scenario_state.json``, ``per_instance_stats.json``, ``stats.json``): our
scenario (instance id ``uid<Row Number>``, stat ``medcalc_correct``, the harness's rule ``ours``) or
HELM's own ``medcalc_bench`` (id = upstream's ``Row Number``, stat ``medcalc_bench_accuracy``, rule
``helm`` on the whole stripped completion)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import check_size
from medcalc_maintained.harnesses.results import (
    Harness,
    ResultRow,
    Results,
    int_or_none,
    json_file,
    row_from_record,
    text,
    verdict_of,
)

OURS, OWN = "medcalc_correct", "medcalc_bench_accuracy"  # our scenario's stat, HELM's own
HELM_UID = re.compile(r"^uid(\d+)$")
# What a run's files may weigh, checked before a byte is read: json.loads costs up to ~27x a file's
# size (a 100 MB scenario_state.json took 2.7 GB). Measured: HELM's run of upstream's 1,047 rows
# (one-line outputs) wrote scenario_state.json 6.4 MB, per_instance_stats.json 0.38 MB, stats.json
# 1.2 KB; an output of MAX_NEW_TOKENS (1,024) tokens adds ~4 KB of text and ~45 KB of HELM's per-token
# record to a row, ~50 MB over the 1,047 rows. Hostile-file bounds with headroom, not tuning knobs.
HELM_STATE_MAX_BYTES = 128 << 20    # 20x the measured run; 2x a run whose every output is 1,024 tokens
HELM_STATS_MAX_BYTES = 32 << 20     # per_instance_stats.json, stats.json: 80x (room for HELM's ~20 general stats a row)


def _helm_stat(stats: Any, where: Path) -> tuple[str, float]:
    """The stat of our metric (or HELM's own) on the test split without perturbation, and its mean."""
    found = {}
    for s in stats if isinstance(stats, list) else []:
        name = s.get("name", {}) if isinstance(s, dict) else {}
        if name.get("name") in (OURS, OWN) and name.get("split") == "test" and not name.get("perturbation"):
            found[name["name"]] = s.get("mean")
    for stat in (OURS, OWN):
        if isinstance(found.get(stat), (int, float)):
            return stat, float(found[stat])
    raise DataError(where, f"no test-split stat {OURS} or {OWN} with a mean")


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


def read(run: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """A HELM run directory: our scenario (``uid<N>`` ids) or HELM's own ``medcalc_bench`` (ids = Row Number)."""
    files = {name: run / f"{name}.json" for name in ("scenario_state", "per_instance_stats", "stats")}
    for p in files.values():
        if not p.is_file():
            raise DataError(p, "missing: a HELM run directory holds scenario_state.json, per_instance_stats.json "
                               "and stats.json")
    for name, limit in (("scenario_state", HELM_STATE_MAX_BYTES), ("per_instance_stats", HELM_STATS_MAX_BYTES),
                        ("stats", HELM_STATS_MAX_BYTES)):
        check_size(files[name], limit, f"HELM {name}.json")  # all three, before any is read
    stat, recorded = _helm_stat(json_file(files["stats"], "HELM stats", HELM_STATS_MAX_BYTES), files["stats"])
    verdicts = _helm_verdicts(json_file(files["per_instance_stats"], "HELM per-instance stats",
                                        HELM_STATS_MAX_BYTES), stat, files["per_instance_stats"])
    state = json_file(files["scenario_state"], "HELM scenario state", HELM_STATE_MAX_BYTES)
    states = state.get("request_states") if isinstance(state, dict) else None
    if not isinstance(states, list):
        raise DataError(files["scenario_state"], "no request_states list")
    rows = [r for r in (_helm_row(s, verdicts, run) for s in states if isinstance(s, dict)) if r is not None]
    if not rows:
        raise DataError(files["scenario_state"], "no test instance in the run")
    # HELM's own metric compares the whole stripped completion; our scenario's metric extracts the answer
    return harness.results(run, rows, metric=stat, rule=harness.grader if stat == OURS else "helm", recorded=recorded,
                           recorded_from=f"stats.json: {stat} (test split) mean", extracts=stat == OURS)
