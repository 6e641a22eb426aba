"""The card's step-wise breakdown of a real model (release/steps_demo.py): its table and sentence from a
summary of `evaluate --steps`, and the refusal of outputs the release does not have. That the card's
numbers are what `evaluate --steps` gives on the committed outputs is tested on the real release in
tests/e2e/scoring/test_evaluate_steps.py."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd

from medcalc_maintained.release import steps_demo


def _summary(**over):
    s = {"rows": 20, "rows_without_certified_inputs": 1,
         "classes": {"right": 3, "extraction": 6, "arithmetic": 4, "both": 2, "format": 3, "abstention": 2,
                     "unjudged": 0},
         "right_with_readable_inputs": 2, "right_from_wrong_inputs": 1,
         "block_problems": {"absent": 2, "not_json": 0, "no_declared_input": 1, "bad_unit": 0}}
    s.update(over)
    return s


def _rows(text: str) -> dict[str, str]:
    lines = [line.strip("|").split("|") for line in text.splitlines() if line.startswith("| ")]
    return {a.strip(): b.strip() for a, b in lines[1:] if "---" not in a}


def test_the_table_gives_each_class_and_the_right_answers_from_wrong_inputs():
    text = steps_demo.text(_summary(), 21)
    assert _rows(text) == {"right": "3", "right, with a readable `<inputs>` block": "2", "right from wrong inputs": "1",
                           "wrong: extraction": "6", "wrong: arithmetic": "4", "wrong: both": "2",
                           "wrong: format": "3", "wrong: N/A given or withheld": "2", "wrong: unjudged": "0"}
    assert "20 step-graded rows of 21; 1 has no certified input" in text
    # 3 right of 20; from right inputs: 2 readable right, 1 of them from wrong inputs
    assert "Accuracy is 3 of 20 (15.0%); counting a right answer only when it comes from right inputs, 1." in text
    assert "2 absent; 1 name no input of the calculator." in text and "not JSON" not in text


def test_a_breakdown_without_unreadable_blocks_or_ungraded_rows_says_so():
    s = _summary(rows_without_certified_inputs=0, block_problems={k: 0 for k in steps_demo.BLOCK_WORDS})
    text = steps_demo.text(s, 20)
    assert "(20 step-graded rows of 20)" in text and "Blocks with a problem: none." in text


def test_no_card_before_2_4_2_shows_it():
    tables = SimpleNamespace(release=SimpleNamespace(version="2.4.1"))
    assert steps_demo.card_text(None, tables) == ""  # nothing is read for an earlier release


def test_an_output_of_a_row_the_release_lacks_is_counted_not_graded(tmp_path):
    """A later release may drop a row the outputs answered: its build goes on and the table says so."""
    path = tmp_path / "outputs.jsonl"
    path.write_text(json.dumps({"uid": 99999, "output": "<answer>2</answer>"}) + "\n", encoding="utf-8")
    labels = pd.DataFrame({"uid": pd.Series([7, 8], dtype="int64")})
    s, outputs = steps_demo.summary(path, "2.4.2", labels, pd.DataFrame(columns=["uid", "name", "value"]))
    assert (outputs, s["rows"], s["outputs_of_other_rows"]) == (1, 0, 1)
    assert "(0 step-graded rows of 1; 1 of rows not in this release's `default`)" in steps_demo.text(s, outputs)
