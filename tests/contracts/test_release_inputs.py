"""Config ``inputs`` (release/inputs_config.py) and its contract view ``inputs`` (contracts/release_inputs.py):
rows of the real v1.0 test split certified here, flattened into the config, then the config tampered with."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.calculators.certify import certify_row
from medcalc_maintained.contracts.release_inputs import inputs_view
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.evidence_rows import row_document
from medcalc_maintained.release.inputs_config import table
from medcalc_maintained.release.tables import INPUT_COLUMNS, configs_of, typed_frame

FACTS = ["row_known", "matches_evidence", "quote_is_text", "value_is_json", "derivation_listed"]


def _full_row(instances: pd.DataFrame, uid: int, status: str = "confirmed") -> dict:
    r = instances[instances["uid"] == uid].iloc[0].to_dict()
    docs = [i.document() for i in certify_row(int(r["Calculator ID"]), entities_or_empty(r["entities"]),
                                             r["Patient Note"])]
    cell = row_document(docs)
    return {"split": "test", "uid": uid, "Row Number": uid, "Calculator ID": int(r["Calculator ID"]),
            "Calculator Name": r["Calculator Name"], "Patient Note": r["Patient Note"], "Question": r["Question"],
            "Relevant Entities": r["Relevant Entities"], "Label Status": status,
            "Ground Truth Answer": r["Ground Truth Answer"], "Output Type": r["Output Type"],
            "Derivation": json.dumps({"status": "reproduced", "inputs": []}), "Evidence": cell,
            "Evidence Status": json.loads(cell)["status"]}


@pytest.fixture(scope="module")
def full(real_instances) -> pd.DataFrame:
    """Cockcroft-Gault uid 1 (five inputs, each quoted), MDRD uid 141 (race absent by the definition's
    convention: no quote) and an unverified row (no ``Evidence``)."""
    rows = [_full_row(real_instances, 1), _full_row(real_instances, 141), _full_row(real_instances, 2)]
    rows[2].update({"Label Status": "unverified", "Evidence": None, "Evidence Status": None})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def inputs(full) -> pd.DataFrame:
    frame = typed_frame(table(full))
    frame["split"], frame["uid"] = "test", frame["Row Number"]
    return frame


def test_the_config_is_each_verified_rows_evidence_one_row_per_input(full, inputs):
    assert list(inputs.columns[:len(INPUT_COLUMNS)]) == INPUT_COLUMNS
    docs = {int(r["uid"]): json.loads(r["Evidence"])["inputs"] for r in full.to_dict("records") if isinstance(r["Evidence"], str)}
    assert set(inputs["Row Number"]) == {1, 141}  # the unverified row has none
    for uid, ds in docs.items():
        mine = inputs[inputs["Row Number"] == uid]
        assert mine["name"].tolist() == [d["name"] for d in ds]
        assert [json.loads(v) if isinstance(v, str) else None for v in mine["value"]] == [d["value"] for d in ds]
    cg = inputs[inputs["Row Number"] == 1].set_index("name")
    note = full.loc[full["uid"] == 1, "Patient Note"].iloc[0]
    assert cg.at["age", "value"] == "87" and cg.at["sex", "value"] == '"Male"'  # JSON text: a number, a text
    start, end = int(cg.at["creatinine", "quote_start"]), int(cg.at["creatinine", "quote_end"])
    assert note[start:end] == cg.at["creatinine", "quote_text"] and "1.4" in cg.at["creatinine", "quote_text"]
    assert str(inputs["quote_start"].dtype) == "Int64"  # integers with nulls, not floats
    race = inputs[(inputs["Row Number"] == 141) & (inputs["name"] == "Race")].iloc[0]
    assert bool(race["convention"]) and pd.isna(race["quote_start"]) and race["verdict"] == "supports"


def test_a_faithful_config_passes_every_check(full, inputs):
    view = inputs_view(full, inputs, "2.4.0")
    assert len(view) == len(inputs) and view[FACTS].all().all(), view["inputs_problem"].dropna().tolist()


def test_releases_before_2_4_0_have_no_inputs_config(full, inputs):
    assert "inputs" not in configs_of("2.3.2") and "inputs" in configs_of("2.4.0")
    assert inputs_view(full, None, "2.3.2").empty
    shipped = inputs_view(full, inputs, "2.3.2")
    assert len(shipped) == 1 and not shipped["row_known"].iloc[0]


def _tampered(inputs: pd.DataFrame, row: int, name: str, **cells) -> pd.DataFrame:
    out = inputs.copy()
    at = out.index[(out["Row Number"] == row) & (out["name"] == name)][0]
    for col, value in cells.items():
        out.at[at, col] = value
    return out


def _problem(view: pd.DataFrame, uid: int, name: str) -> pd.Series:
    return view[(view["uid"] == uid) & (view["name"] == name)].iloc[0]


def test_a_quote_moved_off_its_text_is_caught(full, inputs):
    row = inputs[(inputs["Row Number"] == 1) & (inputs["name"] == "weight")].iloc[0]
    bad = _tampered(inputs, 1, "weight", quote_start=int(row["quote_start"]) + 1, quote_end=int(row["quote_end"]) + 1)
    got = _problem(inputs_view(full, bad, "2.4.0"), 1, "weight")
    assert not got["quote_is_text"] and not got["matches_evidence"]
    assert "quote_text is not the note's text" in got["inputs_problem"]


def test_a_value_the_derivation_does_not_use_is_caught(full, inputs):
    got = _problem(inputs_view(full, _tampered(inputs, 1, "weight", value="49.0"), "2.4.0"), 1, "weight")
    assert not got["matches_evidence"] and not got["derivation_listed"]
    assert "the derivation uses 48" in got["inputs_problem"]


def test_a_value_that_is_not_json_is_caught(full, inputs):
    got = _problem(inputs_view(full, _tampered(inputs, 1, "sex", value="Male"), "2.4.0"), 1, "sex")
    assert not got["value_is_json"] and "value is not JSON text" in got["inputs_problem"]


def test_a_missing_input_and_a_row_from_nowhere_are_caught(full, inputs):
    dropped = inputs[~((inputs["Row Number"] == 141) & (inputs["name"] == "Race"))]
    got = _problem(inputs_view(full, dropped, "2.4.0"), 141, "Race")
    assert not got["matches_evidence"] and "missing from config inputs" in got["inputs_problem"]
    stray = _tampered(inputs, 1, "age", **{"Row Number": 2, "uid": 2})
    view = inputs_view(full, stray, "2.4.0")
    assert not _problem(view, 2, "age")["row_known"]


def test_an_evidence_cell_that_is_not_a_document_is_refused_by_name(full):
    bad = full.copy()
    bad.loc[0, "Evidence"] = "{not json"
    with pytest.raises(ValueError, match="row 1: its Evidence cell"):
        table(bad)
