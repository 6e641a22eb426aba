"""Stage ``relabel``: an independent label for each instance from first principles (phase 2).

The labeller sees only the note and the question (never the original label, its extracted
entities or its explanation) and answers inside ``<answer>…</answer>`` with a number, a date, a
gestational age or ``N/A`` when the note lacks what is needed. Answers are read with
:func:`medcalc_maintained.core.answers.extract_answer` and ``parse_answer``. With ``gemini`` each
row gets ``runs`` (5) independent runs and is labelled only when at least ``threshold`` (4) agree
in type and value (reals to 2 decimals, dates exactly, or all abstain; see
:mod:`medcalc_maintained.verifiers.voting`); otherwise it is deferred. The offline default replays
the campaign's published consensus labels (``y_new``) as one consensus vote per row; the rows the
campaign did not label are deferred.

Outputs: ``labels.parquet`` (one row per instance: status ``labeled``/``deferred``, the label in
the release's canonical text, the vote count, backend, model), ``votes.parquet`` (one row per run)
and ``run.json``. Running the stage twice on the same inputs writes the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import Answer, extract_answer, format_answer, parse_answer
from medcalc_maintained.core.labels import label_style
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.project import Project
from medcalc_maintained.stages import _llm
from medcalc_maintained.stages._llm import LLMRun, Plan, ProgressFactory, StageKind, run_stage
from medcalc_maintained.verifiers import prompts
from medcalc_maintained.verifiers.base import Backend, Task
from medcalc_maintained.verifiers.engine import Outcome
from medcalc_maintained.verifiers.runner import build_tasks
from medcalc_maintained.verifiers.settings import StageSettings
from medcalc_maintained.verifiers.voting import supermajority

LABEL_COLUMNS = ["uid", "split", "calculator_id", "output_type", "status", "label", "label_kind", "votes", "runs",
                 "required", "vote_values", "backend", "model", "reason"]
VOTE_COLUMNS = ["uid", "split", "run", "backend", "model", "answer", "answer_kind", "reply", "prompt_sha256",
                "input_tokens", "output_tokens", "thoughts_tokens", "search_queries", "attempts", "model_version"]


def reply_problem(text: str, output_type: str) -> str | None:
    """Why a reply cannot be read as an answer of ``output_type`` (None when it can)."""
    ans = extract_answer(text)
    if ans is None:
        return "no <answer>…</answer> in the reply"
    parsed = parse_answer(ans, output_type)
    if not parsed.is_valid:
        return f"answer {ans!r} is not a valid {output_type} answer: {parsed.reason}"
    return None


def tasks(rows: pd.DataFrame, backend: Backend, runs: int) -> list[Task]:
    return build_tasks(rows, backend, runs, "relabel", prompts.relabel)


def validator(task: Task, text: str) -> str | None:
    """The engine's reply check: an answer tag that parses for the task's output type."""
    return reply_problem(text, task.output_type)


def vote_rows(outcomes: list[Outcome], backend: Backend) -> list[dict[str, Any]]:
    """One row per run, in (uid, run) order."""
    vrows = []
    for o in sorted(outcomes, key=lambda o: (o.task.uid, o.task.run)):
        e = _llm.entry_of(o)
        ans = extract_answer(e.text) if e.ok else None
        kind = parse_answer(ans, o.task.output_type).kind if ans is not None else "invalid"
        vrows.append({
            "uid": o.task.uid, "split": o.task.split, "run": o.task.run, "backend": backend.name,
            "model": backend.model, "answer": ans, "answer_kind": kind,
            "reply": e.text if e.ok else f"{e.problem}\n---\n{e.text}", "prompt_sha256": o.task.prompt_sha256,
            "input_tokens": int(e.input_tokens), "output_tokens": int(e.output_tokens),
            "thoughts_tokens": int(e.thoughts_tokens), "search_queries": int(e.search_queries),
            "attempts": int(e.attempts), "model_version": e.model_version,
        })
    return vrows


def label_row(row: dict[str, Any], runs: list[dict[str, Any]], backend: Backend, settings: StageSettings
              ) -> dict[str, Any]:
    """The label of one instance from its runs' votes."""
    uid, otype = int(row["uid"]), str(row["Output Type"])
    base = {"uid": uid, "split": row["split"], "calculator_id": int(row["calculator_id"]), "output_type": otype,
            "backend": backend.name, "model": backend.model}
    if not runs:
        return {**base, "status": "deferred", "label": None, "label_kind": None, "votes": 0, "runs": 0,
                "required": 1, "vote_values": "[]",
                "reason": "no recorded vote for this row" if backend.name == "replay" else "no run"}
    required = 1 if backend.consensus else settings.required_votes(len(runs))
    parsed = [parse_answer(r["answer"], otype) if r["answer"] is not None
              else Answer("invalid", None, "", reason="unparseable reply") for r in runs]
    cons = supermajority(parsed, otype, required)
    counts = {"votes": cons.votes, "runs": cons.runs, "required": required,
              "vote_values": json.dumps([r["answer"] for r in runs], ensure_ascii=False)}
    if cons.status != "labeled" or cons.label is None:  # a labeled consensus has its label
        return {**base, "status": "deferred", "label": None, "label_kind": None, **counts,
                "reason": f"no supermajority: at most {cons.votes} of {cons.runs} runs agree ({required} needed)"}
    style = label_style(row["Ground Truth Answer"], otype)
    kind = "abstain" if cons.label.is_abstain else (style or cons.label.kind)
    reason = ("published consensus (one vote)" if backend.consensus
              else f"{cons.votes} of {cons.runs} runs agree ({required} needed)")
    return {**base, "status": "labeled", "label": format_answer(cons.label, otype, style), "label_kind": kind,
            **counts, "reason": reason}


