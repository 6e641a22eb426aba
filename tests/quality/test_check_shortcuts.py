"""The shortcuts that make the checks fast never change an answer: required literals of a pattern,
sentence bounds without a regex, the guard before the change regex, and the row-parallel map."""

from __future__ import annotations

import re
import signal

import pytest

from medcalc_maintained.core.parallel import map_chunks, worker_count
from medcalc_maintained.quality.checks import Instance
from medcalc_maintained.quality.checks.prefilter import cannot_match, required
from medcalc_maintained.quality.checks.registry import fast_twin
from medcalc_maintained.quality.checks.rules import rules
from medcalc_maintained.quality.checks.value_checks import _CHANGE_BEFORE, _is_change


@pytest.mark.parametrize("pattern, literals", [
    (r"\b(?:spayed|neutered|feline)\b", {"spayed", "neutered", "feline"}),
    (r"\b\d+[- ](?:month|week)s?[- ]old\b", {"-month", " month", "-week", " week"}),  # longest shortest member
    (r"weight (?:loss|gain)\s*\d", {"weight loss", "weight gain"}),      # runs continue through alternations
    (r"(?:diagnosed with|consistent with) (?:acute )?mononucleosis", {"diagnosed with ", "consistent with "}),
    (r"(?:on|in) (?:acute )?mononucleosis", {"mononucleosis"}),
    (r"tonsil", {"tonsil"}),
])
def test_required_literals_of_a_pattern(pattern, literals):
    assert set(required(re.compile(pattern))) == literals


@pytest.mark.parametrize("pattern, flags", [
    (r"(?:ascites)?\d+", 0),          # the only literal is optional
    (r"\d+\s*\w+", 0),                # no literal at all
    (r"ascites", re.I),               # case-insensitive patterns get none (their twins do)
    (r"(a)b\1", 0),                   # back-references: no shortcut
])
def test_patterns_without_a_shortcut(pattern, flags):
    assert required(re.compile(pattern, flags)) is None
    assert not cannot_match(re.compile(pattern, flags), "")


def _rule_patterns() -> list[re.Pattern]:
    r = rules()
    pats = [p for group in (r.required_inputs, r.figure_only, r.not_applicable) for rule in group for p in rule.patterns]
    pats += [*r.weight_change, *r.pediatric, *(p.pattern for p in r.printed_values)]
    pats += [x for b in r.boolean_criteria for x in (b.concept, b.wrong_if_before, b.needs_before, b.wrong_if_near) if x]
    return pats + [_CHANGE_BEFORE]


def test_a_skipped_search_never_had_a_match_on_real_notes(real_instances):
    """Soundness on every rule pattern and every v1.0 note: whenever the shortcut says "cannot
    match", the engine finds nothing either; and the shortcut does skip most searches."""
    notes = [n.lower() for n in real_instances["Patient Note"].tolist()]
    skipped = searched = 0
    for pat in _rule_patterns():
        twin = fast_twin(pat)
        assert twin is not None, f"rule pattern {pat.pattern!r} has no lower-case twin"
        for note in notes:
            if cannot_match(twin, note):
                skipped += 1
                assert twin.search(note) is None, (pat.pattern, note[:80])
            else:
                searched += 1
    assert skipped > 2 * searched


def test_boundary_probe_finds_what_the_pattern_finds(real_instances):
    """A pattern that starts with a word boundary is searched by way of its probe (the pattern
    without it): on every v1.0 note, every such rule pattern gives the very match of re.search."""
    from medcalc_maintained.quality.checks.registry import _probe, _search

    assert _search(re.compile(r"\bcat\b"), "concat and a cat").span() == (13, 16)  # the probe's first hit is no word
    assert _probe(re.compile(r"cat")) is None
    notes = [n.lower() for n in real_instances["Patient Note"].tolist()]
    probed = [fast_twin(p) for p in _rule_patterns() if fast_twin(p).pattern.startswith("\\b")]
    assert len(probed) >= 10
    for pat in probed:
        for note in notes:
            a, b = pat.search(note), _search(pat, note)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())), pat.pattern


def _sentences_by_regex(note: str, start: int, end: int) -> tuple[str, int, int]:
    """The sentence rule written the slow, obvious way: stops found by a regex."""
    stops = [m.start() for m in re.finditer(r"[.!?\n]", note)]
    left = max([s + 1 for s in stops if s < start], default=0)
    right = min([s + 1 for s in stops if s >= end], default=len(note))
    while left < right and note[left].isspace():
        left += 1
    text = note[left:right].rstrip()
    return text, left, left + len(text)


