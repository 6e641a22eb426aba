"""Prompt variant ``stepwise`` (grading/prompts.py): the default prompt unchanged, the stepwise one asking for
the inputs under the names the calculator declares, and every harness adapter offering it by name."""

from __future__ import annotations

import json

import pytest
import yaml

from medcalc_maintained.calculators.inputs import declared_inputs
from medcalc_maintained.grading import prompts
from medcalc_maintained.grading import stepwise_inputs as generator
from medcalc_maintained.grading.steps import stated_inputs

NOTE, QUESTION = "An 87-year-old man, weight 48 kg.", "What is the patient's Creatinine Clearance?"


def test_the_committed_input_names_are_the_calculators_declarations():
    assert prompts.INPUTS_FILE.read_text(encoding="utf-8") == generator.text(), \
        "stepwise_inputs.json is stale: run `python -m medcalc_maintained.grading.stepwise_inputs`"


def test_the_default_prompt_is_the_one_every_harness_sent_before_variants():
    assert prompts.build_prompt(NOTE, QUESTION) == [
        {"role": "system", "content": prompts.SYSTEM_PROMPT},
        {"role": "user", "content": f"Patient note:\n{NOTE}\n\nQuestion: {QUESTION}"}]


def test_the_stepwise_prompt_names_each_input_and_its_example_is_a_block_the_grader_reads():
    system, user = prompts.build_prompt(NOTE, QUESTION, "stepwise", 2)
    assert system["content"].startswith(prompts.SYSTEM_PROMPT) and "<inputs>" in system["content"]
    assert user["content"].startswith(f"Patient note:\n{NOTE}\n\nQuestion: {QUESTION}\n\nInputs of this calculator")
    listed = [line[2:].split(":")[0] for line in user["content"].splitlines() if line.startswith("- ")]
    assert listed == [s.name for s in declared_inputs(2)] == ["sex", "age", "weight", "height", "creatinine"]
    assert "- creatinine: [value, unit] in mg/dl (or mmol/l, umol/l)" in user["content"]
    state, example = stated_inputs(system["content"])
    assert state == "ok" and example == {"age": [67, "years"], "creatinine": [1.2, "mg/dL"], "hypertension": True}


def test_names_the_calculator_reads_as_one_criterion_share_a_line():
    """CHA2DS2-VASc's code (calculators/scores_cardio.py) reads `_any(x, "Congestive Heart Faliure",
    "Congestive Heart Failure", "Congestive heart failure")` and `_any(x, "Hypertension history", "Hypertension")`:
    one line each; HAS-BLED's renal and liver criteria, similar in wording, are two."""
    lines = json.loads(prompts.INPUTS_FILE.read_text())["calculators"]
    assert "Congestive Heart Faliure / Congestive Heart Failure / Congestive heart failure: true or false" in lines["4"]
    assert "Hypertension history / Hypertension: true or false" in lines["4"]
    assert sum(line.startswith(("Renal disease criteria", "Liver disease criteria")) for line in lines["25"]) == 2


def test_an_unknown_variant_or_a_stepwise_prompt_without_its_calculator_is_refused():
    with pytest.raises(ValueError, match="not one of default, stepwise"):
        prompts.build_prompt(NOTE, QUESTION, "cot")
    with pytest.raises(ValueError, match="give its calculator_id"):
        prompts.build_prompt(NOTE, QUESTION, "stepwise")
    with pytest.raises(ValueError, match="declares no inputs"):
        prompts.build_prompt(NOTE, QUESTION, "stepwise", 999)


def test_the_lm_eval_task_dir_has_a_stepwise_task_per_config(tmp_path):
    from medcalc_maintained.harnesses.lm_eval_task import check_task_config, write_task_dir

    out = tmp_path / "tasks"
    names = sorted(p.name for p in write_task_dir(out, "v2.4"))
    assert names == sorted(["medcalc_maintained.yaml", "medcalc_maintained_full.yaml", "medcalc_maintained_mini.yaml",
                            "medcalc_maintained_stepwise.yaml", "medcalc_maintained_full_stepwise.yaml",
                            "medcalc_maintained_mini_stepwise.yaml", "utils.py"])
    class loader(yaml.SafeLoader):  # noqa: N801 - reads lm-eval's `!function` tags as text, here only
        pass

    loader.add_constructor("!function", lambda ld, node: ld.construct_scalar(node))
    step = yaml.load((out / "medcalc_maintained_mini_stepwise.yaml").read_text(), Loader=loader)
    plain = yaml.load((out / "medcalc_maintained_mini.yaml").read_text(), Loader=loader)
    assert step["description"] == prompts.STEPWISE_SYSTEM_PROMPT and plain["description"] == prompts.SYSTEM_PROMPT
    assert step["doc_to_text"] == "utils.doc_to_text_stepwise" and plain["doc_to_text"] == "utils.doc_to_text"
    assert step["metadata"]["prompt_variant"] == "stepwise" and "prompt_variant" not in plain["metadata"]
    check_task_config({**step, "dataset_path": ""})  # a Hub task: the description is the variant's
    with pytest.raises(Exception, match="not this package's system prompt"):
        check_task_config({**step, "description": prompts.SYSTEM_PROMPT, "dataset_path": ""})


def test_every_adapter_refuses_an_unknown_variant_by_name():
    from medcalc_maintained.harnesses.common import variant_metadata

    assert variant_metadata("default") == {} and variant_metadata("stepwise") == {"prompt_variant": "stepwise"}
    with pytest.raises(ValueError, match="prompt variant 'cot'"):
        variant_metadata("cot")
