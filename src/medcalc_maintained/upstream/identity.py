"""Row identity across upstream versions: which row of one upstream file is which row of another.

Upstream MedCalc-Bench publishes each version as a whole new file; ``Row Number`` is renumbered
and notes, questions and labels change. The rule used here (the one rule of the package):

1. **Normalised text.** Notes and questions are compared after Unicode NFKC, typographic quotes
   and dashes to ASCII, lower-casing and collapsing every run of whitespace to one space
   (:func:`normalise`). Their fingerprints are the
   first 16 hex digits of the sha256 of that text (:func:`fingerprint`).
2. **Calculator is a hard constraint.** Rows are only ever matched within one ``Calculator ID``.
3. **Candidates and their score.** A candidate pair is ranked by, in this order: same note and
   same question (basis ``exact``), same note (basis ``note``: the question changed), and the
   token-set Jaccard similarity of the two notes (basis ``fuzzy``; tokens are words and numbers,
   ``4.32`` is one token, dates split at ``/``). A fuzzy candidate needs a similarity of at least
   :data:`THRESHOLD` ("lightly edited"). Similarities are found through an inverted index of
   tokens per calculator, so only pairs that share a token are ever scored.
4. **Mutual best.** A pair is matched when each row is the other's single best free candidate.
   When several candidates tie for best, the one with the same ``Note ID`` wins (the hint; the
   basis gets ``+note_id``); ``Note ID`` never creates a candidate and never beats a better score.
   Matched rows leave the pool and the step repeats until nothing more matches.
5. **What is left.** A row that still has a free candidate is ``ambiguous`` (its tied candidates
   are listed); an old row without one is ``removed``, a new row without one is ``added``.

The similarity of every matched pair is recorded (1.0 for ``exact`` and ``note``).
:func:`instance_keys` derives the stable content id ``instance_key`` from the same fingerprints.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

import pandas as pd

from medcalc_maintained.core.rows import Row, rows_of

THRESHOLD = 0.8  # the least token-set Jaccard similarity of two notes that still counts as "lightly edited"
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[^\W\d_]+")


_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"',
                         "\u201e": '"', "\u2013": "-", "\u2014": "-", "\u2212": "-"})


@lru_cache(maxsize=8192)
def _normalise(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).lower().split())


def normalise(text: object) -> str:
    """NFKC, typographic quotes and dashes as ASCII, lower case, whitespace runs collapsed to one space."""
    return _normalise(str(text or ""))


def fingerprint(text: object) -> str:
    """First 16 hex digits of the sha256 of the normalised text."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:16]


def tokens(text: object) -> frozenset[str]:
    """The set of word and number tokens of the normalised text."""
    return frozenset(_TOKEN.findall(normalise(text)))


def content_key(calculator_id: object, note: object, question: object) -> str:
    """``k-`` + 16 hex digits: sha256 of calculator, note fingerprint and question fingerprint."""
    raw = f"{str(calculator_id).strip()}|{fingerprint(note)}|{fingerprint(question)}"
    return "k-" + hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def instance_keys(df: pd.DataFrame) -> pd.Series:
    """The ``instance_key`` of every row of an upstream frame (upstream column names).

    The content key of calculator, note and question; rows of one file that share it (upstream
    duplicates) get the ``Note ID`` appended (``k-…~note-id``) and, if still equal, ``#2``, ``#3`` in
    row order, so the column is unique within a file. The key does not depend on ``Row Number``,
    so a renumbered but otherwise unchanged row keeps its key across upstream versions.
    """
    rows = rows_of(df)
    base = [content_key(r.calculator, r.note, r.question) for r in rows]
    counts = Counter(base)
    keys = [k if counts[k] == 1 else f"{k}~{r.note_id}" for k, r in zip(base, rows)]
    seen: Counter[str] = Counter()
    out = []
    totals = Counter(keys)
    for k in keys:
        seen[k] += 1
        out.append(k if totals[k] == 1 or seen[k] == 1 else f"{k}#{seen[k]}")
    return pd.Series(out, index=df.index, name="instance_key", dtype="string")


@dataclass
class Fingerprint:
    """What row identity compares of one :class:`~medcalc_maintained.core.rows.Row` (:func:`fingerprints`)."""

    uid: int
    calc: str
    note_fp: str
    question_fp: str
    note_id: str
    tokens: frozenset[str]


@dataclass
class Match:
    """One line of the row map: a matched pair, or a row that is added, removed or ambiguous."""

    status: str                 # matched | added | removed | ambiguous
    old_uid: int | None
    new_uid: int | None
    basis: str = ""             # exact | note | fuzzy, + "+note_id" when the hint broke a tie
    similarity: float | None = None
    candidates: list[int] = field(default_factory=list)  # ambiguous: the tied uids of the other file
    side: str = ""              # ambiguous: "old" or "new"


def fingerprints(rows: list[Row]) -> list[Fingerprint]:
    """The identity-relevant view of each row: uid, calculator, note and question fingerprints,
    ``Note ID`` and the note's tokens."""
    return [Fingerprint(r.uid, r.calculator, fingerprint(r.note), fingerprint(r.question), r.note_id, tokens(r.note))
            for r in rows]


