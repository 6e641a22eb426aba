"""Stage ``relabel``: an independent label for each instance from first principles (phase 2).

The labeller sees only the note and the question (never the original label, its extracted
entities or its explanation) and answers inside ``<answer>…</answer>`` with a number, a date, a
gestational age or ``N/A`` when the note lacks what is needed. Answers are read with
:func:`medcalc_maintained.core.answers.parse_answer`. With ``gemini`` each row gets ``runs`` (5)
independent runs and is labelled only when at least ``threshold`` (4) agree in type and value
(reals to 2 decimals, dates exactly, or all abstain; see :mod:`medcalc_maintained.verifiers.voting`);
otherwise it is deferred. The offline default replays the campaign's published consensus labels
(``y_new``) as one consensus vote per row; the rows the campaign did not label are deferred.

Outputs: ``labels.parquet`` (one row per instance: status ``labeled``/``deferred``, the label in
the release's canonical text, the vote count, backend, model) and ``votes.parquet`` (one row per run).
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import Answer, format_answer, parse_answer
from medcalc_maintained.core.answers import extract_answer as answers_extract
from medcalc_maintained.verifiers import prompts
from medcalc_maintained.verifiers.base import Backend, Task, last_tag
from medcalc_maintained.verifiers.engine import Outcome
from medcalc_maintained.verifiers.runner import build_tasks
from medcalc_maintained.verifiers.settings import StageSettings
from medcalc_maintained.verifiers.voting import supermajority

LABEL_COLUMNS = ["uid", "split", "calculator_id", "output_type", "status", "label", "label_kind", "votes", "runs",
                 "required", "vote_values", "backend", "model", "reason"]
VOTE_COLUMNS = ["uid", "split", "run", "backend", "model", "answer", "answer_kind", "reply", "prompt_sha256",
                "latency_s", "input_tokens", "output_tokens", "thoughts_tokens", "search_queries", "attempts",
                "source", "model_version"]


extract_answer = answers_extract  # the package's one rule (core.answers)


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


def assemble(rows: pd.DataFrame, outcomes: list[Outcome], backend: Backend, settings: StageSettings
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(labels, votes)`` from the engine's outcomes."""
    vrows = []
    for o in sorted(outcomes, key=lambda o: (o.task.uid, o.task.run)):
        e = o.entry
        ans = extract_answer(e.text) if e.ok else None
        kind = parse_answer(ans, o.task.output_type).kind if ans is not None else "invalid"
        vrows.append({
            "uid": o.task.uid, "split": o.task.split, "run": o.task.run, "backend": backend.name,
            "model": backend.model, "answer": ans, "answer_kind": kind, "reply": e.text if e.ok else f"{e.problem}\n---\n{e.text}",
            "prompt_sha256": o.task.prompt_sha256, "latency_s": float(e.latency_s),
            "input_tokens": int(e.input_tokens), "output_tokens": int(e.output_tokens),
            "thoughts_tokens": int(e.thoughts_tokens), "search_queries": int(e.search_queries),
            "attempts": int(e.attempts), "source": o.source, "model_version": e.model_version,
        })
    votes = pd.DataFrame(vrows, columns=VOTE_COLUMNS)
    by_uid: dict[int, list[dict[str, Any]]] = {}
    for r in vrows:
        by_uid.setdefault(r["uid"], []).append(r)
    lrows = []
    for row in rows.to_dict("records"):
        uid, otype = int(row["uid"]), str(row["Output Type"])
        runs = by_uid.get(uid, [])
        base = {"uid": uid, "split": row["split"], "calculator_id": int(row["calculator_id"]), "output_type": otype,
                "backend": backend.name, "model": backend.model}
        if not runs:
            lrows.append({**base, "status": "deferred", "label": None, "label_kind": None, "votes": 0, "runs": 0,
                          "required": 1, "vote_values": "[]",
                          "reason": "no recorded vote for this row" if backend.name == "replay" else "no run"})
            continue
        required = 1 if backend.consensus else settings.required_votes(len(runs))
        parsed = [parse_answer(r["answer"], otype) if r["answer"] is not None
                  else Answer("invalid", None, "", reason="unparseable reply") for r in runs]
        cons = supermajority(parsed, otype, required)
        values = json.dumps([r["answer"] for r in runs], ensure_ascii=False)
        if cons.status == "labeled":
            original = parse_answer(row["Ground Truth Answer"], otype)
            style = "gestational_age" if original.kind == "gestational_age" else None
            label = format_answer(cons.label, otype, style)
            kind = "abstain" if cons.label.is_abstain else ("gestational_age" if style else cons.label.kind)
            reason = ("published consensus (one vote)" if backend.consensus
                      else f"{cons.votes} of {cons.runs} runs agree ({required} needed)")
            lrows.append({**base, "status": "labeled", "label": label, "label_kind": kind, "votes": cons.votes,
                          "runs": cons.runs, "required": required, "vote_values": values, "reason": reason})
        else:
            lrows.append({**base, "status": "deferred", "label": None, "label_kind": None, "votes": cons.votes,
                          "runs": cons.runs, "required": required, "vote_values": values,
                          "reason": f"no supermajority: at most {cons.votes} of {cons.runs} runs agree ({required} needed)"})
    labels = pd.DataFrame(lrows, columns=LABEL_COLUMNS)
    return labels, votes
