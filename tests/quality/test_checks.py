"""The zero-LLM checks (issue 13): each check fires and stays silent on small synthetic notes; the
rule file names no rows; the combined detector meets its targets on the real campaign."""

from __future__ import annotations

import pandas as pd
import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.quality.checks import FINDING_COLUMNS, REGISTRY, STRUCTURED_COLUMNS, Instance, run, run_checks
from medcalc_maintained.quality.checks.metrics import detector_metrics
from medcalc_maintained.quality.checks.rules import RULES_FILE, load


def names(inst: Instance, severity: str | None = None) -> set[str]:
    return {f.check for f in run(inst) if severity is None or f.severity == severity}


def test_evidence_quotes_the_note_with_offsets():
    note = "Chief complaint: chest pain. A 4-year-old boy is febrile. Labs pending."
    inst = Instance(note=note, calculator_id=51, entities={"age": [4, "years"]})
    f = next(f for f in run(inst) if f.check == "outside_population")
    assert f.severity == "info"
    assert note[f.evidence_start:f.evidence_end] == f.evidence_text == "A 4-year-old boy is febrile."


@pytest.mark.parametrize("note,fires", [
    ("A 50-year-old man with chest pain. Troponin I was 0.01 ng/mL.", True),          # no ECG
    ("A 50-year-old man with chest pain. ECG showed sinus rhythm. Troponin I 0.01.", False),
])
def test_required_input_absent_heart(note, fires):
    assert ("required_input_absent" in names(Instance(note=note, calculator_id=18))) is fires


@pytest.mark.parametrize("note,fires", [
    ("Cirrhosis. Bilirubin 3 mg/dL, albumin 2.8 g/dL, INR 1.9. He was confused.", True),
    ("Cirrhosis with moderate ascites. Bilirubin 3 mg/dL, albumin 2.8 g/dL, INR 1.9.", False),
])
def test_required_input_absent_child_pugh(note, fires):
    assert ("required_input_absent" in names(Instance(note=note, calculator_id=15))) is fires


def test_a_never_mentioned_input_is_a_value_of_the_finding_not_only_its_prose():
    """Which input the note never mentions is a value the check sets (``unmentioned``; the ledger
    reads it there, never from the reason); only a table made with ``structured`` carries it."""
    note = "A 50-year-old man with chest pain. He is anxious."
    found = run(Instance(note=note, calculator_id=18, entities={"age": [50, "years"]}))
    assert sorted(f.unmentioned for f in found if f.check == "required_input_absent") == [("ECG",), ("troponin",)]
    assert all(f.unmentioned == () for f in found if f.check != "required_input_absent")
    upstream = pd.DataFrame({"Row Number": [7], "Calculator ID": ["18"], "Output Type": ["integer"],
                             "Patient Note": [note], "Relevant Entities": ["{'age': [50, 'years']}"],
                             "Ground Truth Answer": ["3"], "Lower Limit": ["3"], "Upper Limit": ["3"]})
    stored, structured = run_checks(upstream), run_checks(upstream, structured=True)
    assert list(stored.columns) == FINDING_COLUMNS
    assert list(structured.columns) == FINDING_COLUMNS + STRUCTURED_COLUMNS
    pd.testing.assert_frame_equal(structured[FINDING_COLUMNS], stored)
    absent = structured[structured["check"] == "required_input_absent"]
    assert sorted(absent["unmentioned"]) == [("ECG",), ("troponin",)]


def test_throat_exam_only_in_a_figure():
    shown = "A 17-year-old with sore throat. On physical exam you note the findings in Figure A."
    rash = "A 17-year-old with sore throat and tonsillar exudate. His rash can be seen in Figure A."
    assert "exam_in_figure_only" in names(Instance(note=shown, calculator_id=20))
    assert "exam_in_figure_only" not in names(Instance(note=rash, calculator_id=20))


@pytest.mark.parametrize("cid,note,ents,fires", [
    (51, "A 6-year-old girl with fever.", {"age": [6, "years"]}, False),       # age: check outside_population
    (20, "A 2-year-old boy with sore throat and tonsillar swelling.", {"age": [2, "years"]}, False),
    (22, "A 3-year-old spayed domestic shorthair cat weighing 4 kg.", {"weight": [4, "kg"]}, True),
    (22, "A neonate weighing 1.1 kg.", {"weight": [1.1, "kg"]}, True),
    (22, "A 30-year-old man weighing 70 kg.", {"weight": [70, "kg"]}, False),
    (22, "The molar and canine relation improved; he weighs 70 kg.", {"weight": [70, "kg"]}, False),
    (31, "Type 2 diabetes on insulin glargine. Fasting insulin 12 uIU/mL.", {}, True),
    (31, "Obesity without treatment. Fasting insulin 12 uIU/mL.", {}, False),
])
def test_not_applicable(cid, note, ents, fires):
    assert ("not_applicable" in names(Instance(note=note, calculator_id=cid, entities=ents))) is fires


