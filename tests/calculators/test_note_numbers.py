"""How the evidence verifier reads numbers and units a note prints (issue 45): European decimal commas and
spaced thousands, powers of ten whose superscript a copy flattened, spelled and multiplied units. Each rule is
tested both ways: the case it reads, and a near case it must leave alone."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.evidence import verify
from medcalc_maintained.core import units as U


def _judge(cid: int, note: str, name: str, value, unit=None, quote: str | None = None):
    text = quote or note
    start = note.index(text)
    inp = {"name": name, "value": value, "unit": unit, "evidence": {"start": start, "end": start + len(text), "text": text}}
    return verify(cid, inp, note)


def _read(text: str) -> list[tuple[str, float]]:
    return [(text[a:b], v) for a, b, v in T.numbers(text)]


# ------------------------------------------------------------------------------------------------
# a decimal comma: read only before a unit


@pytest.mark.parametrize("text,want", [
    ("calcium level of 12,35 mg/dL, and", [("12,35", 12.35)]),
    ("urea 145,7 mg/dL [14.9 – 51.4]", [("145,7", 145.7), ("14.9", 14.9), ("51.4", 51.4)]),
    ("potassium 1,6 mmol/l).", [("1,6", 1.6)]),
])
def test_a_decimal_comma_before_a_unit_is_a_decimal_point(text, want):
    assert _read(text) == want


@pytest.mark.parametrize("text,want", [
    ("platelets 12,350 mg", [("12,350", 12350.0)]),                        # a thousands comma
    ("grades 3,4 and 5", [("3", 3.0), ("5", 5.0)]),                          # no unit: a list, as before
    ("lesions 3, 4 and 5 mm wide", [("3", 3.0), ("4", 4.0), ("5", 5.0)]),    # a comma and a space: a list
    ("BP readings 120, 80 and 60 mmHg", [("120", 120.0), ("80", 80.0), ("60", 60.0)]),
    ("low 1,25-dihydroxyvitamin D", [("1", 1.0)]),                           # a chemical name
    ("seen on 12,05,2019 mg", [("12", 12.0)]),                               # a date with commas
    ("aPTT 77,5 and INR 2.3", [("77", 77.0), ("2.3", 2.3)]),                 # no unit: left as before
    ("a height of 1, 65 cm", [("1", 1.0), ("65", 65.0)]),                    # a comma and a space
    # (only a height in metres reads "1, 65 m" as 1.65: note_numbers.SPACED_COMMA_METRES, tested in
    # test_evidence_recall_recall-g4.py)
])
def test_a_comma_without_a_unit_after_it_is_no_decimal_comma(text, want):
    assert _read(text) == want


def test_a_decimal_comma_supports_the_value_and_not_its_integer_part():
    note = "Biochemical tests revealed an albumin level of 4.9 g/dL, calcium level of 12,35 mg/dL, and a phosphate level of 2 mg/dL."
    assert _judge(7, note, "Calcium", 12.35, "mg/dL").supports
    assert not _judge(7, note, "Calcium", 12, "mg/dL").supports


# ------------------------------------------------------------------------------------------------
# a space between groups of three digits: a count before a per-volume unit (or of a count input)


@pytest.mark.parametrize("text,want", [
    ("platelets 186 000/μL, ALT 91 U/L", [("186 000", 186000.0), ("91", 91.0)]),
    ("white blood cell count, 9 800/μl; haemoglobin", [("9 800", 9800.0)]),
    ("platelets 1 186 000 cells/µL", [("1 186 000", 1186000.0)]),
])
def test_spaced_thousands_before_a_per_volume_unit_are_one_count(text, want):
    assert _read(text) == want


@pytest.mark.parametrize("text,want", [
    ("an intra-abdominal volume of 12 021 ml.", [("12", 12.0), ("021", 21.0)]),      # not a count
    ("platelet count 183 103/uL (normal", [("183", 183.0), ("103", 103.0)]),          # 183 x 10^3/uL, sign lost
    ("aged 45 120/80 mmHg", [("45", 45.0), ("120", 120.0), ("80", 80.0)]),
    ("HR 88 1200 mL", [("88", 88.0), ("1200", 1200.0)]),                               # four digits: no group
])
def test_spaced_numbers_that_are_no_count_stay_apart(text, want):
    assert _read(text) == want


def test_spaced_thousands_support_a_count_and_the_parts_do_not():
    note = "Laboratory tests showed white blood count 3300/μL, hemoglobin 13 g/dL, platelets 186 000/μL, ALT 91 U/L."
    assert _judge(43, note, "Platelet count", 186000, "µL").supports
    assert not _judge(43, note, "Platelet count", 186, "µL").supports
    bare = "His hemoglobin was 12.1 g/dL and platelets of 167 000. His troponin was 0.02 ng/mL."
    assert _judge(43, bare, "Platelet count", 167000, "µL", "His hemoglobin was 12.1 g/dL and platelets of 167 000").supports
    volume = "The intra-abdominal volume was 12 021 ml and the platelet count 150/µL."
    assert not _judge(43, volume, "Platelet count", 12021, "µL").supports


def test_a_range_of_grouped_numbers_is_a_range():
    assert [m.group(0) for m in T.RANGE.finditer("platelets 150,000-400,000/µL")] == ["150,000-400,000"]
    assert [m.group(0) for m in T.RANGE.finditer("platelets 150 000-400 000/µL")] == ["150 000-400 000"]
    note = "Her platelet count was 90,000/µL (reference 150,000-400,000/µL) on admission."
    assert _judge(43, note, "Platelet count", 400000, "µL").rule == "reference-bound"


# ------------------------------------------------------------------------------------------------
# powers of ten: a flattened superscript after a multiplication sign, an exponent, K and lakh


@pytest.mark.parametrize("printed,value,ok", [
    ("platelet count (16.5 × 104/µL)", 165000, True),       # 16.5 x 10^4/µL
    ("platelet count 7.8×103/µL", 7800, True),
    ("platelet count 106 × 109/L", 106000, True),
    ("platelet count 106 x 10^9/L", 106000, True),
    ("platelet count 177 x10E9/L", 177000, True),
    ("platelet count 3.3 × 106/mm3", 3300000, True),
    ("platelet count 129 K/mm3", 129000, True),
    ("platelet count 129 K/µL", 129000, True),
    ("platelet count 129 10^3/mm3", 129000, True),
    ("platelet count 4.5 lac/mm3", 450000, True),
    ("platelet count 2.9 lakh cells/cu mm", 290000, True),
    ("platelet count 290 thou/cu mm", 290000, True),
    ("platelet count of 16.5 × 104/µL", 16.5, False),       # the multiplier dropped
    ("platelet count 283 × 103/dL", 283000, False),         # per decilitre: no count unit
    ("platelet count 13.7 × 104/L", 13700, False),          # 10^4/L is no count anyone prints: a garbled power
])
def test_a_power_of_ten_after_a_multiplication_sign_multiplies_the_count(printed, value, ok):
    note = f"The laboratory data were: hemoglobin (10.1 g/dL), {printed}, creatinine (0.51 mg/dL)."
    v = _judge(43, note, "Platelet count", value, "µL", printed)
    assert v.supports is ok, v.reason


def test_a_flattened_power_is_read_only_after_a_multiplication_sign():
    assert T.unit_after("16.5 × 104/µL", 4) == ("104/µL", "10^4/ul")
    assert T.unit_after("16.5 104/µL", 4) == ("104/µL", None)           # no sign: 104 is a number
    assert T.unit_after("16.5 × 104 mg", 4)[1] is None                   # no per-volume unit after it
    assert T.unit_after("2.21 × 1012/L", 4) == ("1012/L", "10^12/l")


def test_units_module_reads_exponents_spelled_units_and_counts():
    assert U.normalise_unit("10E9/L") == "10^9/l" and U.to_canonical("count_per_ul", 70.7, "x10E9/L") == pytest.approx(70700)
    assert U.to_canonical("count_per_ul", 16.5, "10^4/µL") == 165000
    assert U.normalise_unit("cells/μL") == "/ul" and U.normalise_unit("K/cmm") == "k/mm^3"
    assert U.normalise_unit("lakh cells/cu mm") == "lakh/mm^3" and U.normalise_unit("cells") == "cells"
    assert U.normalise_unit("kilograms") == "kg" and U.normalise_unit("centimeter") == "cm"
    assert U.normalise_unit("millimeters of mercury") == "mmhg" and U.normalise_unit("mm of Hg") == "mmhg"
    assert U.same_unit("enzyme", "IU/L", "U/L")
    assert all(U.normalise_unit(u) == u for kind in U.CANONICAL for u in U.known_units(kind))


@pytest.mark.parametrize("printed,value,unit,ok", [
    ("her weight was 49 kilograms", 49, "kg", True),
    ("her weight was 49 kilograms", 49, "lb", False),
    ("a blood glucose level of 120 mg per deciliter", 120, "mg/dL", True),
    ("AST 444 IU/L", 444, "U/L", True),
])
def test_spelled_units_and_iu_per_litre_are_read(printed, value, unit, ok):
    note = f"A 40-year-old woman was admitted; {printed}."
    names = {"kg": ("weight", 6), "lb": ("weight", 6), "mg/dL": ("Glucose", 31), "U/L": ("Aspartate aminotransferase", 19)}
    name, cid = names[unit]
    v = _judge(cid, note, name, value, unit, printed)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# a conversion at the record's precision


@pytest.mark.parametrize("printed,value,unit,ok", [
    ("creatinine of 150 µmol/L", 1.7, "mg/dL", True),        # 1.697
    ("creatinine of 150 µmol/L", 1.70, "mg/dL", True),
    ("creatinine of 120 µmol/L", 1.36, "mg/dL", True),       # 1.357
    ("creatinine of 150 µmol/L", 2, "mg/dL", False),         # rounds to 2, but 18% away: not the record's precision
    ("creatinine of 120 µmol/L", 1.3, "mg/dL", False),
    ("creatinine of 0.91 mg/dL", 80.4, "µmol/L", True),      # 80.44
    ("creatinine of 0.91 mg/dL", 80, "µmol/L", True),
    ("creatinine of 0.91 mg/dL", 0.9, "mg/dL", False),       # the recorded unit: no conversion, no rounding
])
def test_a_converted_value_holds_at_the_records_precision(printed, value, unit, ok):
    note = f"A 60-year-old man was admitted. Labs showed a {printed}."
    v = _judge(2, note, "creatinine", value, unit, printed)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# which quantity a number belongs to: a dash that separates, an abbreviation in a slash list, a unit after an age


def test_a_spaced_dash_after_a_name_separates_it_from_its_value():
    note = "Vital signs (heart rate – 82 beats/min, respiratory rate – 16 breaths/min) were recorded."
    assert _judge(8, note, "Heart Rate or Pulse", 82, "beats per minute").supports
    signed = "After 6 months there were improvements including insulin (–26 uIU/ml) and glucose."
    assert _judge(31, signed, "Insulin", 26, "µIU/mL").rule == "wrong-quantity"
    attached = "After 6 months the change in insulin was –26 uIU/ml and glucose improved."
    assert _judge(31, attached, "Insulin", 26, "µIU/mL").rule == "wrong-quantity"


def test_an_abbreviation_in_parentheses_keeps_a_slash_list_of_names():
    note = "His labs showed potassium of 3.3, blood urea nitrogen (BUN)/creatinine of 21/1.0, and ALP of 136."
    assert _judge(30, note, "Blood Urea Nitrogen (BUN)", 21, "mg/dL").supports
    assert not _judge(30, note, "Blood Urea Nitrogen (BUN)", 1.0, "mg/dL").supports


def test_a_mass_or_a_length_after_an_age_is_the_weight_or_the_height():
    note = "A 45-year-old, 58 kg, 156 cm woman presented with prolonged vaginal bleeding."
    assert _judge(62, note, "weight", 58, "kg").supports
    assert _judge(62, note, "height", 156, "cm").supports
    assert not _judge(62, note, "weight", 45, "kg").supports
    years = "A woman aged 58 years presented with prolonged vaginal bleeding."
    assert not _judge(62, years, "weight", 58, "kg").supports