def assemble(rows: pd.DataFrame, outcomes: list[Outcome], backend: Backend, settings: StageSettings
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(labels, votes)`` from the engine's outcomes."""
    vrows = vote_rows(outcomes, backend)
    by_uid: dict[int, list[dict[str, Any]]] = {}
    for r in vrows:
        by_uid.setdefault(r["uid"], []).append(r)
    lrows = [label_row(row, by_uid.get(int(row["uid"]), []), backend, settings) for row in row_dicts(rows)]
    return pd.DataFrame(lrows, columns=LABEL_COLUMNS), pd.DataFrame(vrows, columns=VOTE_COLUMNS)


def summary(labels: pd.DataFrame, votes: pd.DataFrame, backend: Backend, settings: StageSettings,
            runs: int) -> dict[str, Any]:
    """The relabel's own entries of ``run.json``."""
    st = labels["status"].value_counts()
    return {"labeled": int(st.get("labeled", 0)), "deferred": int(st.get("deferred", 0)),
            "abstain_labels": int((labels["label_kind"] == "abstain").sum())}


KIND = StageKind("relabel", ("labels", "votes"), tasks, validator, assemble, summary)


def plan(project: Project, **options: Any) -> Plan:
    """The planned calls (``--dry-run`` passes ``dry_run=True``); see :func:`_llm.plan`."""
    return _llm.plan(project, KIND, **options)


def run(project: Project, *, backend: str | None = None, runs: int | None = None, limit: int | None = None,
        concurrency: int | None = None, out: Path | None = None, batch: bool = False,
        instances: Path | None = None, replay_file: Path | None = None, cache_dir: Path | None = None,
        split: str | None = None, progress: ProgressFactory | None = None) -> LLMRun:
    """The whole stage: select rows, make backend and engine, run, assemble, write
    ``labels.parquet``, ``votes.parquet`` and ``run.json``."""
    return run_stage(project, KIND, progress=progress, backend=backend, runs=runs, limit=limit,
                     concurrency=concurrency, out=out, batch=batch, instances=instances,
                     replay_file=replay_file, cache_dir=cache_dir, split=split)
