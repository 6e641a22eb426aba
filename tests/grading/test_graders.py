"""The harnesses' grading rules side by side (grading/graders.py) on gold answers of the real
labels: each row answered with its own label."""

from __future__ import annotations

import pytest

from medcalc_maintained.grading.grader_check import gold_answer
from medcalc_maintained.grading.graders import GRADERS, grader, helm_rule, opencompass_answer, upstream_rule


def _scores(rows: list[dict]) -> dict[str, list[bool]]:
    return {name: [g(r, gold_answer(name, r["Ground Truth Answer"])) for r in rows] for name, g in GRADERS.items()}


@pytest.fixture(scope="module")
def v1_rows(real_instances):
    return real_instances.to_dict("records")


@pytest.fixture(scope="module")
def v2_rows(real_maintained):
    verified = real_maintained[real_maintained["Label Status"] != "unverified"]
    return verified.to_dict("records")


def test_helm_scores_every_lab_and_dosage_gold_answer_zero_on_v1(v1_rows):
    assert len(v1_rows) == 1047
    s = _scores(v1_rows)
    defect = [r["Category"] in ("lab", "dosage") for r in v1_rows]
    assert sum(defect) == 367  # 327 lab + 40 dosage rows: 35.1% of v1.0
    assert 0.34 < sum(defect) / len(v1_rows) < 0.36
    assert sum(s["ours"]) == 1047
    assert all(s["inspect"]) and all(s["lm-eval"])  # the label's own text in the tag
    # HELM: every lab/dosage gold answer wrong, every other gold answer right
    assert [not h for h in s["helm"]] == defect


def test_upstream_and_opencompass_agree_with_ours_on_every_gold_answer(v1_rows, v2_rows):
    s1 = _scores(v1_rows)
    assert s1["upstream"] == s1["ours"] == s1["opencompass"]
    assert len(v2_rows) == 887
    s2 = _scores(v2_rows)
    na = [r["Ground Truth Answer"] == "N/A" for r in v2_rows]
    assert sum(na) == 69 and all(s2["ours"]) and all(s2["inspect"]) and all(s2["lm-eval"])
    # upstream has no abstention: its rule scores an N/A answer wrong, so every N/A row is 0 there
    for name in ("upstream", "opencompass"):
        assert [v for v, n in zip(s2[name], na) if not n] == [True] * (887 - 69)
        assert not any(v for v, n in zip(s2[name], na) if n)


def test_rules_on_hand_made_rows():
    lab = {"Ground Truth Answer": "4", "Lower Limit": "3.8", "Upper Limit": "4.2", "Output Type": "decimal",
           "Calculator ID": "39", "Category": "lab"}
    risk = {"Ground Truth Answer": "4", "Lower Limit": "4", "Upper Limit": "4", "Output Type": "integer",
            "Calculator ID": "45", "Category": "risk"}
    assert upstream_rule("4.1", lab) and not upstream_rule("4.3", lab) and not helm_rule("4", lab)
    assert upstream_rule("4.4", risk) and not upstream_rule("4.6", risk)  # integers rounded
    assert helm_rule(" 4 ", risk) and not helm_rule("4.0", risk)  # HELM: exact string
    date = {"Ground Truth Answer": "05/07/2021", "Lower Limit": "05/07/2021", "Upper Limit": "05/07/2021",
            "Output Type": "date", "Calculator ID": "13", "Category": "date"}
    assert upstream_rule("05/07/2021", date) and not upstream_rule("05/08/2021", date)
    assert helm_rule("05/07/2021", date) and not helm_rule("2021-05-07", date)
    ga = {"Ground Truth Answer": "('14 weeks', '1 days')", "Lower Limit": "('14 weeks', '1 days')",
          "Upper Limit": "('14 weeks', '1 days')", "Output Type": "integer", "Calculator ID": "69", "Category": "date"}
    assert upstream_rule("(14, 1)", ga) and not upstream_rule("(14, 2)", ga)
    # HELM's parse_duration matches ('W weeks', 'D days') from the first character only
    assert helm_rule("('14 weeks', '1 days')", ga)
    assert not helm_rule("Answer: ('14 weeks', '1 days')", ga) and not helm_rule("(14 weeks, 1 days)", ga)
    assert not upstream_rule("N/A", {**risk, "Ground Truth Answer": "N/A"})
    assert opencompass_answer('so {"answer": "12.5"} done') == "12.5"
    assert opencompass_answer("first 3 then 7.25 mg") == "7.25" and opencompass_answer("none") == ""
    with pytest.raises(ValueError, match="unknown grader 'x'; known: ours, upstream, helm, opencompass, inspect, lm-eval"):
        grader("x")


