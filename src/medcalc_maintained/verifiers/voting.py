"""Voting rules of the two pipelines.

Audit: each run answers "is the original label clinically correct?" with ``yes``, ``no``,
``abstain`` (the ``rules`` backend, when it cannot recompute) or ``unparseable``. A row is flagged
*likely error* when at least ``required`` runs say ``no`` (4 of 5 by default; 1 of 1 for the
deterministic ``rules`` backend). Abstentions and unparseable replies never count towards a flag.

Relabel: each run's ``<answer>`` is parsed with :func:`medcalc_maintained.core.answers.parse_answer`;
two answers agree when they have the same type and value: numbers (decimals, integers,
gestational ages in days) equal after rounding half-up to 2 decimals, dates the same day, or both
``N/A``. A row is labelled when at least ``required`` runs agree (4 of 5); otherwise it is
deferred. An unparseable answer agrees with nothing. The label is the most frequent exact value in
the agreeing group (ties: the earliest run).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from medcalc_maintained.core.answers import Answer, parse_answer

VERDICTS = ("yes", "no", "abstain", "unparseable")


def required_votes(runs: int, threshold: int, of_runs: int) -> int:
    """Votes needed out of ``runs``: the supermajority ``threshold`` of ``of_runs`` scaled to
    ``runs`` and rounded up (4 of 5: 1 of 1, 3 of 3, 8 of 10); 1 when there is no run."""
    if runs <= 0:
        return 1
    return max(1, math.ceil(runs * threshold / of_runs - 1e-9))


def audit_tally(verdicts: list[str], required: int) -> dict[str, Any]:
    """Counts of a row's verdicts and whether it is flagged (``no`` votes >= ``required``)."""
    unknown = set(verdicts) - set(VERDICTS)
    if unknown:
        raise ValueError(f"unknown verdict(s) {sorted(unknown)}")
    c = Counter(verdicts)
    return {
        "runs": len(verdicts),
        "votes_wrong": c["no"],
        "votes_correct": c["yes"],
        "votes_abstain": c["abstain"],
        "votes_unparseable": c["unparseable"],
        "required": int(required),
        "flagged": c["no"] >= required and len(verdicts) > 0,
    }


def vote_key(answer: Answer) -> tuple[str, str] | None:
    """What two agreeing answers share: ``("N/A", "")``, ``("date", ISO)`` or ``("number", x.xx)``."""
    if answer.kind == "abstain":
        return ("N/A", "")
    if answer.kind == "date":
        return ("date", answer.date.isoformat())
    if answer.kind in ("decimal", "integer", "gestational_age"):
        q = Decimal(repr(answer.number)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        if q == 0:
            q = Decimal("0.00")
        return ("number", str(q))
    return None


@dataclass
class Consensus:
    status: str  # "labeled" | "deferred"
    label: Answer | None
    votes: int  # runs in the largest agreeing group
    runs: int
    required: int
    groups: dict[str, int] = field(default_factory=dict)  # "number:12.00" -> count


def _exact(a: Answer) -> tuple:
    if a.kind in ("decimal", "integer", "gestational_age"):
        return ("number", a.number)
    return (a.kind, a.value)


def supermajority(answers: list[Any], output_type: str, required: int) -> Consensus:
    """The consensus of a row's run answers (texts or :class:`Answer`, in run order)."""
    parsed = [a if isinstance(a, Answer) else parse_answer(a, output_type) for a in answers]
    groups: dict[tuple[str, str], list[int]] = {}
    for i, a in enumerate(parsed):
        k = vote_key(a)
        if k is not None:
            groups.setdefault(k, []).append(i)
    counts = {f"{k[0]}:{k[1]}" if k[1] else k[0]: len(v) for k, v in groups.items()}
    if not groups:
        return Consensus("deferred", None, 0, len(parsed), required, counts)
    best = max(groups.values(), key=lambda idx: (len(idx), -idx[0]))
    if len(best) < required:
        return Consensus("deferred", None, len(best), len(parsed), required, counts)
    exact = Counter(_exact(parsed[i]) for i in best)
    top = max(exact.values())
    chosen = next(parsed[i] for i in best if exact[_exact(parsed[i])] == top)
    return Consensus("labeled", chosen, len(best), len(parsed), required, counts)
