"""A verifiers results directory (``results.jsonl`` + ``metadata.json``, what ``vf-eval`` and
``Environment.evaluate(save_results=True)`` write): per line ``completion``, ``info`` (the grading
columns) and ``metrics.correct``; the recorded score is ``avg_metrics.correct``. Rule: ``ours``. The
reward it recorded is checked against :mod:`medcalc_maintained.grading.reward` (a note)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_jsonl
from medcalc_maintained.grading.reward import completion_text, score
from medcalc_maintained.harnesses.results import (
    SUMMARY_MAX_BYTES,
    Harness,
    Results,
    json_file,
    row_from_record,
    verdict_of,
)

VERIFIERS_METRIC = "correct"


def read(run: Path, max_line_bytes: int | None, harness: Harness) -> Results:
    """A verifiers results directory (``results.jsonl`` and ``metadata.json``)."""
    meta = json_file(run / "metadata.json", "verifiers metadata", SUMMARY_MAX_BYTES)
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
    return harness.results(run, rows, metric=VERIFIERS_METRIC, recorded=float(recorded),
                           recorded_from=f"metadata.json: avg_metrics[{VERIFIERS_METRIC!r}]",
                           notes=[verifiers_reward_note(run, meta, rewards)] if "avg_reward" in meta else [])


def verifiers_reward_note(run: Path, meta: dict[str, Any], rewards: list[tuple[str, dict, Any, Any]]) -> str:
    """Whether the reward verifiers recorded (each row's ``reward``, and ``avg_reward``) is the GRPO
    reward of :mod:`medcalc_maintained.grading.reward` at the run's ``lam`` (its ``env_args``) on the
    labels the run recorded."""
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
