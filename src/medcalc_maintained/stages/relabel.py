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
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import Answer, extract_answer, format_answer, parse_answer
from medcalc_maintained.core.labels import label_style
from medcalc_maintained.stages._llm import StageKind
from medcalc_maintained.verifiers import prompts
from medcalc_maintained.verifiers.base import Backend, Task
from medcalc_maintained.verifiers.cache import Entry
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


def vote_fields(task: Task, e: Entry) -> dict[str, Any]:
    """The relabel's own fields of one run's row: the answer of its reply and the answer's kind."""
    ans = extract_answer(e.text) if e.ok else None
    kind = parse_answer(ans, task.output_type).kind if ans is not None else "invalid"
    return {"answer": ans, "answer_kind": kind, "reply": e.text if e.ok else f"{e.problem}\n---\n{e.text}"}


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


def summary(tables: dict[str, pd.DataFrame], backend: Backend, settings: StageSettings, runs: int) -> dict[str, Any]:
    """The relabel's own entries of ``run.json``."""
    labels = tables["labels"]
    st = labels["status"].value_counts()
    return {"labeled": int(st.get("labeled", 0)), "deferred": int(st.get("deferred", 0)),
            "abstain_labels": int((labels["label_kind"] == "abstain").sum())}


KIND = StageKind("relabel", {"labels": LABEL_COLUMNS, "votes": VOTE_COLUMNS}, "votes", tasks, validator,
                 vote_fields, label_row, summary)
#: the planned calls (``--dry-run`` passes ``dry_run=True``), and the whole stage: ``labels.parquet``,
#: ``votes.parquet``, ``run.json`` and ``metrics.json`` written (see :class:`~medcalc_maintained.stages._llm.StageKind`)
plan, run = KIND.plan, KIND.run