@pytest.mark.parametrize("note,ents,fires", [
    ("A 40-year-old man who lost 7 kg over two months.", {"age": [40, "years"], "weight": [7, "kg"]}, True),
    ("A 40-year-old man weighing 24 kg.", {"age": [40, "years"], "weight": [24, "kg"]}, True),
    ("A 40-year-old man weighing 72 kg.", {"age": [40, "years"], "weight": [72, "kg"]}, False),
    ("Weight 24 kg (10th percentile).", {"age": [40, "years"], "weight": [24, "kg"]}, False),
])
def test_body_weight(note, ents, fires):
    assert ("body_weight" in names(Instance(note=note, calculator_id=2, entities=ents))) is fires


@pytest.mark.parametrize("key,note,fires", [
    ("Hypertension history", "Cirrhosis complicated by portal hypertension.", True),
    ("Hypertension history", "Long-standing hypertension on amlodipine.", False),
    ("Hypertension history", "No relevant history.", True),
    ("Previously Documented Pulmonary Embolism", "CT angiography showed a pulmonary embolism.", True),
    ("Previously Documented Pulmonary Embolism", "She had a history of pulmonary embolism in 2010.", False),
    ("Active cancer", "Breast cancer in remission after surgery.", True),
    ("Active cancer", "Metastatic lung cancer on chemotherapy.", False),
])
def test_boolean_contradicted(key, note, fires):
    inst = Instance(note=note, calculator_id=4, entities={key: True})
    assert ("boolean_contradicted" in names(inst)) is fires


def test_entity_keys_of_another_calculator_and_missing_keys():
    ents = {"Altered mental status for PECARN head injury criteria": False, "Symptom onset ≤3 days": True}
    got = names(Instance(note="Sore throat.", calculator_id=33, entities=ents))
    assert {"foreign_entity_keys", "expected_keys_missing"} <= got
    full = {k: False for k in ("Fever in past 24 hours", "Purulent tonsils", "Severe tonsil inflammation",
                               "Absence of cough or coryza", "Symptom onset ≤3 days")}
    got = names(Instance(note="Sore throat, tonsils swollen.", calculator_id=33, entities=full))
    assert not {"foreign_entity_keys", "expected_keys_missing"} & got


@pytest.mark.parametrize("note,label,fires", [
    ("Lipids: total cholesterol 220 mg/dL, LDL 177 mg/dL, HDL 40 mg/dL.", "153.6", True),
    ("Lipids: total cholesterol 220 mg/dL, LDL 154 mg/dL, HDL 40 mg/dL.", "153.6", False),
    ("LDL-cholesterol 2.85 mmol/L.", "137.38", True),                                 # mmol/L converted
])
def test_printed_value_disagrees(note, label, fires):
    assert ("printed_value_disagrees" in names(Instance(note=note, calculator_id=44, label=label))) is fires


def test_value_printed_only_as_a_change():
    ents = {"Insulin": [26, "µIU/mL"], "Glucose": [110, "mg/dL"]}
    changed = Instance(note="After treatment: glucose 110 mg/dL, insulin (−26 uIU/ml).", calculator_id=31, entities=ents)
    level = Instance(note="Fasting glucose 110 mg/dL and insulin 26 uIU/ml.", calculator_id=31, entities=ents)
    assert "value_is_a_change" in names(changed)
    assert "value_is_a_change" not in names(level)


def test_number_far_from_its_name_is_info_only():
    ents = {"creatinine": [5.2, "mg/dL"]}
    far = Instance(note="Creatinine was normal. CRP 5.2 mg/dL.", calculator_id=3, entities=ents)
    near = Instance(note="Creatinine 5.2 mg/dL.", calculator_id=3, entities=ents)
    assert {f.severity for f in run(far) if f.check == "value_far_from_its_name"} == {"info"}
    assert "value_far_from_its_name" not in names(near)
    assert "value_far_from_its_name" not in names(far, "error")


@pytest.mark.parametrize("finding,check", [
    ("aggregation_mismatch", "recompute_aggregation_mismatch"),
    ("implausible_input", "recompute_implausible_input"),
    ("not_computable", "recompute_not_computable"),
])
def test_recompute_findings_are_checks(finding, check):
    assert check in names(Instance(note="x", calculator_id=5, recompute={"finding": finding}))
    assert check not in names(Instance(note="x", calculator_id=5, recompute={"finding": "agrees"}))


def test_every_check_has_a_severity_and_description():
    assert REGISTRY and all(c.severity in ("error", "definition", "info") and c.description for c in REGISTRY.values())


def test_an_age_limit_in_the_rule_file_is_refused_naming_its_one_home(tmp_path):
    extra = "  - calculators: [19]\n    min_age_years: 18\n    rationale: FIB-4 is for adults.\n"
    text = RULES_FILE.read_text(encoding="utf-8").replace("not_applicable:\n", "not_applicable:\n" + extra, 1)
    bad = tmp_path / "rules.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match="min_age_years: .*calculators/populations.yaml"):
        load(bad)


