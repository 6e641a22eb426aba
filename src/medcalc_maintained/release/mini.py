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
"""

from __future__ import annotations

import hashlib

import pandas as pd

from medcalc_maintained.core.labels import RECORD_STATUSES, UNVERIFIED

ORDER = tuple(RECORD_STATUSES)  # corrected, abstain, confirmed


def rank_key(split: str, uid: int) -> str:
    return hashlib.sha256(f"{split}:{int(uid)}".encode("utf-8")).hexdigest()


def select(default: pd.DataFrame, split: str, per_calculator: int) -> pd.DataFrame:
    """The ``mini`` rows of one split's ``default`` frame (same columns, sorted by uid)."""
    if per_calculator < 1:
        raise ValueError(f"per_calculator must be at least 1, got {per_calculator}")
    verified = default[default["Label Status"].astype(str) != UNVERIFIED]
    if verified.empty:
        return default.iloc[0:0]
    keys = [rank_key(split, int(u)) for u in verified["Row Number"]]
    ranked = verified.assign(_rank=keys).sort_values("_rank", kind="stable")
    chosen: list[int] = []
    for _cid, group in ranked.groupby(ranked["Calculator ID"].astype(int), sort=True):
        queues = [list(group.index[group["Label Status"].astype(str) == st]) for st in ORDER]
        queues += [list(group.index[~group["Label Status"].astype(str).isin(ORDER)])]
        picked: list[int] = []
        while len(picked) < per_calculator and any(queues):
            for q in queues:
                if q and len(picked) < per_calculator:
                    picked.append(q.pop(0))
        chosen += picked
    out = default.loc[chosen]
    return out.sort_values("Row Number", key=lambda s: s.astype(int), kind="stable").reset_index(drop=True)


def rule_text(per_calculator: int) -> str:
    return (f"up to {per_calculator} verified rows per calculator (all of them when a calculator has fewer), "
            "balanced over `Label Status` by taking `corrected`, `abstain` and `confirmed` rows in turn; "
            "within each status, rows are ranked by the sha256 of `<split>:<Row Number>`, so the choice "
            "never depends on row order and a row is chosen in every release where its calculator's "
            "verified rows and statuses are unchanged")
