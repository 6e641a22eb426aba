"""Stage ``audit``: does each v1.0 label look clinically correct? (phase 1 of the stewardship method)

A verifier sees the note, the question, the original label with its accepted range and how it was
derived (``Relevant Entities``, ``Ground Truth Explanation``) and answers
``<verdict>yes</verdict>`` (the label is clinically correct) or ``<verdict>no</verdict>``.
With ``gemini`` it runs ``runs`` (5) times per row and a row is flagged *likely error* when at
least ``threshold`` (4) of the runs say ``no``; the ``rules`` backend (the deterministic recompute
audit, the offline default) runs once per row and flags a row when that single vote says ``no``
(see :mod:`medcalc_maintained.verifiers.rules`).

Outputs: ``verdicts.parquet`` (one row per run: uid, backend, model, run, verdict, critique,
prompt sha256, tokens, attempts) and ``flags.parquet`` (one row per instance: vote counts, votes
required, flagged, the critique of the first ``no`` run), and ``run.json``. Running the stage
twice on the same inputs writes the same bytes (see :mod:`medcalc_maintained.stages._llm`).
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.stages._llm import StageKind
from medcalc_maintained.verifiers import prompts
from medcalc_maintained.verifiers.base import Backend, Task, last_tag
from medcalc_maintained.verifiers.cache import Entry
from medcalc_maintained.verifiers.runner import build_tasks
from medcalc_maintained.verifiers.settings import StageSettings
from medcalc_maintained.verifiers.voting import audit_tally

VERDICT_COLUMNS = ["uid", "split", "backend", "model", "run", "verdict", "critique", "prompt_sha256",
                   "input_tokens", "output_tokens", "thoughts_tokens", "search_queries", "attempts",
                   "finish_reason", "model_version"]
FLAG_COLUMNS = ["uid", "split", "calculator_id", "backend", "model", "runs", "votes_wrong", "votes_correct",
                "votes_abstain", "votes_unparseable", "required", "flagged", "rule", "reason"]


def parse_verdict(text: str) -> tuple[str, str]:
    """``(verdict, critique)`` of a reply: the last ``<verdict>`` tag (yes, no or abstain, else
    ``unparseable``) and the ``<critique>`` text (else the reply without its tags)."""
    raw = last_tag(text or "", "verdict")
    verdict = raw.lower().strip(" .*_`'\"") if raw else ""
    if verdict not in ("yes", "no", "abstain"):
        verdict = "unparseable"
    critique = last_tag(text or "", "critique")
    if critique is None:
        critique = re.sub(r"<verdict>.*?</verdict>", "", text or "", flags=re.IGNORECASE | re.DOTALL).strip()
    return verdict, critique


def reply_problem(text: str) -> str | None:
    """Why a reply cannot be read as a verdict (None when it can)."""
    if parse_verdict(text)[0] == "unparseable":
        return "no <verdict>yes</verdict> or <verdict>no</verdict> in the reply"
    return None


def validator(task: Task, text: str) -> str | None:
    """The engine's reply check."""
    return reply_problem(text)


def payload(row: Mapping[str, Any]) -> dict[str, Any]:
    """The structured inputs of the recompute audit for one row."""
    return {"calculator_id": int(row["calculator_id"]), "entities": json.loads(row["entities"]),
            "label": str(row["Ground Truth Answer"]), "lower": str(row["Lower Limit"]),
            "upper": str(row["Upper Limit"]), "output_type": str(row["Output Type"])}


def tasks(rows: pd.DataFrame, backend: Backend, runs: int) -> list[Task]:
    return build_tasks(rows, backend, runs, "audit", prompts.audit, payload)


def rule_text(backend: Backend, settings: StageSettings, runs: int) -> str:
    if backend.deterministic:
        return "deterministic backend, one vote per row: flagged when that vote is no"
    return (f"flagged when at least {settings.required_votes(runs)} of {runs} runs say no "
            f"(threshold {settings.threshold} of {settings.runs}, scaled up)")


def verdict_fields(task: Task, e: Entry) -> dict[str, Any]:
    """The audit's own fields of one run's row: the verdict and critique of its reply, and why the model stopped."""
    verdict, critique = parse_verdict(e.text) if e.ok else ("unparseable", f"{e.problem}\n---\n{e.text}")
    return {"verdict": verdict, "critique": critique, "finish_reason": e.finish_reason}


def flag_row(row: dict[str, Any], runs: list[dict[str, Any]], backend: Backend, settings: StageSettings
             ) -> dict[str, Any]:
    """The flag of one instance from its runs' verdicts."""
    n = len(runs)
    tally = audit_tally([r["verdict"] for r in runs], settings.required_votes(n) if n else 1)
    first_no = next((r["critique"] for r in runs if r["verdict"] == "no"), "")
    return {"uid": int(row["uid"]), "split": row["split"], "calculator_id": int(row["calculator_id"]),
            "backend": backend.name, "model": backend.model, **tally,
            "rule": rule_text(backend, settings, n) if n else "no recorded verdict",
            "reason": first_no if tally["flagged"] else ""}


def summary(tables: dict[str, pd.DataFrame], backend: Backend, settings: StageSettings, runs: int) -> dict[str, Any]:
    """The audit's own entries of ``run.json``."""
    return {"flagged": int(tables["flags"]["flagged"].sum()),
            "rule": rule_text(backend, settings, 1 if backend.deterministic else runs),
            "verdicts": {k: int(v) for k, v in tables["verdicts"]["verdict"].value_counts().items()}}


KIND = StageKind("audit", {"verdicts": VERDICT_COLUMNS, "flags": FLAG_COLUMNS}, "verdicts", tasks, validator,
                 verdict_fields, flag_row, summary)
#: the planned calls (``--dry-run`` passes ``dry_run=True``), and the whole stage: ``verdicts.parquet``,
#: ``flags.parquet``, ``run.json`` and ``metrics.json`` written (see :class:`~medcalc_maintained.stages._llm.StageKind`)
plan, run = KIND.plan, KIND.run
