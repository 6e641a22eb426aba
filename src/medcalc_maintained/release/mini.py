"""The ``mini`` config: a small, deterministic, stratified evaluation subset of a release.

Rule (also printed on the card, :func:`rule_text`):

1. Candidates are the release's verified rows (``Label Status`` is not ``unverified``) of the
   ``default`` config; a release without verified rows (the upstream baseline) has an empty
   ``mini``.
2. Every candidate is ranked by ``sha256("<split>:<uid>")`` (the row's stable key, never its
   position in a file), so a row keeps its rank in every release.
3. Per split and calculator, the candidates are grouped by ``Label Status``; the groups are taken
   in turn (round robin, in the order ``corrected``, ``abstain``, ``confirmed``), each time the
   best-ranked row not yet taken, until ``per_calculator`` rows are chosen or the calculator has
   no candidates left (then all of them are in ``mini``).

The selection depends on (split, uid, calculator, Label Status) only: a row is chosen in every
release where these are the same and the calculator's candidates are the same.

Order of the rows (per split), so that the first N rows of the file are a sample of calculators
(``lm_eval --limit N``, ``load_dataset(...)["test"].select(range(N))``):

* from release 2.2.0 on (``core/versions.py: MINI_INTERLEAVED_FROM``): **interleaved by calculator**,
  round robin: the first chosen row of every calculator (calculators in ``Calculator ID`` order),
  then the second of every calculator that has one, and so on; a calculator's rows come in the
  order step 3 chose them (statuses in turn, each by rank). The first N rows cover
  ``min(N, calculators)`` calculators;
* releases 1.0.0 to 2.1.0 keep the order they were published with: ascending ``Row Number``
  (grouped by calculator, so a ``--limit 20`` run there sees two calculators).
"""

from __future__ import annotations

import hashlib

import pandas as pd

from medcalc_maintained.core.labels import RECORD_STATUSES, UNVERIFIED
from medcalc_maintained.core.versions import rules

ORDER = tuple(RECORD_STATUSES)  # corrected, abstain, confirmed


def rank_key(split: str, uid: int) -> str:
    return hashlib.sha256(f"{split}:{int(uid)}".encode("utf-8")).hexdigest()


def select(default: pd.DataFrame, split: str, per_calculator: int, version: str | None = None) -> pd.DataFrame:
    """The ``mini`` rows of one split's ``default`` frame (same columns), in the order of release
    ``version``: interleaved by calculator from ``MINI_INTERLEAVED_FROM`` on, else by ``Row Number``
    (also for ``version=None``: the order does not matter to a caller that asks for none)."""
    if per_calculator < 1:
        raise ValueError(f"per_calculator must be at least 1, got {per_calculator}")
    verified = default[default["Label Status"].astype(str) != UNVERIFIED]
    if verified.empty:
        return default.iloc[0:0]
    keys = [rank_key(split, int(u)) for u in verified["Row Number"]]
    ranked = verified.assign(_rank=keys).sort_values("_rank", kind="stable")
    chosen: list[list[int]] = []  # per calculator (in Calculator ID order), in the order chosen
    for _cid, group in ranked.groupby(ranked["Calculator ID"].astype(int), sort=True):
        queues = [list(group.index[group["Label Status"].astype(str) == st]) for st in ORDER]
        queues += [list(group.index[~group["Label Status"].astype(str).isin(ORDER)])]
        picked: list[int] = []
        while len(picked) < per_calculator and any(queues):
            for q in queues:
                if q and len(picked) < per_calculator:
                    picked.append(q.pop(0))
        chosen.append(picked)
    if version is not None and rules(version).interleaved_mini:
        return default.loc[interleave(chosen)].reset_index(drop=True)
    out = default.loc[[i for picked in chosen for i in picked]]
    return out.sort_values("Row Number", key=lambda s: s.astype(int), kind="stable").reset_index(drop=True)


def interleave(groups: list[list[int]]) -> list[int]:
    """Round robin over ``groups``: the first item of each group in turn, then the second, ..."""
    longest = max((len(g) for g in groups), default=0)
    return [g[i] for i in range(longest) for g in groups if i < len(g)]


def rule_text(per_calculator: int, version: str | None = None) -> str:
    text = (f"up to {per_calculator} verified rows per calculator (all of them when a calculator has fewer), "
            "balanced over `Label Status` by taking `corrected`, `abstain` and `confirmed` rows in turn; "
            "within each status, rows are ranked by the sha256 of `<split>:<Row Number>`, so the choice "
            "never depends on row order and a row is chosen in every release where its calculator's "
            "verified rows and statuses are unchanged")
    if version is not None and rules(version).interleaved_mini:
        return text + (". Its rows are interleaved by calculator (round robin in `Calculator ID` order: the "
                       "first chosen row of every calculator, then the second, ...), so the first N rows "
                       "(`lm_eval --limit N`, `select(range(N))`) cover min(N, calculators) calculators")
    return text + ". Its rows are in `Row Number` order, as this release was published"
