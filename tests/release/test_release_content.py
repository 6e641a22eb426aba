"""Issue 14: explanations that never contradict the label, the stratified `mini` config, integer
keys, and the contract views that check them."""

from __future__ import annotations

import pandas as pd
import pytest

from medcalc_maintained.contracts import release_content as rc
from medcalc_maintained.release import explanations, mini
from tests.support.release_support import release_rows

# ---------------------------------------------------------------- mini: the rule on small cases


def test_mini_takes_all_rows_of_a_small_calculator_and_caps_the_others():
    spec = [(u, 1, "confirmed") for u in range(1, 4)] + [(u, 2, "confirmed") for u in range(10, 40)]
    got = mini.select(release_rows(spec), "test", 10)
    counts = got.groupby("Calculator ID").size().to_dict()
    assert counts == {1: 3, 2: 10}


def test_mini_leaves_out_unverified_rows_and_a_baseline_is_empty():
    spec = [(u, 1, "unverified") for u in range(1, 30)] + [(50, 1, "confirmed")]
    assert mini.select(release_rows(spec), "test", 10)["Row Number"].tolist() == [50]
    assert mini.select(release_rows([(u, 1, "unverified") for u in range(1, 30)]), "test", 10).empty


def test_mini_balances_label_status_where_possible():
    # 2 corrected, 3 abstain, 40 confirmed: 10 rows = every corrected and abstain row + 5 confirmed
    spec = [(u, 7, "corrected") for u in (1, 2)] + [(u, 7, "abstain") for u in (3, 4, 5)] \
        + [(u, 7, "confirmed") for u in range(6, 46)]
    got = mini.select(release_rows(spec), "test", 10)
    assert got["Label Status"].value_counts().to_dict() == {"confirmed": 5, "abstain": 3, "corrected": 2}
    # plenty of each: 4 + 3 + 3 (round robin in the order corrected, abstain, confirmed)
    spec = [(u, 7, s) for s, base in (("corrected", 0), ("abstain", 100), ("confirmed", 200)) for u in range(base + 1, base + 21)]
    got = mini.select(release_rows(spec), "test", 10)
    assert got["Label Status"].value_counts().to_dict() == {"corrected": 4, "abstain": 3, "confirmed": 3}


def test_mini_does_not_depend_on_row_order_and_is_stable_when_rows_are_added():
    spec = [(u, 1 + u % 3, ("confirmed", "corrected")[u % 2]) for u in range(1, 120)]
    a = mini.select(release_rows(spec), "test", 10)
    b = mini.select(release_rows(list(reversed(spec))), "test", 10)
    assert a["Row Number"].tolist() == b["Row Number"].tolist()
    # a calculator the new rows do not touch keeps exactly its rows
    more = spec + [(u, 9, "confirmed") for u in range(500, 520)]
    c = mini.select(release_rows(more), "test", 10)
    assert set(c[c["Calculator ID"] != 9]["Row Number"]) == set(a["Row Number"])
    with pytest.raises(ValueError, match="at least 1"):
        mini.select(release_rows(spec), "test", 0)


def test_mini_rows_view_flags_a_row_outside_the_rule_and_a_changed_row():
    spec = [(u, 1, "confirmed") for u in range(1, 30)]
    default = release_rows(spec).assign(split="test", uid=lambda d: d["Row Number"])
    good = mini.select(release_rows(spec), "test", 5).assign(split="test", uid=lambda d: d["Row Number"])
    view = rc.mini_rows_view(default, good, 5)
    assert view["selected_by_rule"].all() and view["matches_default"].all() and len(view) == 5
    outsider = default[~default["uid"].isin(good["uid"])].head(1)
    bad = pd.concat([good.iloc[1:], outsider], ignore_index=True)
    bad.loc[0, "Ground Truth Answer"] = "999"
    view = rc.mini_rows_view(default, bad, 5)
    assert int((~view["selected_by_rule"]).sum()) == 2  # the outsider, and the rule's row left out
    assert int((~view["matches_default"]).sum()) == 1


# ---------------------------------------------------------------- explanations


