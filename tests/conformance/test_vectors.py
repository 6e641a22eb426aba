"""Conformance vectors (issue 50): every calculator has vectors, they follow the declared definition,
and this package's calculators pass every one of them."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.policy import guideline_version
from medcalc_maintained.conformance import load_vectors, resolve, run_vectors


@pytest.fixture(scope="module")
def vectors():
    return load_vectors()


def test_every_calculator_has_vectors(vectors):
    assert sorted(v.calculator_id for v in vectors) == sorted(load_all())
    assert len(vectors) == 55


def test_vectors_follow_the_declared_definition_and_cite_it(vectors):
    for v in vectors:
        assert v.follows == guideline_version(v.calculator_id)
        assert v.source.strip() and v.formula.strip()
        assert len(v.cases) >= 5, f"calculator {v.calculator_id}: {len(v.cases)} cases"
        assert all(c.why.strip() for c in v.cases)


def test_our_calculators_pass_every_vector(vectors):
    report = run_vectors(vectors, resolve("ours"))
    failures = [(c.calculator_id, r.case.id, r.case.expected, r.got, r.reason)
                for c in report.calculators for r in c.results if not r.ok]
    assert failures == []
    assert report.totals()[2] == sum(len(v.cases) for v in vectors) > 55 * 5


def test_every_published_alternative_fails_a_vector(vectors):
    """The vectors tell the declared definition from each alternative the policy names (the 2009
    CKD-EPI, CHA2DS2-VA, MELD 2002, ...): each alternative, run as an implementation, fails a case."""
    from medcalc_maintained.calculators.alternatives import ALTERNATIVES, compute_alternative
    from medcalc_maintained.conformance.base import Implementation, NoResult

    by_id = {v.calculator_id: v for v in vectors}
    passing_all = []
    for cid, name in sorted(ALTERNATIVES):
        def call(c, inputs, name=name):
            value = compute_alternative(c, name, inputs).value
            if value is None:
                raise NoResult("not computable")
            return value

        result = run_vectors([by_id[cid]], Implementation(name, name, call)).calculators[0]
        if result.passed == result.cases:
            passing_all.append((cid, name))
    assert len(ALTERNATIVES) >= 20 and passing_all == []