def test_inspect_and_lm_eval_stock_matchers_on_hand_made_outputs():
    """Each tool's own code: the text of the answer tag against the label, no tolerance; Inspect's
    pattern() reads the first tag, lm-eval's regex filter (group_select -1) the last."""
    risk = {"Ground Truth Answer": "4", "Lower Limit": "4", "Upper Limit": "4", "Output Type": "integer",
            "Calculator ID": "45", "Category": "risk"}
    ins, lme, ours = grader("inspect"), grader("lm-eval"), grader("ours")
    for g in (ins, lme):
        assert g(risk, "so <answer> 4 </answer>")
        assert not g(risk, "<answer>4.0</answer>") and not g(risk, "<answer>4 points</answer>")
        assert not g(risk, "the score is 4") and not g(risk, "") and not g(risk, "<answer>")
        assert g({**risk, "Ground Truth Answer": "N/A"}, "<answer>n/a</answer>")
    assert ours(risk, "<answer>4.0</answer>") and ours(risk, "<answer>4 points</answer>")
    # Inspect's pattern() searches ignoring case; lm-eval's regex filter does not
    assert ins(risk, "<ANSWER>4</ANSWER>") and not lme(risk, "<ANSWER>4</ANSWER>") and ours(risk, "<ANSWER>4</ANSWER>")
    two = "<answer>3</answer> no, <answer>4</answer>"
    assert not ins(risk, two) and lme(risk, two) and ours(risk, two)
    lab = {"Ground Truth Answer": "4.000", "Lower Limit": "3.8", "Upper Limit": "4.2", "Output Type": "decimal",
           "Calculator ID": "39", "Category": "lab"}
    assert ours(lab, "<answer>4.1</answer>") and not ins(lab, "<answer>4.1</answer>") and not lme(lab, "<answer>4</answer>")


def test_the_inspect_matcher_works_inside_a_running_event_loop():
    """A notebook or an async harness already runs a loop, where asyncio.run refuses."""
    import asyncio

    risk = {"Ground Truth Answer": "4", "Lower Limit": "4", "Upper Limit": "4", "Output Type": "integer"}

    async def inside() -> tuple[bool, bool]:
        return grader("inspect")(risk, "<answer>4</answer>"), grader("inspect")(risk, "<answer>5</answer>")

    assert asyncio.run(inside()) == (True, False)


def test_a_stock_matcher_whose_tool_is_missing_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name == "inspect_ai" or name.startswith("inspect_ai."):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    with pytest.raises(ValueError, match="grader 'inspect' runs inspect_ai, which is not installed: pip install -e '.\\[inspect\\]'"):
        grader("inspect")({"Ground Truth Answer": "4"}, "<answer>4</answer>")


def test_grading_one_answer_needs_only_the_standard_library():
    """The harness adapters grade through grading/graders.py; HELM's own venv installs this package
    ``--no-deps``, so importing the adapters' grading must not pull in numpy, pandas or PyYAML."""
    import subprocess
    import sys

    code = ("import sys, medcalc_maintained.harnesses.common, medcalc_maintained.grading.graders as g; "
            "assert g.grader('ours')({'Ground Truth Answer': '4', 'Lower Limit': '4', 'Upper Limit': '4', "
            "'Output Type': 'integer'}, '<answer>4</answer>'); "
            "print(sorted(m for m in ('numpy', 'pandas', 'yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
