"""core/rows.py: the one reader of a row's ``Relevant Entities`` (upstream literal or ingest's JSON)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.core.rows import entities_or_empty, parse_entities, read_upstream_csv


def test_the_upstream_literal_and_ingests_json_read_the_same(v1_test_csv, real_instances):
    """Every real row: the upstream literal and ingest's JSON text of it read as the same dict."""
    df = read_upstream_csv(v1_test_csv)
    upstream = df.set_index(df["Row Number"].astype(int))
    ingested = real_instances.set_index(real_instances["uid"].astype(int))["entities"]
    assert len(ingested) == len(upstream) == 1047
    for uid, literal in upstream["Relevant Entities"].items():
        parsed = entities_or_empty(literal)
        assert parsed and parsed == entities_or_empty(ingested[uid]) == json.loads(ingested[uid]), uid


@pytest.mark.parametrize("cell", [None, "", "   ", float("nan"), pd.NA, "[1, 2]", "{'a': ", "not a dict", "1e5", 7])
def test_a_missing_or_unreadable_cell_reads_as_no_entities(cell):
    assert entities_or_empty(cell) == {}


def test_json_only_values_and_python_only_values_both_read():
    assert entities_or_empty('{"sex": "Male", "pregnant": true, "x": null}') == {"sex": "Male", "pregnant": True, "x": None}
    assert entities_or_empty("{'pregnant': False, 'age': (4, 'years')}") == {"pregnant": False, "age": [4, "years"]}
    given = {"age": [4, "years"]}
    assert entities_or_empty(given) is given


def test_the_strict_parser_refuses_what_the_tolerant_reader_drops():
    with pytest.raises(ValueError, match="expected a dict"):
        parse_entities("[1, 2]")
    with pytest.raises(SyntaxError):
        parse_entities("{'a': ")
