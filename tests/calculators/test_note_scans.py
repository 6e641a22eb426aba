"""The verifier's two hottest scans of a note, each faster than the plain regex scan it stands for and equal to it:

* the lexicon's term scan (``lexicon._finditer``): the spans of its compiled alternation's ``finditer``,
  found by trying the pattern only where a term can begin;
* the sentence around a position (``note_text.sentence``): the last sentence end before it, looked for
  back from it in widening windows instead of from the note's start.

The references are the plain scans (Python's own ``finditer`` of the same pattern), on made-up texts that
reach each rule and on real notes of v1.0."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T


def reference(terms: tuple[str, ...], patterns: tuple[str, ...], text: str) -> list[tuple[int, int]]:
    pat = L._compiled(terms, patterns)
    return [] if pat is None else [(m.start(), m.end()) for m in pat.finditer(text)]


CASES = [
    # case-insensitive terms, a word character before a term (no match), the longest term first
    (("heart rate", "heart"), (), "Heart Rate 88; heartrate; HEART failure; sweetheart rate"),
    # a short term with a capital keeps its case: HR, not hr or Hr
    (("HR", "pulse"), (), "HR 90, hr 80, Hr 70, PULSE 60, (HR)72"),
    # spaces and hyphens between words, a typographic apostrophe
    (("high-density lipoprotein", "doesn't drink"), (), "high density\nlipoprotein 40; she doesn’t drink; high--density lipoprotein"),
    # a term that begins with an apostrophe or a hyphen: the whole text is scanned, as before
    (("'pack years", "-ve"), (), "20 'pack years; culture -ve"),
    # a term that begins with a character the pattern escapes
    (("(mmHg)", "[K]", "^sodium"), (), "BP 120/80 (mmHg), potassium [K] 4.1, ^sodium"),
    # Unicode case folding: the Kelvin sign K and the long s match k and s case-insensitively
    (("kg", "sodium"), (), "70 \u212ag, \u017fodium 140, KG"),
    # with patterns the whole text is scanned
    (("creatinine",), (r"\bcr\b",), "creatinine 1.2, cr 1.1"),
    # terms that match next to each other and overlap
    (("ab", "abc", "bc"), (), "abc ab bc abcab ab-bc"),
]


@pytest.mark.parametrize("terms, patterns, text", CASES)
def test_the_scan_finds_what_finditer_finds(terms, patterns, text):
    got = L._finditer(terms, patterns, text)
    assert got == reference(terms, patterns, text)


def test_the_made_up_texts_reach_the_rules_they_are_for():
    # not vacuous: the cases above do match, and where the scan falls back it says so
    assert L._finditer(("HR", "pulse"), (), "HR 90, hr 80, Hr 70, PULSE 60, (HR)72") == [(0, 2), (21, 26), (32, 34)]
    assert L._starts(("'pack years", "-ve")) is None and L._starts(("HR", "kg")) is not None
    assert L._finditer(("kg",), (), "70 \u212ag") == [(3, 5)]


def test_every_lexicon_term_set_scans_real_notes_as_finditer_does(real_instances):
    entries, _ = L.load_lexicon()
    sets = {(e.names, e.patterns) for e in entries.values() if e.names or e.patterns}
    sets |= {(e.masks, ()) for e in entries.values() if e.masks}
    sets |= {(e.names, e.patterns) for _, e in L.all_quantities()}
    notes = real_instances["Patient Note"].tolist()[::350]  # three notes of different calculators
    matched = 0
    for note in notes:
        for terms, patterns in sorted(sets):
            got = L._finditer(terms, patterns, note)
            assert got == reference(terms, patterns, note), (terms[:3], note[:80])
            matched += bool(got)
    assert len(sets) > 500 and matched > 50  # 75 with this lexicon


# ---------------------------------------------------------------- the sentence around a position


def sentence_from_the_start(text: str, pos: int) -> tuple[int, int]:
    """The reference: every sentence end from the text's start up to ``pos``, the last one taken."""
    start = 0
    for m in T.SENTENCE_END.finditer(text, 0, pos):
        start = m.end()
    end = T.SENTENCE_END.search(text, pos)
    return start, (end.start() if end else len(text))


@pytest.mark.parametrize("text", [
    "a" * 700 + ". B" + "c" * 900,          # the end lies beyond the first two windows back
    "Weight 5.  X was given; then 7. " * 40,  # "5." ends a sentence only before a capital, read up to pos
    "i.e. x and e.g. y. Z\nlower\nUpper",   # abbreviations, and line breaks that do or do not end it
    "A.\nb" * 300 + "end",                   # an end on every few characters
    "no end at all " * 60,
])
def test_the_sentence_is_the_one_a_scan_from_the_start_finds(text):
    for pos in range(len(text) + 1):
        assert T.sentence(text, pos) == sentence_from_the_start(text, pos), pos


def test_the_sentences_of_real_notes_are_the_ones_a_scan_from_the_start_finds(real_instances):
    notes = real_instances["Patient Note"].tolist()[::100]
    checked = 0
    for note in notes:
        for pos in range(0, len(note) + 1, 7):
            assert T.sentence(note, pos) == sentence_from_the_start(note, pos), pos
            checked += 1
    assert checked > 1000
