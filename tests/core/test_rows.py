"""core/rows.py: the one reader of a row's ``Relevant Entities`` (upstream literal or ingest's JSON) and
the one row carrier, :class:`Row` made by :func:`rows_of`."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pandas as pd
import pytest

from medcalc_maintained.core.rows import entities_or_empty, parse_entities, read_upstream_csv, rows_of
from medcalc_maintained.devtools.import_graph import parse
from tests.support.paths import ROOT


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


# -- the one row carrier: core.rows.Row, made by rows_of -----------------------------------------

ROW_FIELDS = {"split", "uid", "calculator", "calculator_name", "output_type", "note", "question", "note_id",
              "label", "lower", "upper", "explanation", "entities"}


def _fields(row) -> dict:
    return {f: getattr(row, f) for f in ROW_FIELDS}


def test_rows_of_an_upstream_file_and_of_its_ingested_frame_are_the_same_rows(v1_test_csv, real_instances):
    """Every real row read from the upstream CSV (upstream names, Python-literal entities) and from
    ingest's frame (typed columns, JSON entities) is the same Row, field for field."""
    df = read_upstream_csv(v1_test_csv)
    from_csv, from_ingest = rows_of(df), rows_of(real_instances)
    assert len(from_csv) == len(from_ingest) == 1047
    assert [_fields(r) for r in from_csv] == [_fields(r) for r in from_ingest]
    first = df.iloc[0]
    row = from_csv[0]
    assert (row.uid, row.note, row.question, row.label) == (int(first["Row Number"]), first["Patient Note"],
                                                             first["Question"], first["Ground Truth Answer"])
    assert [r.calculator_id for r in from_ingest] == real_instances["calculator_id"].tolist()
    assert [r.output_type for r in from_ingest] == real_instances["output_type"].tolist()
    assert [r.entities for r in from_ingest] == [json.loads(e) for e in real_instances["entities"]]


def test_a_frame_without_note_or_entities_gives_rows_that_say_so():
    df = pd.DataFrame([{"Row Number": " 7", "Calculator ID": " 2 ", "Output Type": "decimal ", "Ground Truth Answer": "1.5",
                        "Relevant Entities": "{'age': (4, 'years'), 'pregnant': False}"}])
    (row,) = rows_of(df, split="train")
    assert (row.split, row.uid, row.calculator, row.calculator_id, row.output_type) == ("train", 7, "2", 2, "decimal")
    assert row.note is None and row.question is None and row.note_id == "" and row.lower == ""
    assert row.entities == {"age": [4, "years"], "pregnant": False}
    (bare,) = rows_of(pd.DataFrame([{"uid": 3, "split": "test", "calculator_id": 5, "entities": "{'not': json"}]))
    assert (bare.uid, bare.calculator_id, bare.entities) == (3, 5, {})


SRC = ROOT / "src" / "medcalc_maintained"
# the modules whose per-row objects are views of core.rows.Row: identity's Fingerprint, the checks'
# Instance and the tables that make it, the recompute, the ledger's record rules, the proposals and
# the MCP server's lookup. They take Rows from rows_of and read no row column of a frame themselves.
ROW_VIEWS = ["upstream/identity.py", "quality/checks/registry.py", "quality/checks/table.py",
             "quality/recompute.py", "stages/recompute.py", "ledger/apply.py", "release/proposals.py",
             "tools/mcp_server.py"]
# the columns a Row carries (``Ground Truth Answer``, ``split`` and ``uid`` are left out: they also
# name the columns a module writes and the keys of other frames)
ROW_COLUMNS = {"Row Number", "Calculator ID", "Calculator Name", "Output Type", "Note ID", "Patient Note", "Question",
               "Relevant Entities", "Lower Limit", "Upper Limit", "Ground Truth Explanation",
               "calculator_id", "output_type", "entities"}


def _row_column_reads(path: Path) -> list[str]:
    """Where a module reads a row column of a frame or a row dict: ``x["Patient Note"]``,
    ``x.get("Question")``, or a literal list of several row columns (a column selection)."""
    out = []
    for node in ast.walk(parse(path)):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and node.args and isinstance(node.args[0], ast.Constant)):
            key = node.args[0].value
        elif isinstance(node, (ast.List, ast.Tuple)):
            named = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in ROW_COLUMNS]
            if len(named) >= 2:
                out.append(f"{path.relative_to(SRC)}:{node.lineno}: selects {named}")
            continue
        if key in ROW_COLUMNS:
            out.append(f"{path.relative_to(SRC)}:{node.lineno}: reads {key!r}")
    return out


def test_no_second_row_carrier_reads_frame_columns():
    """Only core/rows.py turns a frame's row columns into per-row objects: the views of a Row read
    none, and no other module defines a class ``Row`` or a ``rows_of``."""
    reads = [hit for rel in ROW_VIEWS for hit in _row_column_reads(SRC / rel)]
    assert reads == []
    defined = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(parse(path)):
            if (isinstance(node, ast.ClassDef) and node.name == "Row") or (
                    isinstance(node, ast.FunctionDef) and node.name == "rows_of"):
                defined.append(f"{path.relative_to(SRC)}: {node.name}")
    assert defined == ["core/rows.py: Row", "core/rows.py: rows_of"]
