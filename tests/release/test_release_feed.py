"""Issue 40, items 4 and 5: the release feed ``releases.json``, the card's opening score shift of the
worked example, a card that documents every column and value, and a ``mini`` whose first rows
sample calculators. The slow tests build releases 2.1.0 and 2.2.0 of the repro project (the
committed ledger) and check the feed and the card against numbers computed here from the builds."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from medcalc_maintained.contracts import release_content as rc
from medcalc_maintained.release import feed, fields, mini
from medcalc_maintained.release.plan import Release
from medcalc_maintained.release.tables import CONFIGS, Tables
from tests.support.paths import ROOT
from tests.support.release_support import release_rows


def _keyed(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(split="test", uid=df["Row Number"].astype("int64"))


# ---------------------------------------------------------------- comparability classes


def test_config_diff_classes_on_small_cases():
    base = _keyed(release_rows([(1, 2, "confirmed"), (2, 2, "corrected"), (3, 5, "confirmed")]))
    assert feed.config_diff(base, base, "default", True)["class"] == "identical"
    other = base.copy()
    other["Ground Truth Explanation"] = "another explanation"  # not a scored column
    d = feed.config_diff(base, other, "default", False)
    assert (d["class"], d["labels_changed"], d["row_order_changed"]) == ("labels-unchanged", 0, False)
    relabelled = base.copy()
    relabelled.loc[1, "Ground Truth Answer"] = "N/A"
    d = feed.config_diff(base, relabelled, "default", False)
    assert (d["class"], d["labels_changed"], d["_changed"]) == ("labels-changed", 1, ["test:2"])
    fewer = base.iloc[[0, 2]].reset_index(drop=True)
    d = feed.config_diff(base, fewer, "default", False)
    assert (d["class"], d["rows_out"], d["rows_in"]) == ("rows-changed", 1, 0)
    assert feed.per_calculator(base, fewer, d) == [
        {"calculator_id": 2, "calculator": "x", "rows_in": 0, "rows_out": 1, "labels_changed": 0}]
    d = feed.config_diff(base, base.iloc[::-1].reset_index(drop=True), "default", False)
    assert (d["class"], d["row_order_changed"]) == ("labels-unchanged", True)


# ---------------------------------------------------------------- mini's order


def test_mini_of_2_2_0_is_interleaved_by_calculator_and_2_1_0_keeps_row_number_order():
    spec = [(u, 9, "confirmed") for u in range(1, 6)] + [(u, 3, "corrected") for u in range(10, 14)] \
        + [(u, 7, "abstain") for u in (20, 21)]
    new = mini.select(release_rows(spec), "test", 10, "2.2.0")
    old = mini.select(release_rows(spec), "test", 10, "2.1.0")
    assert sorted(new["Row Number"]) == sorted(old["Row Number"]) == sorted(u for u, _c, _s in spec)
    assert old["Row Number"].tolist() == sorted(old["Row Number"])
    assert new["Calculator ID"].tolist() == [3, 7, 9, 3, 7, 9, 3, 9, 3, 9, 9]
    # each calculator's rows in the order the rule chose them (its rank), whatever the input order
    again = mini.select(release_rows(list(reversed(spec))), "test", 10, "2.2.0")
    assert again["Row Number"].tolist() == new["Row Number"].tolist()


def test_the_mini_contract_checks_the_order_of_its_release():
    default = _keyed(release_rows([(u, 1 + u % 4, "confirmed") for u in range(1, 40)]))
    good = _keyed(mini.select(default, "test", 5, "2.2.0"))
    assert rc.mini_rows_view(default, good, 5, "2.2.0")["in_rule_order"].all()
    view = rc.mini_rows_view(default, good.sort_values("Row Number"), 5, "2.2.0")
    assert not view["in_rule_order"].all() and view["selected_by_rule"].all()
    assert rc.mini_rows_view(default, good.sort_values("Row Number"), 5, "2.1.0")["in_rule_order"].all()


# ---------------------------------------------------------------- the card's values


def _tables(status: str) -> Tables:
    default = release_rows([(1, 2, status)]).assign(**{"Output Type": "decimal", "Note Type": "Template",
                                                "Explanation Source": "upstream"})
    frames = {c: {"test": default} for c in CONFIGS}
    return Tables(Release("2.2.0", "2026-11-27", "minor", "x"), ["test"], frames, pd.DataFrame({"id": []}))


def test_a_value_the_card_does_not_document_stops_the_build():
    fields.check_values(_tables("confirmed"))
    with pytest.raises(Exception, match="'Label Status' holds \\['reviewed'\\], which the card does not document"):
        fields.check_values(_tables("reviewed"))


def test_every_declared_value_of_the_schema_and_the_code_is_documented():
    from medcalc_maintained.calculators.severity import LEVELS
    from medcalc_maintained.core.labels import DISPUTED, RECORD_STATUSES, UNVERIFIED
    from medcalc_maintained.ledger.derivation import DERIVED, UNDERIVED
    from medcalc_maintained.release.explanations import SOURCES

    schema = json.loads((ROOT / "src/medcalc_maintained/schemas/correction.schema.json").read_text())["properties"]
    for col in ("decision", "label_status", "error_type", "source", "change_severity", "reconstruction"):
        declared = {fields.NULL if v is None else v for v in schema[col]["enum"]}
        if col == "change_severity":  # a record may omit it; `corrections` then carries the computed level
            declared.discard(fields.NULL)
        assert declared <= set(fields.VALUES[col]), col
    assert set(fields.VALUES["Label Status"]) == {*RECORD_STATUSES, UNVERIFIED, DISPUTED}
    assert set(fields.VALUES["Explanation Source"]) == set(SOURCES)
    assert set(fields.VALUES["Derivation Status"]) == {*DERIVED, *UNDERIVED, fields.NULL}
    assert set(fields.VALUES["Change Severity"]) == set(LEVELS)
    assert set(fields.VALUES["Label Source"]) == {"upstream", *schema["source"]["enum"]}


def test_the_worked_example_grades_under_the_latest_release():
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    latest = yaml.safe_load((ROOT / "releases.yaml").read_text())["releases"][-1]["version"]
    assert params["compare"]["evaluate"]["against"][-1] == latest


def test_a_format_2_feed_gives_descriptions_and_the_ids_behind_its_counts():
    from medcalc_maintained.contracts.release_feed import _config_consistent, _well_formed
    from medcalc_maintained.release.feed import config_diff, feed_format

    assert (feed_format("2.3.0"), feed_format("2.3.1"), feed_format("3.0.0")) == (1, 2, 2)
    cols = {"Calculator ID": 1, "Patient Note": "n", "Question": "q", "Output Type": "integer",
            "Lower Limit": "1", "Upper Limit": "1"}
    before = pd.DataFrame([{"split": "test", "uid": u, **cols, "Ground Truth Answer": "1"} for u in (1, 2, 3)])
    after = pd.DataFrame([{"split": "test", "uid": u, **cols, "Ground Truth Answer": a} for u, a in ((1, "1"), (2, "5"),
                                                                                                     (4, "1"))])
    diff = config_diff(before, after, "default", same_bytes=False)
    assert (diff["_changed"], diff["_in"], diff["_out"]) == (["test:2"], ["test:4"], ["test:3"])
    c = {k: v for k, v in diff.items() if not k.startswith("_")} | {
        "files": {"a": "x"}, "labels_changed_ids": diff["_changed"], "rows_in_ids": diff["_in"],
        "rows_out_ids": diff["_out"]}
    prior = {"files": {"a": "y"}}
    assert _config_consistent("default", c, prior, 2) and _config_consistent("default", c, prior, 1)
    assert not _config_consistent("default", c | {"rows_in_ids": []}, prior, 2)  # a count without its ids
    assert not _config_consistent("default", c | {"labels_changed_ids": ["test:2", "test:2"]}, prior, 2)
    assert _config_consistent("default", {k: v for k, v in c.items() if not k.endswith("_ids")}, prior, 1)
    entry = {"version": "2.3.1", "tag": "v2.3.1", "tags": ["v2.3.1"], "previous": "2.3.0", "comparability": "identical",
             "comparable": True, "configs": {"default": {"class": "identical"}}, "changed_rows_per_calculator": [],
             "ledger_commit": None}
    assert _well_formed(entry, "2.3.0", 1) and not _well_formed(entry, "2.3.0", 2)
    assert _well_formed(entry | {"description": "Card only."}, "2.3.0", 2)
