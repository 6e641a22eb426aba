"""The Eq. 2 reward: hand-worked values for every branch, the verl and TRL entry points, real labels."""

from __future__ import annotations

import json

import numpy as np
import pytest

from medcalc_maintained.core.answers import extract_answer
from medcalc_maintained.grading.reward import (
    completion_text,
    compute_score,
    ground_truth_json,
    make_trl_reward,
    score,
    trl_reward,
)

# Row 1 of the v1.0 test split: Cockcroft-Gault, label 25.238 with the +-5% band below.
CG = ("25.238", "23.9761", "26.4999", "decimal")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("reasoning...\n<answer>4</answer>", "4"),
        ("<answer>1</answer> on reflection <answer> 2 </answer>", "2"),  # the last one counts
        ("<ANSWER>7</Answer>", "7"),  # tags are case-insensitive
        ("<answer>\n12.5\n</answer>", "12.5"),  # spans lines, stripped
        ("<answer></answer>", ""),
        ("no tag at all", None),
        ("<answer>3", None),  # truncated before the closing tag
        ("", None),
    ],
)
def test_extract_answer(text, expected):
    assert extract_answer(text) == expected


def test_extract_answer_from_chat_messages():
    msgs = [{"role": "assistant", "content": "so <answer>9</answer>"}]
    assert extract_answer(completion_text(msgs)) == "9"
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "<answer>"}, {"type": "text", "text": "8</answer>"}]}]
    assert extract_answer(completion_text(parts)) == "8"
    # the assistant's messages only, joined in order; a bare string is itself
    chat = [{"role": "user", "content": "<answer>1</answer>"}, {"role": "assistant", "content": "a"},
            {"role": "assistant", "content": "b"}]
    assert completion_text(chat) == "a\nb" and completion_text("x") == "x" and completion_text(None) == ""
    with pytest.raises(TypeError):
        completion_text(["not a message"])


@pytest.mark.parametrize(
    "completion, label, expected",
    [
        # decimal: 24.1 lies in [23.9761, 26.4999] -> 0.1 + 0.9 * 1
        ("Weight 48 kg ... <answer>24.1</answer>", CG, 1.0),
        # parsable but outside the band -> 0.1 only
        ("<answer>30</answer>", CG, 0.1),
        # a unit after the number is still a number
        ("<answer>25 mL/min</answer>", CG, 1.0),
        # not parsable -> 0
        ("<answer>about twenty-five</answer>", CG, 0.0),
        ("The clearance is 25.238 mL/min.", CG, 0.0),  # no tag
        ("<answer>   </answer>", CG, 0.0),  # empty is not an abstention
        # the last answer is graded, not the best one
        ("<answer>24.1</answer> no wait <answer>30</answer>", CG, 0.1),
        ("<answer>30</answer> no wait <answer>24.1</answer>", CG, 1.0),
        # abstention: parsable; correct only against an N/A label
        ("<answer>N/A</answer>", CG, 0.1),
        ("<answer>N/A</answer>", ("N/A", "N/A", "N/A", "decimal"), 1.0),
        ("<answer>unknown</answer>", ("N/A", "N/A", "N/A", "integer"), 1.0),
        ("<answer>3</answer>", ("N/A", "N/A", "N/A", "integer"), 0.1),
        # integer labels: the answer is rounded then compared exactly
        ("<answer>3.6</answer>", ("4", "4", "4", "integer"), 1.0),
        ("<answer>3.4</answer>", ("4", "4", "4", "integer"), 0.1),
        # dates: same day in either spelling; a bare number is not a date
        ("<answer>03/15/2021</answer>", ("03/15/2021", "03/15/2021", "03/15/2021", "date"), 1.0),
        ("<answer>2021-03-15</answer>", ("03/15/2021", "03/15/2021", "03/15/2021", "date"), 1.0),
        ("<answer>03/16/2021</answer>", ("03/15/2021", "03/15/2021", "03/15/2021", "date"), 0.1),
        ("<answer>44270</answer>", ("03/15/2021", "03/15/2021", "03/15/2021", "date"), 0.0),
        # gestational age: same weeks and days
        ("<answer>('14 weeks', '1 days')</answer>", ("('14 weeks', '1 days')",) * 3 + ("integer",), 1.0),
        ("<answer>('14 weeks', '2 days')</answer>", ("('14 weeks', '1 days')",) * 3 + ("integer",), 0.1),
    ],
)
def test_score_hand_worked(completion, label, expected):
    assert score(completion, *label) == pytest.approx(expected)


def test_format_weight_lambda():
    # lam = 0.5: wrong-but-parsable 0.5, correct 0.5 + 0.5 = 1, unparsable 0
    assert score("<answer>30</answer>", *CG, lam=0.5) == pytest.approx(0.5)
    assert score("<answer>25</answer>", *CG, lam=0.5) == pytest.approx(1.0)
    assert score("<answer>x</answer>", *CG, lam=0.5) == 0.0
    # lam = 0 is pure correctness; lam = 1 pure format
    assert score("<answer>30</answer>", *CG, lam=0.0) == 0.0
    assert score("<answer>30</answer>", *CG, lam=1.0) == 1.0
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="lam"):
            score("<answer>30</answer>", *CG, lam=bad)


