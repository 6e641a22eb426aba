"""Voting rules of the audit (likely-error flag) and the relabel (supermajority or deferral),
with expected outcomes worked out by hand."""

from __future__ import annotations

import datetime as dt

import pytest

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.verifiers.voting import audit_tally, required_votes, supermajority, vote_key


def test_issue_examples():
    # 12,12,12,12,13 -> four agree: labelled 12
    c = supermajority(["12", "12", "12", "12", "13"], "integer", 4)
    assert (c.status, c.label.value, c.votes, c.runs) == ("labeled", 12.0, 4, 5)
    # 12,12,13,13,N/A -> the largest group has 2: deferred
    c = supermajority(["12", "12", "13", "13", "N/A"], "integer", 4)
    assert (c.status, c.label, c.votes) == ("deferred", None, 2)
    # five abstentions -> the label is N/A
    c = supermajority(["N/A"] * 5, "decimal", 4)
    assert c.status == "labeled" and c.label.is_abstain and c.votes == 5


def test_reals_agree_to_two_decimals():
    # 25.238, 25.2381, 25.24, 25.2449 all round (half up) to 25.24; 25.245 rounds to 25.25
    c = supermajority(["25.238", "25.2381", "25.24", "25.2449", "25.245"], "decimal", 4)
    assert c.status == "labeled" and c.votes == 4
    # the label is the most frequent exact value of the group; all differ -> the earliest run
    assert c.label.value == 25.238
    assert vote_key(parse_answer("25.245", "decimal")) == ("number", "25.25")
    assert vote_key(parse_answer("0.004", "decimal")) == ("number", "0.00")
    assert vote_key(parse_answer("-0.004", "decimal")) == ("number", "0.00")
    # 3 of 5 agree is not enough
    assert supermajority(["1.10", "1.1", "1.104", "1.2", "1.3"], "decimal", 4).status == "deferred"


def test_most_frequent_exact_value_is_the_label():
    c = supermajority(["7.011", "7.009", "7.009", "7.01", "3"], "decimal", 4)
    assert c.status == "labeled" and c.label.value == 7.009 and c.votes == 4


def test_dates_agree_exactly_and_types_must_match():
    c = supermajority(["03/14/2021", "2021-03-14", "03/14/2021", "03/14/2021", "03/15/2021"], "date", 4)
    assert c.status == "labeled" and c.label.value == dt.date(2021, 3, 14)
    # one day apart is a different vote
    assert supermajority(["03/14/2021", "03/14/2021", "03/14/2021", "03/15/2021", "03/15/2021"], "date", 4).status == "deferred"
    # a number and N/A never agree: 3 numbers + 2 N/A -> deferred
    assert supermajority(["4", "4", "4", "N/A", "N/A"], "integer", 4).status == "deferred"


def test_gestational_age_forms_agree():
    # ('14 weeks', '1 days') is 99 days
    c = supermajority(["('14 weeks', '1 days')", "99", "14 weeks 1 day", "('14 weeks', '1 days')", "98"], "integer", 4)
    assert c.status == "labeled" and c.label.value == 99.0 and c.votes == 4


def test_unparseable_answers_agree_with_nothing():
    c = supermajority(["12", "12", "12", "about twelve", "twelve-ish"], "integer", 4)
    assert c.status == "deferred" and c.votes == 3
    assert supermajority(["x"] * 5, "integer", 4).status == "deferred"


def test_audit_flag_needs_four_no_votes():
    t = audit_tally(["no", "no", "no", "no", "yes"], 4)
    assert t["flagged"] and t["votes_wrong"] == 4 and t["votes_correct"] == 1
    t = audit_tally(["no", "no", "no", "unparseable", "unparseable"], 4)
    assert not t["flagged"] and t["votes_unparseable"] == 2
    # deterministic backend: one vote, flagged when it says no
    assert audit_tally(["no"], 1)["flagged"] and not audit_tally(["abstain"], 1)["flagged"]
    assert not audit_tally([], 1)["flagged"]
    with pytest.raises(ValueError):
        audit_tally(["maybe"], 1)


def test_required_votes_scale_with_runs():
    # ceil(n * 4 / 5): 0.8 -> 1, 1.6 -> 2, 2.4 -> 3, 3.2 -> 4, 4 -> 4, 8 -> 8
    assert [required_votes(n, 4, 5) for n in (1, 2, 3, 4, 5, 10)] == [1, 2, 3, 4, 4, 8]
    # 2 of 3 scaled to 6 runs is 4; no run still needs one vote
    assert required_votes(6, 2, 3) == 4 and required_votes(0, 4, 5) == 1
