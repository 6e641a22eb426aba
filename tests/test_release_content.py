"""Issue 14: explanations that never contradict the label, the stratified `mini` config, integer
keys, and the contract views that check them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medcalc_maintained.contracts import release_content as rc
from medcalc_maintained.core.answers import is_correct
from medcalc_maintained.release import explanations, mini
from medcalc_maintained.release.tables import DEFAULT_COLUMNS, typed_frame


def _rows(spec: list[tuple[int, int, str]]) -> pd.DataFrame:
    """A small default-layout frame: (Row Number, Calculator ID, Label Status) per row."""
    rows = []
    for uid, cid, status in spec:
        row = {c: "x" for c in DEFAULT_COLUMNS}
        row.update({"Row Number": uid, "Calculator ID": cid, "Label Status": status, "Ground Truth Answer": str(uid)})
        rows.append(row)
    return typed_frame(pd.DataFrame(rows, columns=DEFAULT_COLUMNS))


# ---------------------------------------------------------------- mini: the rule on small cases


def test_mini_takes_all_rows_of_a_small_calculator_and_caps_the_others():
    spec = [(u, 1, "confirmed") for u in range(1, 4)] + [(u, 2, "confirmed") for u in range(10, 40)]
    got = mini.select(_rows(spec), "test", 10)
    counts = got.groupby("Calculator ID").size().to_dict()
    assert counts == {1: 3, 2: 10}


def test_mini_leaves_out_unverified_rows_and_a_baseline_is_empty():
    spec = [(u, 1, "unverified") for u in range(1, 30)] + [(50, 1, "confirmed")]
    assert mini.select(_rows(spec), "test", 10)["Row Number"].tolist() == [50]
    assert mini.select(_rows([(u, 1, "unverified") for u in range(1, 30)]), "test", 10).empty


def test_mini_balances_label_status_where_possible():
    # 2 corrected, 3 abstain, 40 confirmed: 10 rows = every corrected and abstain row + 5 confirmed
    spec = [(u, 7, "corrected") for u in (1, 2)] + [(u, 7, "abstain") for u in (3, 4, 5)] \
        + [(u, 7, "confirmed") for u in range(6, 46)]
    got = mini.select(_rows(spec), "test", 10)
    assert got["Label Status"].value_counts().to_dict() == {"confirmed": 5, "abstain": 3, "corrected": 2}
    # plenty of each: 4 + 3 + 3 (round robin in the order corrected, abstain, confirmed)
    spec = [(u, 7, s) for s, base in (("corrected", 0), ("abstain", 100), ("confirmed", 200)) for u in range(base + 1, base + 21)]
    got = mini.select(_rows(spec), "test", 10)
    assert got["Label Status"].value_counts().to_dict() == {"corrected": 4, "abstain": 3, "confirmed": 3}


def test_mini_does_not_depend_on_row_order_and_is_stable_when_rows_are_added():
    spec = [(u, 1 + u % 3, ("confirmed", "corrected")[u % 2]) for u in range(1, 120)]
    a = mini.select(_rows(spec), "test", 10)
    b = mini.select(_rows(list(reversed(spec))), "test", 10)
    assert a["Row Number"].tolist() == b["Row Number"].tolist()
    # a calculator the new rows do not touch keeps exactly its rows
    more = spec + [(u, 9, "confirmed") for u in range(500, 520)]
    c = mini.select(_rows(more), "test", 10)
    assert set(c[c["Calculator ID"] != 9]["Row Number"]) == set(a["Row Number"])
    with pytest.raises(ValueError, match="at least 1"):
        mini.select(_rows(spec), "test", 0)


def test_mini_rows_view_flags_a_row_outside_the_rule_and_a_changed_row():
    spec = [(u, 1, "confirmed") for u in range(1, 30)]
    default = _rows(spec).assign(split="test", uid=lambda d: d["Row Number"])
    good = mini.select(_rows(spec), "test", 5).assign(split="test", uid=lambda d: d["Row Number"])
    view = rc.mini_rows_view(default, good, 5)
    assert view["selected_by_rule"].all() and view["matches_default"].all() and len(view) == 5
    outsider = default[~default["uid"].isin(good["uid"])].head(1)
    bad = pd.concat([good.iloc[1:], outsider], ignore_index=True)
    bad.loc[0, "Ground Truth Answer"] = "999"
    view = rc.mini_rows_view(default, bad, 5)
    assert int((~view["selected_by_rule"]).sum()) == 2  # the outsider, and the rule's row left out
    assert int((~view["matches_default"]).sum()) == 1


# ---------------------------------------------------------------- mini tracks default (simulated models)


@pytest.mark.slow
def test_accuracy_on_mini_tracks_accuracy_on_default(real_maintained):
    """200 simulated models, each with its own accuracy per calculator (uniform in [0.05, 0.95]) and
    per Label Status shift; every row is right with that probability. Bound: mini has ~520 of the
    887 verified rows, so the sampling s.d. of its accuracy around default's is at most
    0.5 * sqrt(1/519 - 1/887) = 0.014; mini also weighs calculators almost equally where default
    weighs them by their row count, which moves the expected accuracy by at most
    sum_c |w_mini - w_default| * (0.95 - 0.05) / 2. The test asserts |diff| <= 4 s.d. + that shift
    for every model, and a rank correlation above 0.9 between the two accuracies."""
    full = real_maintained.copy()
    full["Row Number"] = full["uid"].astype(int)
    full["Calculator ID"] = full["calculator_id"].astype(int)
    default = full[full["Label Status"] != "unverified"].reset_index(drop=True)
    sel = mini.select(default, "test", 10)
    in_mini = default["uid"].isin(set(sel["Row Number"])).to_numpy()
    assert in_mini.sum() == len(sel) and 400 < len(sel) < len(default)
    cids = default["Calculator ID"].to_numpy()
    w_def = pd.Series(cids).value_counts(normalize=True)
    w_mini = pd.Series(cids[in_mini]).value_counts(normalize=True)
    shift = float((w_mini.reindex(w_def.index, fill_value=0) - w_def).abs().sum()) * 0.45
    sd = 0.5 * np.sqrt(1 / in_mini.sum() - 1 / len(default))
    bound = 4 * sd + shift
    rng = np.random.default_rng(20261123)
    acc_def, acc_mini = [], []
    status = default["Label Status"].to_numpy()
    for _ in range(200):
        p_calc = dict(zip(np.unique(cids), rng.uniform(0.05, 0.95, len(np.unique(cids)))))
        p_status = {s: rng.uniform(-0.1, 0.1) for s in ("confirmed", "corrected", "abstain")}
        p = np.clip([p_calc[c] + p_status[s] for c, s in zip(cids, status)], 0, 1)
        right = rng.random(len(p)) < p
        acc_def.append(right.mean())
        acc_mini.append(right[in_mini].mean())
    diff = np.abs(np.array(acc_def) - np.array(acc_mini))
    print(f"mini {in_mini.sum()} rows; max |diff| {diff.max():.4f}, mean {diff.mean():.4f}, bound {bound:.4f}")
    assert diff.max() <= bound, (diff.max(), bound)
    rho = pd.Series(acc_def).corr(pd.Series(acc_mini), method="spearman")
    assert rho > 0.9, rho


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


@pytest.mark.slow
def test_no_changed_row_of_release_2_explains_the_old_label(pipeline_project):
    """Every changed row of the real 2.0.0 release: its explanation never states a result that
    grades correct against the old label, and a derivation states the maintained label."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.table_builder import build_tables

    project = Project.load(pipeline_project)
    plan = load_releases(project.releases_file)
    t = build_tables(project, plan.get("2.0.0"), plan.path)
    full = t.combined("full")
    original = t.combined("original").set_index("uid")["Ground Truth Explanation"]
    changed = full[full["Label Status"].isin(["corrected", "abstain"])]
    assert len(changed) == 279
    counts = changed["Explanation Source"].value_counts().to_dict()
    assert set(counts) <= {"reference-calculator", "none", "ledger"} and counts["ledger"] == 69
    for r in changed.to_dict("records"):
        text = r["Ground Truth Explanation"]
        assert pd.isna(text) or text != original[r["uid"]]
        result = explanations.stated_result(text)
        if r["Explanation Source"] == "reference-calculator":
            assert is_correct(result, r["Ground Truth Answer"], r["Lower Limit"], r["Upper Limit"], r["Output Type"])
            assert not is_correct(result, r["Original Ground Truth Answer"], None, None, r["Output Type"]), r["uid"]
        else:
            assert result is None
    # unchanged rows keep the upstream explanation, and `original` keeps it for every row
    same = full[~full["Label Status"].isin(["corrected", "abstain"])]
    assert (same["Explanation Source"] == "upstream").all()
    assert same["Ground Truth Explanation"].tolist() == original.loc[same["uid"]].tolist()
    view = rc.explanations_view(full, t.combined("original"))
    assert view[["source_known", "source_fits_label", "explanation_fits_source"]].all().all()
    # integer keys as upstream
    assert str(full["Row Number"].dtype) == "int64" and str(full["Calculator ID"].dtype) == "int64"