def test_sentence_bounds_match_the_regex_rule(real_instances):
    synthetic = "Wow! Is it? Yes.\nNext line has 7 kg. Last bit without a stop"
    inst = Instance(note=synthetic)
    assert inst.sentence_at(synthetic.index("7")) == ("Next line has 7 kg.", 17, 36)
    assert inst.sentence_at(len(synthetic) - 1)[0] == "Last bit without a stop"
    for note in real_instances["Patient Note"].tolist()[::10]:
        inst = Instance(note=note)
        for a in range(0, len(note), max(1, len(note) // 17)):
            b = min(len(note), a + 9)
            assert inst.sentence_at(a, b) == _sentences_by_regex(note, a, b)


def test_change_guard_agrees_with_the_regex(real_instances):
    """_is_change runs the change regex only where it can match; on every number of every v1.0 note
    (and on synthetic changes) it answers as the regex alone would."""
    number = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")
    extra = ["He lost 7 kg.", "weight (↓ 4 kg)", "a rise of 12 points", "HR (+ 20) now", "sodium of 140"]
    hits = 0
    for note in real_instances["Patient Note"].tolist() + extra:
        inst = Instance(note=note)
        for m in number.finditer(note):
            a = m.start()
            expected = _CHANGE_BEFORE.search(note[max(0, a - 30):a]) is not None
            assert _is_change(inst, a) is expected, note[max(0, a - 30):a + 5]
            hits += expected
    assert hits >= 4


def test_occurrences_are_the_numbers_the_verifier_reads(real_instances):
    """The checks read a note's numbers as the evidence verifier does (one reader of the note,
    ``calculators/note_text.py``): on every v1.0 note and every value of its entities (and a few
    more), Instance.occurrences gives exactly the spans of the numbers note_text reads equal to it."""
    import json

    from medcalc_maintained.calculators.note_text import numbers as printed_numbers

    checked = 0
    for note, ents in zip(real_instances["Patient Note"].tolist(), real_instances["entities"].tolist()):
        numbers: dict[float, list] = {}
        for s, e, v in printed_numbers(note):
            numbers.setdefault(v, []).append((s, e))
        values = {float(v[0]) for v in json.loads(ents).values()
                  if isinstance(v, list) and len(v) == 2 and isinstance(v[0], (int, float)) and not isinstance(v[0], bool)}
        inst = Instance(note=note)
        for v in values | {0.0, 1.0, 2.0, 10.0, 0.5}:
            assert inst.occurrences(v) == numbers.get(v, []), (v, note[:60])
            checked += 1
    assert checked > 5_000


def _square_chunk(items):
    return [x * x for x in items]


def test_parallel_map_keeps_order_and_content():
    items = list(range(5_123))
    assert map_chunks(_square_chunk, items, workers=2) == [x * x for x in items]
    assert map_chunks(_square_chunk, [], workers=2) == []
    assert worker_count(1_047) == 1          # the pipeline's table stays in one process
    assert worker_count(10, workers=3) == 3


def test_heavy_items_say_how_many_repay_a_worker(monkeypatch):
    """A caller whose items are heavy (a release's tables, a row's evidence read again) asks for a worker per
    few items; never more workers than the cores, nor than there are chunks to hand out."""
    import medcalc_maintained.core.parallel as P

    monkeypatch.setattr(P, "cores", lambda: 2)
    assert worker_count(10, rows_per_worker=1) == 2
    assert worker_count(887, rows_per_worker=200) == 2
    assert worker_count(150, rows_per_worker=200) == 1
    assert worker_count(5_000) == 2

    def no_pool(method):
        raise AssertionError(f"a {method} pool was started for a single chunk")

    monkeypatch.setattr(P.mp, "get_context", no_pool)
    # two items that would repay two workers, in one chunk: no pool at all
    assert map_chunks(_square_chunk, [3, 4], rows_per_worker=1, chunk=2) == [9, 16]


def _nested(items):
    return [sum(map_chunks(_square_chunk, list(range(x)), workers=2, chunk=3)) for x in items]


def test_a_map_inside_a_worker_stays_in_that_worker():
    """A release built in a worker of release-tables certifies its fresh rows with certify.workers processes: a
    pool's worker is daemonic and may not start its own (multiprocessing refuses), so the inner map runs in it."""
    items = [10, 20, 30, 40]
    assert map_chunks(_nested, items, workers=2, chunk=1) == [sum(x * x for x in range(n)) for n in items]


def _ledger_problem(items):
    from medcalc_maintained.ledger.records import LedgerError, LedgerProblem

    if 7 in items:
        raise LedgerError([LedgerProblem("data/corrections/x.yaml", "new_value is not a number", record="fix-7",
                                         field="new_value"), LedgerProblem("data/corrections/x.yaml", "no rationale",
                                                                           record="fix-8", field="rationale")])
    return list(items)


def test_an_error_raised_in_a_worker_reaches_the_caller_whole():
    """The project's errors take the file and problem, not one message, so pickle's default could not
    rebuild them in the parent: the caller gets the same error, every problem with its place."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.ledger.records import LedgerError

    err = _raised_within(60, lambda: map_chunks(_ledger_problem, list(range(20)), workers=2, chunk=2))
    assert type(err) is LedgerError
    assert [(p.record, p.field) for p in err.problems] == [("fix-7", "new_value"), ("fix-8", "rationale")]
    assert err.path == "data/corrections/x.yaml" and err.field == "new_value"
    assert str(err).splitlines() == ["data/corrections/x.yaml, record fix-7, field 'new_value': new_value is not a number",
                                     "data/corrections/x.yaml, record fix-8, field 'rationale': no rationale"]
    plain = _raised_within(60, lambda: map_chunks(_data_error, list(range(20)), workers=2, chunk=2))
    assert type(plain) is DataError
    assert (plain.path, plain.row, plain.field) == ("full.parquet", 12, "uid")
    assert str(plain) == "full.parquet, row 12, field 'uid': not an integer"


def _raised_within(seconds: float, call) -> BaseException:
    """The error ``call`` raises, within ``seconds``: an error the parent cannot rebuild used to leave the
    pool waiting forever, which fails here instead of hanging the suite."""
    import threading

    caught: list[BaseException] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            caught.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"no error came back within {seconds} s: the pool is waiting on a worker's error")
    assert caught, "the call returned without raising"
    return caught[0]


def _data_error(items):
    from medcalc_maintained.core.errors import DataError

    if 12 in items:
        raise DataError("full.parquet", "not an integer", row=12, field="uid")
    return list(items)


def _sigterm_is_default(items):
    return [signal.getsignal(signal.SIGTERM) is signal.SIG_DFL for _ in items]


def test_forked_workers_end_on_sigterm_whatever_the_parent_installed():
    """Pool.terminate ends workers with SIGTERM: a parent's handler that does not exit (verifiers'
    Environment installs one) must not reach them, or the pool's exit waits forever."""
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        assert map_chunks(_sigterm_is_default, list(range(1_200)), workers=2) == [True] * 1_200
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop_signals_blocked(items):
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return [bool(blocked & {signal.SIGTERM, signal.SIGINT}) for _ in items]


def test_a_worker_takes_stop_signals_only_once_its_handlers_are_the_defaults():
    """The pool forks with SIGTERM and SIGINT blocked (a SIGTERM that Pool.terminate sends before a worker's
    initializer runs would meet the parent's handler and be lost, leaving the pool's exit waiting forever);
    the worker unblocks them after restoring their defaults, the parent's mask is restored, and the workers
    end on the pool's sentinel, none left behind."""
    import multiprocessing as mp

    before = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    assert map_chunks(_stop_signals_blocked, list(range(1_200)), workers=2) == [False] * 1_200
    assert signal.pthread_sigmask(signal.SIG_BLOCK, []) == before
    assert mp.active_children() == []


def test_a_sigterm_sent_before_a_worker_restores_its_handlers_still_ends_it():
    """The race the pool's exit hung on: Pool.terminate's SIGTERM reaching a worker forked with the parent's
    handler (here one that does nothing) before the worker's initializer ran. Forked the way the pool forks,
    the signal waits until the initializer has restored the default, and then ends the worker."""
    import os
    import time

    from medcalc_maintained.core.parallel import _blocked, _default_signals

    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    try:
        with _blocked():
            pid = os.fork()
            if pid == 0:  # the worker: slow to start, as under load
                try:
                    time.sleep(0.5)
                    _default_signals()
                    time.sleep(2)
                finally:
                    os._exit(0)
        os.kill(pid, signal.SIGTERM)
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status