def test_broken_label_is_an_error_not_a_zero():
    with pytest.raises(ValueError, match="ground truth"):
        score("<answer>3</answer>", "three", "", "", "integer")


def test_verl_compute_score():
    gt = {"label": "25.238", "lower": "23.9761", "upper": "26.4999", "output_type": "decimal"}
    assert compute_score("medcalc_bench", "<answer>26</answer>", gt) == 1.0
    assert compute_score("medcalc_bench", "<answer>27</answer>", json.dumps(gt)) == pytest.approx(0.1)
    assert compute_score("medcalc_bench", "<answer>27</answer>", gt, {"lam": 0.3}) == pytest.approx(0.3)
    assert json.loads(ground_truth_json("N/A", "N/A", "N/A", "integer"))["label"] == "N/A"
    assert compute_score("x", "<answer>N/A</answer>", ground_truth_json("N/A", "N/A", "N/A", "integer")) == 1.0
    with pytest.raises(ValueError, match="lacks"):
        compute_score("x", "<answer>1</answer>", {"label": "1"})
    with pytest.raises(ValueError, match="JSON"):
        compute_score("x", "<answer>1</answer>", "{not json")


def test_trl_reward_strings_and_messages():
    cols = dict(
        ground_truth=["25.238", "4", "N/A"],
        lower=["23.9761", "4", "N/A"],
        upper=["26.4999", "4", "N/A"],
        output_type=["decimal", "integer", "integer"],
    )
    strings = ["<answer>25</answer>", "<answer>5</answer>", "I cannot tell."]
    # TRL also passes prompts, completion_ids, trainer_state and every other column: ignored
    got = trl_reward(strings, prompts=["p"] * 3, completion_ids=[[1]] * 3, uid=[1, 2, 3], **cols)
    assert got == pytest.approx([1.0, 0.1, 0.0])
    messages = [[{"role": "assistant", "content": s}] for s in
                ["<answer>30</answer>", "<answer>4</answer>", "<answer>N/A</answer>"]]
    assert trl_reward(messages, **cols) == pytest.approx([0.1, 1.0, 1.0])
    half = make_trl_reward(0.5)
    assert half(strings, **cols) == pytest.approx([1.0, 0.5, 0.0])
    assert half.__name__ != trl_reward.__name__  # TRL logs each reward function by name
    with pytest.raises(ValueError, match="ground_truth"):
        trl_reward(strings, **{**cols, "ground_truth": ["1"]})


def test_every_v1_label_rewards_itself(real_instances):
    """On the real split, answering the label itself earns 1 and an abstention earns 0.1."""
    df = real_instances
    cols = dict(ground_truth=df["Ground Truth Answer"].tolist(), lower=df["Lower Limit"].tolist(),
                upper=df["Upper Limit"].tolist(), output_type=df["Output Type"].tolist())
    own = trl_reward([f"<answer>{a}</answer>" for a in df["Ground Truth Answer"]], **cols)
    assert own == [1.0] * len(df)
    abstain = trl_reward(["<answer>N/A</answer>"] * len(df), **cols)
    assert abstain == pytest.approx([0.1] * len(df))  # v1.0 has no N/A labels


# ---------------------------------------------------------------- verl parity with the published recipe

# (completion, project label (label, lower, upper, output_type), recipe row ([lower, upper], data_type),
#  hand value): the TRL reward on our labels and compute_score on the recipe's row must both give it.
CHA = (("4", "4", "4", "integer"), (["3.8", "4.2"], "float"))  # CHA2DS2-VASc 4: the recipe's +-5% band
CG_RECIPE = (["23.978", "26.502"], "float")  # a Cockcroft-Gault row, label 25.24
GA = (("('14 weeks', '1 days')", "('14 weeks', '1 days')", "('14 weeks', '1 days')", "integer"),
      (["94.05", "103.95"], "float"))  # 14 weeks 1 day = 99 days in the recipe
DUE = (("09/12/2014", "09/12/2014", "09/12/2014", "date"), (["2014/09/12", "2014/09/12"], "datetime"))
UNK = (("N/A", "N/A", "N/A", "integer"), (["unknown", "unknown"], "unknown"))
PARITY = [
    ("<think>70/1.75^2</think><answer>25.24</answer>", ("25.24", "23.978", "26.502", "decimal"), CG_RECIPE, 1.0),
    ("<answer>23.978</answer>", ("25.24", "23.978", "26.502", "decimal"), CG_RECIPE, 1.0),  # ends included
    ("<answer>26.6</answer>", ("25.24", "23.978", "26.502", "decimal"), CG_RECIPE, 0.1),
    ("<answer>unknown</answer>", ("25.24", "23.978", "26.502", "decimal"), CG_RECIPE, 0.1),
    ("The clearance is 25.24 mL/min.", ("25.24", "23.978", "26.502", "decimal"), CG_RECIPE, 0.0),
    ("<answer>4</answer>", *CHA, 1.0),
    ("<answer>5</answer>", *CHA, 0.1),
    ("<answer>four</answer>", *CHA, 0.0),
    ("<answer>99</answer>", *GA, 1.0),  # gestational age in days
    ("<answer>120</answer>", *GA, 0.1),
    ("<answer>2014/09/12</answer>", *DUE, 1.0),  # the recipe's date spelling
    ("<answer>2014-09-12</answer>", *DUE, 1.0),
    ("<answer>2014/09/13</answer>", *DUE, 0.1),
    ("<answer>unknown</answer>", *UNK, 1.0),
    ("<answer>N/A</answer>", *UNK, 1.0),
    ("<answer>3</answer>", *UNK, 0.1),
    ("<think>no weight given</think>", *UNK, 0.0),
]


