"""Every input of a row read against its note (calculators/certify.py): the three verdicts on synthetic notes,
the convention for silence, recorded inputs over upstream entities, and inputs the derivation does not use."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators.certify import VERDICTS, certify_row, derived_from_evidence, row_verdict

# CHA2DS2-VASc (calculator 4): age, sex and criteria, some read under two names
NOTE = ("A 72-year-old woman with a history of hypertension and type 2 diabetes presented with palpitations. "
        "She denies any prior stroke. Her heart rate was 124 beats per minute.")


def _by_name(items):
    return {i.name: i for i in items}


def test_each_declared_input_gets_one_of_three_verdicts_and_a_certified_value_its_quote():
    ents = {"age": [72, "years"], "sex": "Female", "Hypertension history": True, "Diabetes history": True}
    items = certify_row(4, ents, NOTE)
    assert items and {i.verdict for i in items} <= set(VERDICTS)
    got = _by_name(items)
    assert got["age"].verdict == "supports" and "72-year-old" in got["age"].quote["text"]
    assert NOTE[got["age"].quote["start"]:got["age"].quote["end"]] == got["age"].quote["text"]
    assert got["Hypertension history"].verdict == "supports"
    stroke = next(i for i in items if "stroke" in i.name.lower())
    assert stroke.verdict == "supports" and stroke.quote is not None and "denies" in stroke.quote["text"]
    assert derived_from_evidence(items) and row_verdict(items) == "certified"


def test_another_value_in_the_note_contradicts_with_its_quote():
    ents = {"age": [62, "years"], "sex": "Female", "Hypertension history": True, "Diabetes history": True}
    got = _by_name(certify_row(4, ents, NOTE))
    assert got["age"].verdict == "contradicts" and got["age"].note_value.startswith("72")
    assert "72-year-old" in got["age"].quote["text"]


def test_a_present_criterion_the_note_never_states_contradicts_by_convention():
    ents = {"age": [72, "years"], "sex": "Female", "Hypertension history": True, "Diabetes history": True,
            "Congestive Heart Faliure": True}
    items = certify_row(4, ents, NOTE)
    chf = _by_name(items)["Congestive Heart Faliure"]
    assert (chf.verdict, chf.note_value, chf.convention, chf.quote) == ("contradicts", False, True, None)
    assert row_verdict(items) == "contradicted" and not derived_from_evidence(items)


def test_a_criterion_the_note_denies_contradicts_with_the_denial():
    ents = {"age": [72, "years"], "sex": "Female", "Hypertension history": True, "Diabetes history": True,
            "Stroke": True}
    stroke = next(i for i in certify_row(4, ents, NOTE) if i.name.lower().startswith("stroke"))
    assert stroke.verdict == "contradicts" and stroke.note_value is False and "denies" in stroke.quote["text"]


def test_an_unmentioned_absent_criterion_is_supported_by_convention_and_a_quantity_absent_from_the_note_is_not():
    got = _by_name(certify_row(4, {"age": [72, "years"], "sex": "Female"}, NOTE))
    chf = got["Congestive Heart Faliure"]
    assert chf.verdict == "supports" and chf.convention and chf.quote is None
    # Cockcroft-Gault (2): the note prints no creatinine, upstream records one: not addressed
    cg = _by_name(certify_row(2, {"age": [72, "years"], "sex": "Female", "weight": [60, "kg"], "height": [160, "cm"],
                                  "creatinine": [1.1, "mg/dL"]}, NOTE))
    assert cg["creatinine"].verdict == "not_addressed"
    assert row_verdict(cg.values()) == "not_addressed"


def test_a_recorded_input_is_read_before_the_upstream_entity():
    ents = {"age": [62, "years"], "sex": "Female"}
    start = NOTE.index("A 72-year-old")
    quote = {"start": start, "end": start + 13, "text": NOTE[start:start + 13]}
    got = _by_name(certify_row(4, ents, NOTE, [{"name": "age", "value": 72, "unit": "years", "evidence": quote}]))
    assert (got["age"].source, got["age"].verdict, got["age"].value) == ("recorded", "supports", 72)
    assert got["sex"].source == "upstream"


def test_an_input_the_derivation_does_not_use_is_left_out():
    # "Hypertension" and "Hypertension history" name one criterion: with the second in the entities, the note's
    # hypertension changes nothing through the first, which is not certified as contradicted
    ents = {"age": [72, "years"], "sex": "Female", "Hypertension history": True, "Diabetes history": True}
    names = {i.name for i in certify_row(4, ents, NOTE) if i.verdict == "contradicts"}
    assert "Hypertension" not in names and "Diabetes mellitus" not in names


def test_a_question_input_is_not_read_from_the_note_and_another_option_needs_the_inputs_name():
    note = "Patient has taken 40 mg of PredniSONE PO."
    target = _by_name(certify_row(24, {"input steroid": ["PredniSONE PO", 40, "mg"], "target steroid": "Cortisone PO"},
                                  note))["target steroid"]
    assert (target.verdict, target.rule) == ("not_addressed", "question-input")
    heart = ("A 50-year-old man with chest pain. The ECG showed ST depression. "
             "The rest of the laboratories were within normal limits including a TSH level.")
    items = _by_name(certify_row(18, {"Initial troponin": "greater than three times normal limit"}, heart))
    assert items["Initial troponin"].verdict != "contradicts"


# the steroid conversion (24): the dose in the note, the target in the question
STEROID_NOTE = "Patient has taken 7.96 mg of Dexamethasone PO."
STEROID_QUESTION = ("Based on the patient's dose of Dexamethasone PO, what is the equivalent dosage in mg of "
                    "PrednisoLONE PO?")
STEROID = {"input steroid": ["Dexamethasone PO", 7.96, "mg"], "target steroid": "PrednisoLONE PO"}


def test_an_input_the_question_states_is_certified_from_the_question_with_its_quote_there():
    items = _by_name(certify_row(24, STEROID, STEROID_NOTE, question=STEROID_QUESTION))
    dose, target = items["input steroid"], items["target steroid"]
    assert (dose.verdict, dose.quote_in) == ("supports", "note") and "7.96 mg" in dose.quote["text"]
    assert (target.verdict, target.quote_in) == ("supports", "question")
    assert STEROID_QUESTION[target.quote["start"]:target.quote["end"]] == target.quote["text"]
    assert target.document()["quote_in"] == "question" and row_verdict(items.values()) == "certified"
    # without the question it is not addressed, as before
    alone = _by_name(certify_row(24, STEROID, STEROID_NOTE))["target steroid"]
    assert (alone.verdict, alone.rule, alone.document()["quote_in"]) == ("not_addressed", "question-input", None)


def test_the_question_certifies_nothing_the_note_must_state():
    # the question names the dosed steroid too; the note does not dose it: not certified from the question
    items = _by_name(certify_row(24, STEROID, "The patient presented with an asthma exacerbation.",
                                 question=STEROID_QUESTION))
    assert items["input steroid"].verdict == "not_addressed" and items["input steroid"].quote_in == "note"
    from medcalc_maintained.calculators.certify import Note, certify_input
    from medcalc_maintained.calculators.inputs import declared_inputs

    spec = next(s for s in declared_inputs(24) if s.name == "input steroid")
    with pytest.raises(ValueError, match="never read in the question"):
        certify_input(24, spec, STEROID["input steroid"], None, "upstream", Note(STEROID_QUESTION), quote_in="question")


def test_a_question_naming_another_target_contradicts_with_its_quote():
    q = STEROID_QUESTION.replace("PrednisoLONE PO", "Hydrocortisone IV")
    target = _by_name(certify_row(24, STEROID, STEROID_NOTE, question=q))["target steroid"]
    assert (target.verdict, target.note_value, target.quote_in) == ("contradicts", "hydrocortisone iv", "question")


# the MME (49): one input, the list of opioids from the <Opioid> Dose / Dose Per Day entities
MME_NOTE = "He takes 10 mg of oxycodone twice daily.\nHe also takes tramadol 50 mg three times a day."
MME = {"OxyCODONE Dose": [10, "mg"], "OxyCODONE Dose Per Day": [2, "per day"], "TraMADol Dose": [50, "mg"],
       "TraMADol Dose Per Day": [3, "per day"]}


def test_an_opioid_list_over_two_sentences_is_certified_and_another_dose_contradicts():
    got = _by_name(certify_row(49, MME, MME_NOTE))["opioids"]
    assert (got.verdict, got.source) == ("supports", "upstream") and got.quote["text"].count("takes") == 2
    wrong = _by_name(certify_row(49, {**MME, "TraMADol Dose Per Day": [2, "per day"]}, MME_NOTE))["opioids"]
    assert wrong.verdict == "contradicts" and wrong.note_value == [["oxycodone", 10.0, "mg", 2.0], ["tramadol", 50.0, "mg", 3.0]]
    silent = _by_name(certify_row(49, MME, "He takes oxycodone and tramadol for back pain."))["opioids"]
    assert silent.verdict == "not_addressed"


@pytest.mark.parametrize("printed", ["283 × 103/dL", "283 x 103/µL", "283×106/L", "13.7 × 104/L"])
def test_a_power_of_ten_whose_superscript_was_lost_is_never_the_notes_other_value(printed):
    """"283 × 103/dL" is 283 × 10³ with its exponent flattened: 103 is no platelet count the note states."""
    note = f"A 58-year-old man with cirrhosis. Labs on admission: AST 116 U/L, ALT 73 U/L, platelet count {printed}."
    ents = {"age": [58, "years"], "Aspartate aminotransferase": [116, "U/L"], "Alanine aminotransferase": [73, "U/L"],
            "Platelet count": [150000, "µL"]}
    plt = _by_name(certify_row(19, ents, note))["Platelet count"]
    assert plt.verdict != "supports"
    shown = str(plt.note_value or "")
    assert not shown.startswith(("103", "104", "106")), (plt.verdict, plt.note_value)


def test_the_notes_other_blood_pressure_is_shown_in_the_inputs_unit_not_the_diastolic_after_its_slash():
    note = "A 61-year-old man presented with chest pain. His blood pressure was 93/62 mm Hg and his pulse 88."
    got = _by_name(certify_row(5, {"Systolic Blood Pressure": [92, "mm Hg"], "Diastolic Blood Pressure": [62, "mm Hg"]},
                               note))
    sbp = got["Systolic Blood Pressure"]
    assert sbp.verdict == "contradicts" and sbp.note_value == "93 mm Hg", sbp.note_value
    assert sbp.note_entity == [93.0, "mm Hg"] and "93/62 mm Hg" in sbp.quote["text"]
    assert got["Diastolic Blood Pressure"].verdict == "supports"


def test_an_abstention_uses_only_what_makes_the_definition_give_no_value():
    """An N/A label derives from the inputs that leave the definition without a value: its record's recorded
    inputs; upstream's other entities are read and listed but decide nothing (``used`` false)."""
    note = "A 45-year-old woman lost 7 kg over two months. She is admitted for intravenous fluids."
    ents = {"weight": [7.0, "kg"]}  # upstream read the weight lost as the weight
    rows = certify_row(22, ents, note)  # a number from upstream's weight: the 7 kg is no body weight
    assert row_verdict(rows) != "certified"
    absent = [{"name": "weight", "value": None, "unit": None, "evidence": {"start": None, "end": None, "text": ""}}]
    na = certify_row(22, ents, note, absent, abstains=True)  # the N/A: the note prints no body weight
    assert [(i.source, i.used, i.verdict) for i in na] == [("recorded", True, "supports")]
    assert row_verdict(na) == "certified" and derived_from_evidence(na)
    assert "used" not in na[0].document()
    # the same N/A with upstream's entities beside it: listed, unused, and deciding nothing
    heart_note = "A 60-year-old man had chest pain at rest; he has hypertension. Troponin was normal."
    heart = {"age": [60, "years"], "Hypertension history": True, "Initial troponin": "less than or equal to normal limit",
             "Suspicion History": "Moderately suspicious", "Electrocardiogram Test": "Normal"}
    no_ecg = [{"name": "Electrocardiogram Test", "value": None, "unit": None, "evidence": {"start": None, "end": None, "text": ""}}]
    got = certify_row(18, heart, heart_note, no_ecg, abstains=True)
    used = [i for i in got if i.used]
    assert [i.name for i in used] == ["Electrocardiogram Test"] and used[0].verdict == "supports"
    assert any(not i.used and i.source == "upstream" for i in got) and row_verdict(got) == "certified"
    assert all(d.get("used", True) is False for d in (i.document() for i in got if not i.used))


def test_an_abstention_resting_on_its_justification_alone_is_not_derived_from_evidence():
    """An N/A whose record records no input while upstream's entities give a value uses no input the verifier
    reads: not addressed, however well upstream's entities are quoted (never a vacuous certification)."""
    note = "A 30-year-old woman weighing 60 kg is admitted for intravenous fluids."
    got = certify_row(22, {"weight": [60.0, "kg"]}, note, abstains=True)
    assert got and all(not i.used for i in got) and all(i.verdict == "supports" for i in got)
    assert row_verdict(got) == "not_addressed" and not derived_from_evidence(got)
    assert row_verdict(certify_row(22, {"weight": [60.0, "kg"]}, note)) == "certified"  # the same inputs under a number
    assert row_verdict([]) == "not_addressed"
