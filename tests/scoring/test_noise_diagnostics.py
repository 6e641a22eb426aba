"""Noise diagnostics of a two-label comparison on a synthetic pair of label versions (hand-computed)."""

from __future__ import annotations

import pandas as pd
import pytest

from medcalc_maintained.scoring.noise_diagnostics import label_flips, noise_diagnostics


def _labels(rows):
    return pd.DataFrame(rows, columns=["uid", "Calculator Name", "Ground Truth Answer", "Lower Limit",
                                       "Upper Limit", "Output Type"])


OLD = _labels([
    (1, "A", "10", "9.5", "10.5", "decimal"),
    (2, "A", "20", "19", "21", "decimal"),
    (3, "B", "4", "4", "4", "integer"),
    (4, "B", "2", "2", "2", "integer"),
    (5, "B", "3", "3", "3", "integer"),
    (9, "B", "1", "1", "1", "integer"),  # only in the old version: left out
])
NEW = _labels([
    (1, "A", "10.2", "9.69", "10.71", "decimal"),  # 10 and 10.2 lie in each other's band: unchanged
    (2, "A", "30", "28.5", "31.5", "decimal"),  # changed
    (3, "B", "5", "5", "5", "integer"),  # changed
    (4, "B", "2", "2", "2", "integer"),  # unchanged
    (5, "B", "N/A", "N/A", "N/A", "integer"),  # changed: a value became not answerable
])


def _rollouts(arm, pairs):
    return [{"arm": arm, "uid": u, "completion": c} for u, c in pairs]


ROLLOUTS = pd.DataFrame(
    _rollouts("original", [
        (2, "<answer>20</answer>"), (2, "<answer>20.5</answer>"), (2, "<answer>30</answer>"), (2, "no tag"),
        (3, "<answer>4</answer>"), (3, "<answer>4</answer>"), (5, "<answer>3</answer>"),
        (1, "<answer>10</answer>"), (1, "<answer>12</answer>"), (4, "<answer>2</answer>"),
    ]) + _rollouts("maintained", [
        (2, "<answer>30</answer>"), (2, "<answer>29</answer>"), (3, "<answer>5</answer>"), (3, "<answer>4</answer>"),
        (5, "<answer>N/A</answer>"), (1, "<answer>10.6</answer>"), (4, "<answer>3</answer>"),
    ])
)


def test_flips_per_row():
    f = label_flips(OLD, NEW)
    assert f["uid"].tolist() == [1, 2, 3, 4, 5]
    assert f["changed"].tolist() == [False, True, True, False, True]


def test_hand_computed_flip_and_hit_rates():
    per, s = noise_diagnostics(OLD, NEW, ROLLOUTS)
    assert (s["rows"], s["changed_rows"], s["flip_rate"]) == (5, 3, 0.6)
    by = per.set_index("calculator")
    assert by.loc["A", "flip_rate"] == pytest.approx(1 / 2) and by.loc["B", "flip_rate"] == pytest.approx(2 / 3)
    assert per["calculator"].tolist() == ["B", "A"]  # highest flip rate first
    # original arm, changed rows: uid 2 -> 20, 20.5 old; 30 new; no tag neither. uid 3 -> 4, 4 old. uid 5 -> 3 old
    o = s["arms"]["original"]
    assert (o["rollouts"], o["rollouts_on_changed_rows"]) == (10, 7)
    assert o["old_label_share"] == round(5 / 7, 4) and o["new_label_share"] == round(1 / 7, 4)
    assert o["neither_share"] == round(1 / 7, 4)
    # accuracy on the new labels: changed 1/7; unchanged uid 1 -> 10 right, 12 wrong; uid 4 -> 2 right
    assert o["accuracy_changed"] == round(1 / 7, 4) and o["accuracy_unchanged"] == round(2 / 3, 4)
    assert o["accuracy_all"] == 0.3
    assert by.loc["A", "original_old_label_share"] == 0.5 and by.loc["B", "original_old_label_share"] == 1.0
    # maintained arm: changed rows 30, 29, 5, N/A new; 4 old (uid 3); unchanged 10.6 right, 3 wrong
    m = s["arms"]["maintained"]
    assert (m["rollouts"], m["rollouts_on_changed_rows"]) == (7, 5)
    assert (m["old_label_share"], m["new_label_share"], m["neither_share"]) == (0.2, 0.8, 0.0)
    assert (m["accuracy_changed"], m["accuracy_unchanged"], m["accuracy_all"]) == (0.8, 0.5, round(5 / 7, 4))
    assert by.loc["A", "maintained_old_label_share"] == 0.0
    assert by.loc["B", "maintained_old_label_share"] == pytest.approx(1 / 3)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="new labels lack column"):
        noise_diagnostics(OLD, NEW.drop(columns=["Lower Limit"]), ROLLOUTS)
    with pytest.raises(ValueError, match="uid 9 .* not labelled in both"):
        noise_diagnostics(OLD, NEW, pd.DataFrame(_rollouts("original", [(9, "<answer>1</answer>")])))
    with pytest.raises(ValueError, match="rollouts lack column"):
        noise_diagnostics(OLD, NEW, ROLLOUTS.drop(columns=["arm"]))
