"""Prompt variant ``stepwise`` through the harness packages themselves: Inspect's sample and the verifiers
example of a row carry the stepwise messages when asked and the default ones otherwise. Slow tier: it
imports inspect_ai and verifiers (about 5 s of a fast run); the variant's own tests are in
tests/grading/test_prompt_variants.py."""

from __future__ import annotations

import pytest

from medcalc_maintained.grading import prompts
from tests.grading.test_prompt_variants import NOTE, QUESTION

ROW = {"Row Number": 1, "Calculator ID": 2, "Patient Note": NOTE, "Question": QUESTION, "Calculator Name": "CrCl",
       "Category": "lab", "Output Type": "decimal", "Ground Truth Answer": "25.238", "Lower Limit": "23.976",
       "Upper Limit": "26.5", "Label Status": "confirmed"}


def test_inspect_and_verifiers_send_the_stepwise_messages_when_asked():
    want = prompts.build_prompt(NOTE, QUESTION, "stepwise", 2)
    pytest.importorskip("inspect_ai")
    from medcalc_maintained.harnesses.inspect_task import to_sample

    sample = to_sample(ROW, "stepwise")
    assert [(m.role, m.content) for m in sample.input] == [(m["role"], m["content"]) for m in want]
    assert [m.content for m in to_sample(ROW).input] == [m["content"] for m in prompts.build_prompt(NOTE, QUESTION)]
    pytest.importorskip("verifiers")
    from medcalc_maintained.harnesses.verifiers_env import to_example

    assert to_example(ROW, "stepwise")["prompt"] == want