@pytest.mark.parametrize("completion, ours, recipe, expected", PARITY)
def test_verl_and_trl_rewards_agree_with_the_recipe(completion, ours, recipe, expected):
    label, lower, upper, otype = ours
    trl_value = make_trl_reward(0.1)([completion], ground_truth=[label], lower=[lower], upper=[upper],
                                     output_type=[otype])[0]
    bounds, data_type = recipe
    verl_recipe = compute_score("MedCalc", completion, np.array(bounds, dtype=object),
                                {"data_type": data_type, "split": "test", "uid": 1})
    verl_ours = compute_score("MedCalc", completion, ground_truth_json(*ours))
    assert trl_value == pytest.approx(expected)
    assert verl_recipe == pytest.approx(expected)
    assert verl_ours == pytest.approx(expected)


def test_known_differences_from_the_recipe():
    """Where our labels are stricter than the recipe's band (documented in grading/reward.py)."""
    # an integer score is rounded in our grading; the recipe keeps its +-5% band
    assert score("<answer>4.4</answer>", *CHA[0]) == 1.0
    assert compute_score("m", "<answer>4.4</answer>", CHA[1][0], {"data_type": "float"}) == pytest.approx(0.1)
    # a gestational age must match to the day in our labels; the recipe accepts +-5% of the days
    assert score("<answer>98</answer>", *GA[0]) == pytest.approx(0.1)
    assert compute_score("m", "<answer>98</answer>", GA[1][0], {"data_type": "float"}) == 1.0


def test_recipe_rows_that_are_malformed_are_refused():
    for gt, info, match in [
        (["1"], {"data_type": "float"}, "lower, upper"),
        (["2", "1"], {"data_type": "float"}, "lower <= upper"),
        (["a", "b"], {"data_type": "float"}, "numeric"),
        (["1", "2"], {"data_type": "fraction"}, "data_type"),
        (["1", "2"], None, "data_type"),
        (["2014/09/12", "2014/09/13"], {"data_type": "datetime"}, "same day"),
        (["unknown", "3"], {"data_type": "unknown"}, "unknown"),
    ]:
        with pytest.raises(ValueError, match=match):
            compute_score("m", "<answer>1</answer>", gt, info)


def test_recipe_rows_of_the_published_rl_test_set(campaign_dir):
    """The 887 held-out RL rows in verl format: the gold answer scores 1, a wrong one 0.1, no tag 0."""
    import pandas as pd

    df = pd.read_parquet(campaign_dir / "RL" / "test_new_labels.parquet")
    assert len(df) == 887
    kinds = {"float": 0, "datetime": 0, "unknown": 0}
    for rm, info in zip(df["reward_model"], df["extra_info"]):
        lo, hi = (str(x) for x in rm["ground_truth"])
        dtype = info["data_type"]
        kinds[dtype] += 1
        def r(answer):
            return compute_score("MedCalc", f"<think>...</think><answer>{answer}</answer>", rm["ground_truth"], info)
        if dtype == "float":
            a, b = float(lo), float(hi)
            gold = round((a + b) / 2, 6)  # the band is +-5% around the label: its midpoint
            assert abs(b - a - 0.1 * abs(gold)) <= 1e-3 + 1e-6 * abs(gold), (info["uid"], lo, hi)
            assert r(gold) == 1.0 and r(lo) == 1.0 and r(hi) == 1.0, info["uid"]
            wrong = b + max(1.0, abs(b))
            assert r(wrong) == pytest.approx(0.1), info["uid"]
            assert r("unknown") == pytest.approx(0.1), info["uid"]
        elif dtype == "datetime":
            assert lo == hi
            assert r(lo) == 1.0, info["uid"]
            y, m, d = (int(x) for x in lo.split("/"))
            other = f"{y + 1:04d}/{m:02d}/{min(d, 28):02d}"
            assert r(other) == pytest.approx(0.1), info["uid"]
        else:
            assert (lo, hi) == ("unknown", "unknown")
            assert r("unknown") == 1.0 and r("N/A") == 1.0
            assert r("12") == pytest.approx(0.1)
        assert compute_score("MedCalc", f"the answer is {lo}", rm["ground_truth"], info) == 0.0
    assert kinds == {"float": 783, "datetime": 38, "unknown": 66}