@pytest.mark.parametrize("extra", [
    "  - calculators: [18]\n    input: ECG\n    any: ['ecg']\n    uid: 264\n    rationale: row exception\n",
    "  - calculators: [18]\n    input: ECG\n    any: ['ecg']\n    rationale: needed for uid 264\n",
])
def test_rule_file_naming_a_row_is_refused(tmp_path, extra):
    text = RULES_FILE.read_text(encoding="utf-8").replace("required_inputs:\n", "required_inputs:\n" + extra, 1)
    bad = tmp_path / "rules.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match="uid"):
        load(bad)
    load(RULES_FILE)  # the shipped file passes


def test_findings_table_and_detector_targets(real_instances, real_recompute, real_maintained):
    f = run_checks(real_instances, real_recompute)
    assert set(f["severity"]) <= {"error", "definition", "info"}
    notes = real_instances.set_index(["split", "uid"])["Patient Note"]
    quoted = f[f["evidence_start"] >= 0]
    assert len(quoted)
    for r in quoted.head(300).itertuples():
        assert notes[(r.split, r.uid)][r.evidence_start:r.evidence_end] == r.evidence_text
    m = detector_metrics(f, real_maintained)
    assert m["adjudicated_rows"] == 887 and m["changed_rows"] == 279
    assert m["combined"]["precision"] >= 0.93 and m["combined"]["recall"] >= 0.75
    rec_only = m["per_check"]["recompute_aggregation_mismatch"]
    assert m["combined"]["recall"] > rec_only["recall"]
    assert m["combined"]["unverified_rows"] == 160


def test_triage_priority_uses_findings_per_severity():
    from medcalc_maintained.planning.triage import findings_part

    df = pd.DataFrame({"split": ["test", "test", "test"], "uid": [1, 2, 3]})
    f = pd.DataFrame({"split": ["test"] * 4, "uid": [1, 1, 2, 3],
                      "check": ["required_input_absent", "body_weight", "value_far_from_its_name",
                                "recompute_aggregation_mismatch"],
                      "severity": ["error", "error", "info", "error"]})
    part, names_ = findings_part(df, f, {"error": 1.0, "info": 0.25})
    assert part.tolist() == [1.0, 0.25, 0.0]          # once per severity; recompute's own not counted twice
    assert names_[0] == "required_input_absent, body_weight" and names_[2] == ""


@pytest.mark.parametrize("note, value, spans", [
    ("Weight 70 kg, 170 cm, HR 70.", 70.0, [(7, 9), (25, 27)]),   # not inside 170
    ("Sodium 7.0 and 17 and 7.5.", 7.0, [(7, 10)]),                # 7.0 is 7; 17 and 7.5 are not
    ("Dose 07 units; ratio 1.7", 7.0, [(5, 7)]),                    # a leading zero still reads 7; 1.7 does not
    ("BMI 0.5 and .5", 0.5, [(4, 7)]),                              # ".5" is not a number of the note
    ("no numbers here", 3.0, []),
    ("minus -4 is printed as 4", -4.0, []),                         # signs are never part of a printed number
    ("WBC 1,200 cells", 1200.0, [(4, 9)]),                          # a thousands comma (note_text's reading)
])
def test_occurrences_of_a_value_in_the_note(note, value, spans):
    assert Instance(note=note).occurrences(value) == spans


def test_case_insensitive_rules_match_the_same_on_the_lower_case_path():
    import re

    from medcalc_maintained.quality.checks.registry import fast_twin

    pat = re.compile(r"\bheterophile[^.]{0,40}positive", re.I)
    assert fast_twin(pat) is not None
    assert fast_twin(re.compile(r"\bPECARN", re.I)) is None        # an upper-case letter: no twin
    assert fast_twin(re.compile(r"\S+ kg", re.I)) is not None       # escapes are not letters of the text
    inst = Instance(note="Monospot: HETEROPHILE antibody test Positive.")
    m = inst.search(pat)
    assert m is not None and inst.note[m.start():m.end()] == "HETEROPHILE antibody test Positive"
    # a letter whose lower case is longer would move offsets: the original note is searched instead
    odd = Instance(note="\u0130stanbul trip; heterophile test positive.")
    assert odd.lower is None
    m = odd.search(pat)
    assert m is not None and odd.note[m.start():m.end()] == "heterophile test positive"


@pytest.mark.parametrize("note, ents, fires", [
    ("Her body mass index (BMI) 30.7 kg/m2.", {"obesity": False}, True),         # the note's BMI says obese
    ("BMI: 24.1.", {"obesity": True}, True),                                      # entered present, BMI normal
    ("BMI of 30.2.", {"obesity": False}, False),                                  # within the margin of the cut-off
    ("BMI 33.", {"obesity": True}, False),
    ("An obese man.", {"obesity": True}, False),                                  # no BMI: nothing to contradict
    ("Weighs 110 kg, 170 cm tall.", {"obesity": False, "weight": [110, "kg"], "height": [170, "cm"]}, True),
])
def test_bmi_contradicts_obesity(note, ents, fires):
    assert ("bmi_contradicts_obesity" in names(Instance(note=note, calculator_id=18, entities=ents))) is fires