Score = tuple[int, int, float]  # (same note and question, same note, similarity)


def _candidates(old: list[Fingerprint], new: list[Fingerprint], threshold: float) -> dict[int, dict[int, Score]]:
    """``edges[i][j]``: score of old row i against new row j, for every pair worth scoring."""
    edges: dict[int, dict[int, Score]] = defaultdict(dict)
    by_calc: dict[str, list[int]] = defaultdict(list)
    for j, r in enumerate(new):
        by_calc[r.calc].append(j)
    for calc, js in by_calc.items():
        index: dict[str, list[int]] = defaultdict(list)
        by_note: dict[str, list[int]] = defaultdict(list)
        for j in js:
            by_note[new[j].note_fp].append(j)
            for t in new[j].tokens:
                index[t].append(j)
        old_notes = Counter(o.note_fp for o in old if o.calc == calc)
        for i, o in enumerate(old):
            if o.calc != calc:
                continue
            for j in by_note.get(o.note_fp, ()):
                edges[i][j] = (int(o.question_fp == new[j].question_fp), 1, 1.0)
            if old_notes[o.note_fp] == 1 and len(by_note.get(o.note_fp, ())) == 1:
                continue  # a note found once on each side: that pair is mutually best, no need to score others
            shared = Counter(j for t in o.tokens for j in index.get(t, ()))
            for j, inter in shared.items():
                if j in edges[i]:
                    continue
                sim = inter / (len(o.tokens) + len(new[j].tokens) - inter)
                if sim >= threshold:
                    edges[i][j] = (0, 0, round(sim, 6))
    return edges


def _best(options: dict[int, Score], free: set[int], hint: str, ids: list[str]) -> tuple[int | None, bool, list[int]]:
    """The single best free option (using the Note ID hint on a tie), whether the hint decided,
    and the tied best options."""
    live = {k: s for k, s in options.items() if k in free}
    if not live:
        return None, False, []
    top = max(live.values())
    tied = sorted(k for k, s in live.items() if s == top)
    if len(tied) == 1:
        return tied[0], False, tied
    hinted = [k for k in tied if ids[k] == hint]
    return (hinted[0], True, tied) if len(hinted) == 1 else (None, False, tied)


def _basis(score: Score, hinted: bool) -> str:
    base = "exact" if score[0] else "note" if score[1] else "fuzzy"
    return base + ("+note_id" if hinted else "")


def match_rows(old: list[Fingerprint], new: list[Fingerprint], *, threshold: float = THRESHOLD, use_note_id: bool = True) -> list[Match]:
    """Apply the rule of this module; one :class:`Match` per old row and per unmatched new row."""
    edges = _candidates(old, new, threshold)
    back: dict[int, dict[int, Score]] = defaultdict(dict)
    for i, opts in edges.items():
        for j, s in opts.items():
            back[j][i] = s
    old_ids = [r.note_id if use_note_id else f"\0{k}" for k, r in enumerate(old)]
    new_ids = [r.note_id if use_note_id else f"\1{k}" for k, r in enumerate(new)]
    free_old, free_new = set(edges), set(back)
    pairs: dict[int, tuple[int, str, float]] = {}
    while True:
        found = []
        for i in sorted(free_old):
            best, hint_i, _ = _best(edges[i], free_new, old[i].note_id if use_note_id else "", new_ids)
            if best is None:
                continue
            i2, hint_j, _ = _best(back[best], free_old, new[best].note_id if use_note_id else "", old_ids)
            if i2 == i:
                found.append((i, best, _basis(edges[i][best], hint_i or hint_j), edges[i][best][2]))
        if not found:
            break
        for i, j, basis, sim in found:
            pairs[i] = (j, basis, sim)
            free_old.discard(i)
            free_new.discard(j)
    out: list[Match] = []
    matched_new = {j for j, _, _ in pairs.values()}
    for i, o in enumerate(old):
        if i in pairs:
            j, basis, sim = pairs[i]
            out.append(Match("matched", o.uid, new[j].uid, basis, sim))
            continue
        tied = _best(edges.get(i, {}), free_new, "", new_ids)[2]
        if tied:
            out.append(Match("ambiguous", o.uid, None, candidates=[new[j].uid for j in tied], side="old"))
        else:
            out.append(Match("removed", o.uid, None))
    for j, n in enumerate(new):
        if j in matched_new:
            continue
        tied = _best(back.get(j, {}), free_old, "", old_ids)[2]
        if tied:
            out.append(Match("ambiguous", None, n.uid, candidates=[old[i].uid for i in tied], side="new"))
        else:
            out.append(Match("added", None, n.uid))
    return out


def match_frames(old: pd.DataFrame, new: pd.DataFrame, **kw) -> list[Match]:
    """:func:`match_rows` on two upstream frames (upstream column names, ``Row Number`` as uid)."""
    return match_rows(fingerprints(rows_of(old)), fingerprints(rows_of(new)), **kw)
