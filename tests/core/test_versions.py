"""A release's rules are one value (core/versions.py: rules): what each release does, decided in one place."""

from __future__ import annotations

import ast

import pytest

from medcalc_maintained.core import versions
from medcalc_maintained.core.versions import FIRST, UNRELEASED, ReleaseRules, rules
from medcalc_maintained.devtools.import_graph import parse
from tests.support.paths import ROOT

SRC = ROOT / "src" / "medcalc_maintained"


@pytest.mark.parametrize("version, on", [
    ("1.0.0", set()), ("2.0.0", set()), ("2.1.0", {"derivations"}),
    ("2.2.0", {"derivations", "evidence_gate", "interleaved_mini"}), ("2.2.1", {"derivations", "evidence_gate", "interleaved_mini"}),
    ("2.3.0", {"derivations", "evidence_gate", "interleaved_mini", "disputed", "evidence_rows", "card_lead"}),
    ("2.3.1", {"derivations", "evidence_gate", "interleaved_mini", "disputed", "evidence_rows", "card_lead",
               "card_visitor", "feed_details"}),
    ("2.3.2", {"derivations", "evidence_gate", "interleaved_mini", "disputed", "evidence_rows", "card_lead",
               "card_visitor", "feed_details", "card_graders"}),
    ("2.4.1", {"derivations", "evidence_gate", "interleaved_mini", "disputed", "evidence_rows", "card_lead",
               "card_visitor", "feed_details", "card_graders", "inputs_config", "conformance"}),
    ("2.4.2", set(FIRST)),
    ("10.0.0", set(FIRST)),
])
def test_each_release_does_what_the_releases_up_to_it_introduced(version, on):
    r = rules(version)
    assert {k for k in FIRST if getattr(r, k)} == on


def test_unreleased_is_the_next_release_and_a_non_version_has_no_rule():
    assert rules(UNRELEASED) == ReleaseRules(**{k: True for k in FIRST})
    assert rules("2.2") == rules("v2.3.0") == rules(None) == ReleaseRules()


def test_no_module_but_core_versions_reads_when_a_behaviour_started():
    """The constants naming the release that introduced a behaviour are read only by core/versions.py;
    every other module asks ``rules(version)`` (or ``Release.rules``)."""
    names = {name for name in vars(versions) if name.endswith("_FROM")}  # every such constant, present and future
    assert {"DERIVATIONS_FROM", "EVIDENCE_FROM", "MINI_INTERLEAVED_FROM", "DISPUTED_FROM", "EVIDENCE_ROWS_FROM",
            "CARD_LEAD_FROM", "CARD_VISITOR_FROM", "FEED_DETAILS_FROM", "CARD_GRADERS_FROM"} <= names
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "core" / "versions.py":
            continue
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.Name) and node.id in names:
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno} {node.id}")
            if isinstance(node, ast.alias) and node.name in names:
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno} imports {node.name}")
    assert offenders == []
