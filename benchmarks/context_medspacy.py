"""The ConText algorithm as medspaCy maintains it, behind the signatures of ``note_text``'s context rules.

For comparison only (``benchmarks/evidence_context.py``): the evidence verifier decides whether a
criterion's term is negated, planned / suspected or a relative's with its own rules
(:func:`note_text.negated` / :func:`note_text.negation_cue`, :func:`note_text.planned`,
:func:`note_text.family`); the functions here answer the same questions with medspaCy's ConText
component and its default rules, so that one can replace the other at run time.

How: the note is split into sentences once by medspaCy's PyRuSH sentencizer; the sentence holding the
term becomes a fresh Doc (``spacy.blank("en")`` tokenizer), the term's characters become its single
target entity (``char_span(..., alignment_mode="expand")``), and ConText marks it ``is_negated``,
``is_uncertain`` (possible existence), ``is_hypothetical``, ``is_family`` or ``is_historical``
(:func:`negation_cue` gives the negating modifier's text, as ``note_text.negation_cue`` gives its cue).

medspaCy (``medspacy==1.3.1``, spaCy 3.7) is not a dependency of the project: it is imported on first
use. Its spaCy 3.7 / thinc 8.2 need numpy < 2, so it lives in a separate environment.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import Any

ATTRIBUTES = ("is_negated", "is_uncertain", "is_hypothetical", "is_family", "is_historical")
# the attributes ConText sets per modifier category (medspacy.context.DEFAULT_ATTRIBUTES)
DEFAULT_ATTRIBUTES = {"NEGATED_EXISTENCE": ("is_negated",), "POSSIBLE_EXISTENCE": ("is_uncertain",),
                      "HISTORICAL": ("is_historical",), "HYPOTHETICAL": ("is_hypothetical",), "FAMILY": ("is_family",)}


@lru_cache(maxsize=1)
def pipeline() -> tuple[Any, Any]:
    """(a blank English pipeline with medspaCy's PyRuSH sentencizer, medspaCy's ConText component), built once."""
    import medspacy  # type: ignore[import-not-found]  # noqa: F401  (registers the medspacy_* factories)
    import spacy  # type: ignore[import-not-found]  # (medspaCy is no dependency of the project)
    from loguru import logger  # type: ignore[import-not-found]

    logger.disable("PyRuSH")  # PyRuSH logs every sentence boundary at DEBUG level
    nlp = spacy.blank("en")
    nlp.add_pipe("medspacy_pyrush")
    context = nlp.add_pipe("medspacy_context")  # default rules, targets read from doc.ents
    return nlp, context


@lru_cache(maxsize=256)
def sentences(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(starts, ends) of the note's sentences as medspaCy's sentencizer splits it, in order."""
    nlp, _ = pipeline()
    with nlp.select_pipes(enable=["medspacy_pyrush"]):
        doc = nlp(text)
    sents = [(s.start_char, s.end_char) for s in doc.sents]
    return tuple(a for a, _ in sents), tuple(b for _, b in sents)


@lru_cache(maxsize=4096)
def modifiers(text: str, s: int, e: int) -> tuple[tuple[str, str], ...]:
    """(category, text) of the ConText modifiers of the term at ``text[s:e]`` in its sentence."""
    nlp, context = pipeline()
    starts, ends = sentences(text)
    i = max(0, bisect_right(starts, s) - 1)
    sa, sb = (starts[i], max(ends[i], e)) if starts else (0, len(text))
    doc = nlp.make_doc(text[sa:sb])
    for k, tok in enumerate(doc):  # the whole Doc is the one sentence: ConText's scope
        tok.is_sent_start = k == 0
    span = doc.char_span(s - sa, max(e, s + 1) - sa, label="TARGET", alignment_mode="expand")
    if span is None:
        return ()
    doc.ents = [span]
    doc = context(doc)
    return tuple((m.category, doc[slice(*m.modifier_span)].text) for m in doc.ents[0]._.modifiers)


def attributes(text: str, s: int, e: int) -> frozenset[str]:
    """The ConText attributes (of :data:`ATTRIBUTES`) its modifiers set on the term at ``text[s:e]``."""
    return frozenset(a for cat, _ in modifiers(text, s, e) for a in DEFAULT_ATTRIBUTES.get(cat, ()))


_last_term: tuple[str, int, int] | None = None  # (text, start, end) of the last negated() / negation_cue() call


def _end(text: str, s: int, e: int | None) -> int:
    """The term's end for the functions that ``note_text`` gives only its start: ``e`` when given, else the
    end of the term the last :func:`negated` call asked about at ``s`` (the verifier asks it first),
    else the token at ``s``."""
    if e is not None:
        return e
    if _last_term is not None and _last_term[1] == s and _last_term[0] == text:
        return _last_term[2]
    return s + 1


def negation_cue(text: str, s: int, e: int) -> str | None:
    """The ConText modifier that negates the term at ``text[s:e]`` (NEGATED_EXISTENCE), or ``None``."""
    global _last_term
    _last_term = (text, s, e)
    return next((t for cat, t in modifiers(text, s, e) if cat == "NEGATED_EXISTENCE"), None)


def negated(text: str, s: int, e: int) -> bool:
    """Whether ConText marks the term at ``text[s:e]`` negated (NEGATED_EXISTENCE)."""
    return negation_cue(text, s, e) is not None


def planned(text: str, s: int, e: int | None = None) -> bool:
    """Whether ConText marks the term at ``s`` hypothetical or possible (HYPOTHETICAL, POSSIBLE_EXISTENCE)."""
    return bool({"is_hypothetical", "is_uncertain"} & attributes(text, s, _end(text, s, e)))


def family(text: str, s: int, e: int | None = None) -> bool:
    """Whether ConText marks the term at ``s`` as another person's (FAMILY)."""
    return "is_family" in attributes(text, s, _end(text, s, e))


def historical(text: str, s: int, e: int | None = None) -> bool:
    """Whether ConText marks the term at ``s`` historical (HISTORICAL); the verifier has no such rule for flags."""
    return "is_historical" in attributes(text, s, _end(text, s, e))


def cache_clear() -> None:
    """Forget the notes' sentences and the terms' attributes (to time a fresh run)."""
    global _last_term
    sentences.cache_clear()
    modifiers.cache_clear()
    _last_term = None