def _changed_row(entities: str, label: str, old: str, status: str = "corrected") -> dict:
    return {"Label Status": status, "Ground Truth Answer": label, "Original Ground Truth Answer": old,
            "Lower Limit": label, "Upper Limit": label, "Output Type": "decimal", "Calculator ID": "5",
            "Relevant Entities": entities, "Ground Truth Explanation": f"... so the answer is {old}.",
            "Correction IDs": "r1"}


MAP_ENTITIES = "{'Systolic Blood Pressure': [120, 'mm Hg'], 'Diastolic Blood Pressure': [60, 'mm Hg']}"


def test_a_changed_row_gets_the_reference_derivation_only_when_it_reproduces_the_label():
    # MAP = 2/3 * 60 + 1/3 * 120 = 80: reproduced -> derivation stating 80; not reproduced -> empty
    full = pd.DataFrame([_changed_row(MAP_ENTITIES, "80", "95"), _changed_row(MAP_ENTITIES, "70", "95"),
                         {**_changed_row(MAP_ENTITIES, "95", "95", "confirmed"), "Ground Truth Explanation": "up"}])
    texts, sources = explanations.explain(full, pd.DataFrame())
    assert sources == ["reference-calculator", "none", "upstream"]
    assert explanations.stated_result(texts[0]) == "80"
    assert "Systolic Blood Pressure is 120 mm Hg" in texts[0] and "95" not in texts[0]
    assert texts[1] is None and texts[2] == "up"


def test_an_na_row_explains_why_from_its_ledger_record():
    full = pd.DataFrame([_changed_row(MAP_ENTITIES, "N/A", "95", "abstain")])
    records = pd.DataFrame([{"id": "r1", "rationale": "No blood pressure is reported.", "evidence": "note: none"}])
    texts, sources = explanations.explain(full, records)
    assert sources == ["ledger"] and "No blood pressure is reported." in texts[0] and "note: none" in texts[0]
    texts, sources = explanations.explain(full, pd.DataFrame())  # no record: nothing to say
    assert sources == ["none"] and texts[0] is None


def test_explanations_view_rejects_an_old_label_derivation():
    row = {**_changed_row(MAP_ENTITIES, "80", "95"), "split": "test", "uid": 1, "Explanation Source": "upstream"}
    original = pd.DataFrame([{"split": "test", "uid": 1, "Ground Truth Explanation": row["Ground Truth Explanation"]}])
    view = rc.explanations_view(pd.DataFrame([row]), original)
    assert not view.at[0, "source_fits_label"]  # a changed row kept its upstream explanation
    text = explanations.derivation(5, {"Systolic Blood Pressure": [120, "mm Hg"]}, "95")
    row.update({"Explanation Source": "reference-calculator", "Ground Truth Explanation": text})
    view = rc.explanations_view(pd.DataFrame([row]), original)
    assert view.at[0, "source_fits_label"] and not view.at[0, "explanation_fits_source"]


# ---------------------------------------------------------------- row identities (the changelog's "unchanged")


def test_identities_hash_each_value_of_each_row_and_a_missing_one_apart():
    import hashlib

    from medcalc_maintained.release.plan import Release
    from medcalc_maintained.release.tables import CONFIGS, Tables

    def short(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    frame = release_rows([(3, 2, "confirmed"), (5, 2, "corrected")])
    frame.loc[1, "Upper Limit"] = None
    tables = Tables(Release("2.2.0", "2026-11-27", "minor", "x"), ["test"], {c: {"test": frame} for c in CONFIGS},
                    pd.DataFrame({"id": []}))
    got = tables.identities()["default"]
    assert list(got) == ["test:3", "test:5"]
    assert got["test:3"]["Row Number"] == short("3") and got["test:5"]["Label Status"] == short("corrected")
    assert got["test:3"]["Upper Limit"] == short("x") and got["test:5"]["Upper Limit"] == short("\x00")
    assert got["test:5"]["split"] == short("test")  # the columns combined() adds are compared too
    # another value in one cell changes that column's hash only
    other = frame.copy()
    other.loc[0, "Ground Truth Answer"] = "4"
    changed = Tables(tables.release, ["test"], {c: {"test": other} for c in CONFIGS},
                     pd.DataFrame({"id": []})).identities()["default"]
    assert [x for x in got["test:3"] if got["test:3"][x] != changed["test:3"][x]] == ["Ground Truth Answer"]
    assert changed["test:5"] == got["test:5"]
