"""Definition policy: coverage, the published alternatives (hand-computed), definition findings,
policy contradictions on the real maintained labels and their re-review in the triage queue."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.calculators import policy as P
from medcalc_maintained.calculators.alternatives import ALTERNATIVES, compute_alternative
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.planning import requeue
from medcalc_maintained.quality import definitions as D
from tests.support.citations import cites


def _alt(cid, name, entities):
    return compute_alternative(cid, name, entities).value


# --- the policy covers every calculator, and names only implemented alternatives -------------------

def test_the_citation_forms_reject_a_bare_number_or_word():
    for bad in ("19", "2017", "c", "y", "see above", "", None, "Chest", "TODO: cite"):
        assert not cites(bad), bad
    for good in ("Lip GYH et al. Chest 2010;137:263-72", "ACOG Committee Opinion No. 700 (2017)",
                 "doi 10.1056/NEJMoa2102953", "https://www.mdcalc.com/calc/60/delta-gap", 'MDCalc "Target Weight"',
                 "Mosteller RD. N Engl J Med 1987;317:1098", "Little P et al. BMJ 2013;347:f5806"):
        assert cites(good), good


def test_policy_covers_every_registered_calculator():
    registry = load_all()
    policy = P.load_policy()
    assert len(registry) == 55
    assert set(policy) == set(registry)
    for cid, entry in policy.items():
        assert entry["name"] == registry[cid].name
        for fld in ("version", "definition"):
            assert str(entry[fld]).strip(), (cid, fld)
        assert cites(entry["citation"]), (cid, entry["citation"])
        for name, alt in entry["alternatives"].items():
            assert (cid, name) in ALTERNATIVES, (cid, name)
            assert str(alt["definition"]).strip() and cites(alt["citation"]), (cid, name, alt["citation"])


def test_every_implemented_alternative_is_declared_and_cites_a_source():
    named = {(cid, name) for cid, e in P.load_policy().items() for name in e["alternatives"]}
    assert set(ALTERNATIVES) == named
    assert all(inspect.getdoc(fn) for fn in ALTERNATIVES.values())
    # the alternatives the issue names are there
    for key in [(63, "delta_gap_minus_delta_bicarbonate"), (49, "cdc_2016"), (25, "hypertension_uncontrolled_sbp_160"),
                (13, "lmp_plus_280"), (13, "naegele_calendar"), (44, "measured_ldl"), (15, "cholestatic_bilirubin"),
                (23, "meld_na_unrounded"), (28, "chronic_health_unstated_elective"), (3, "ckd_epi_2009"),
                (21, "not_testable_scored_1")]:
        assert key in ALTERNATIVES


def test_policy_refuses_an_unimplemented_alternative(monkeypatch, tmp_path):
    bad = tmp_path / "definitions.yaml"
    bad.write_text("calculators:\n  5:\n    name: MAP\n    version: v\n    definition: d\n    citation: c\n"
                   "    alternatives:\n      nonexistent: {definition: x, citation: y}\n", encoding="utf-8")

    class Res:
        def joinpath(self, name):
            return bad

    monkeypatch.setattr(P.resources, "files", lambda pkg: Res())
    P.load_policy.cache_clear()
    try:
        with pytest.raises(DataError, match=r"calculator 5, field 'alternatives': alternative 'nonexistent' is not implemented"):
            P.load_policy()
    finally:
        monkeypatch.undo()
        P.load_policy.cache_clear()
    assert 63 in P.load_policy()


# --- each alternative, hand-computed ------------------------------------------------------------

AG = {"Sodium": [140, "mmol/L"], "Chloride": [100, "mmol/L"], "Bicarbonate": [14, "mmol/L"]}


def test_delta_gap_variants():
    # AG = 140 - 114 = 26; AG - 12 = 14; minus (24 - 14) = 4
    assert compute(63, AG).value == "14"
    assert _alt(63, "delta_gap_minus_delta_bicarbonate", AG) == "4"
    # albumin 2 g/dL: corrected AG = 26 + 2.5 * 2 = 31; 31 - 12 - 10 = 9
    assert _alt(66, "delta_gap_minus_delta_bicarbonate", {**AG, "Albumin": [2, "g/dL"]}) == "9"
    # delta ratio with normal AG 10: (26 - 10) / (24 - 14) = 1.6
    assert _alt(64, "normal_anion_gap_10", AG) == "1.6"


def test_mme_cdc_2016_factors():
    methadone = {"Methadone Dose": [10, "mg"], "Methadone Dose Per Day": [3, "per day"]}
    # 30 mg/day: 2022 factor 4.7 -> 141; 2016 tier 21-40 mg -> 8 -> 240
    assert compute(49, methadone).value == "141"
    assert _alt(49, "cdc_2016", methadone) == "240"
    # 15 mg/day methadone -> tier 4 -> 60
    assert _alt(49, "cdc_2016", {"Methadone Dose": [5, "mg"], "Methadone Dose Per Day": [3, "per day"]}) == "60"
    # hydromorphone 4 mg x 4 = 16 mg -> x4 = 64 (2022: x5 = 80); tramadol 50 x 4 = 200 mg -> x0.1 = 20
    mixed = {"HYDROmorphone Dose": [4, "mg"], "HYDROmorphone Dose Per Day": [4, "per day"],
             "TraMADol Dose": [50, "mg"], "TraMADol Dose Per Day": [4, "per day"]}
    assert compute(49, mixed).value == "120"  # 80 + 40
    assert _alt(49, "cdc_2016", mixed) == "84"  # 64 + 20


def test_pregnancy_dating_variants():
    e = {"Last menstrual date": "03/01/2024", "cycle length": 35}
    # day 61 of 2024 + 280 = day 341 = 12/06/2024; cycle-adjusted +7 -> 12/13/2024
    assert compute(13, e).value == "12/13/2024"
    assert _alt(13, "lmp_plus_280", e) == "12/06/2024"
    # calendar rule: 03/01/2024 + 1 y - 3 m = 12/01/2024, + 7 d = 12/08/2024; adjusted +7 -> 12/15/2024
    assert _alt(13, "naegele_calendar", e) == "12/08/2024"
    assert _alt(13, "naegele_calendar_cycle_adjusted", e) == "12/15/2024"
    # conception: LMP + 14 = 03/15/2024 (declared: + 35 - 14 = 21 days -> 03/22/2024)
    assert _alt(68, "lmp_plus_14", e) == "03/15/2024"
    assert compute(68, e).value == "03/22/2024"
    # the cycle-free variants need only the LMP; the cycle-adjusted ones need the cycle length too
    lmp_only = {"Last menstrual date": "03/01/2024"}
    assert [_alt(13, n, lmp_only) for n in ("lmp_plus_280", "naegele_calendar")] == ["12/06/2024", "12/08/2024"]
    assert _alt(68, "lmp_plus_14", lmp_only) == "03/15/2024"
    adjusted = compute_alternative(13, "naegele_calendar_cycle_adjusted", lmp_only)
    assert adjusted.value is None and adjusted.missing == ("cycle length",)
    for cid, name in ((13, "lmp_plus_280"), (13, "naegele_calendar"), (68, "lmp_plus_14")):
        r = compute_alternative(cid, name, {"cycle length": 28})
        assert r.value is None and r.missing == ("Last menstrual date",), name


def test_renal_variants():
    # CKD-EPI 2009, female 50 y, SCr 0.7: 141 x 0.993^50 x 1.018 = 101.025
    assert _alt(3, "ckd_epi_2009", {"sex": "Female", "age": [50, "years"], "creatinine": [0.7, "mg/dL"]}) == "101.025"
    # Black male 60 y, SCr 1.2: 141 x (1.2/0.9)^-1.209 x 0.993^60 x 1.159 = 75.719
    assert _alt(3, "ckd_epi_2009", {"sex": "Male", "age": [60, "years"], "creatinine": [1.2, "mg/dL"],
                                    "Race": "Black"}) == "75.719"
    mdrd = {"sex": "Male", "age": [60, "years"], "creatinine": [1.0, "mg/dL"], "Race": "White"}
    # 175 x 60^-0.203 = 76.221; 186 x 60^-0.203 = 81.012
    assert compute(9, mdrd).value == "76.221"
    assert _alt(9, "mdrd_186_non_idms", mdrd) == "81.012"
    # Cockcroft-Gault with actual weight: (140 - 60) x 80 / 72 = 88.889
    assert _alt(2, "actual_body_weight", {"sex": "Male", "age": [60, "years"], "weight": [80, "kg"],
                                          "height": [150, "cm"], "creatinine": [1.0, "mg/dL"]}) == "88.889"
    # Katz: 130 + 0.016 x 500 = 138 (Hillier: 130 + 12 = 142)
    e = {"Sodium": [130, "mmol/L"], "Glucose": [600, "mg/dL"]}
    assert (compute(26, e).value, _alt(26, "katz_1973", e)) == ("142", "138")


def test_lipid_and_liver_variants():
    lip = {"Total cholesterol": [200, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"],
           "Triglycerides": [150, "mg/dL"]}
    # Sampson: 200/0.948 - 50/0.971 - (150/8.56 + 150*150/2140 - 150^2/16100) - 9.44 = 123.397
    assert _alt(44, "sampson_2020", lip) == "123.397"
    assert _alt(44, "measured_ldl", {**lip, "LDL cholesterol": [131, "mg/dL"]}) == "131"
    assert compute_alternative(44, "measured_ldl", lip).value is None  # no measured LDL given
    meld = {"creatinine": [2, "mg/dL"], "Bilirubin": [3, "mg/dL"], "international normalized ratio": 2,
            "Sodium": [130, "mmol/L"]}
    # MELD(i) = 10 x (0.957 ln 2 + 0.378 ln 3 + 1.120 ln 2 + 0.643) = 24.979
    # unrounded: 24.979 + 1.32 x 7 - 0.033 x 24.979 x 7 = 28.45 -> 28; MELD 2002: 25
    assert _alt(23, "meld_na_unrounded", meld) == "28"
    assert _alt(23, "meld_2002", meld) == "25"
    cp = {"Bilirubin": [3.5, "mg/dL"], "Albumin": [3.0, "g/dL"], "international normalized ratio": 1.5}
    # bilirubin 3.5: standard bands 3 points (total 3+2+1+1+1 = 8), cholestatic bands (<4) 1 point -> 6
    assert (compute(15, cp).value, _alt(15, "cholestatic_bilirubin", cp)) == ("8", "6")


def test_body_size_variants():
    # Robinson, male 70 in (177.8 cm): 52 + 1.9 x 10 = 71
    assert _alt(10, "robinson_1983", {"sex": "Male", "height": [177.8, "cm"]}) == "71"
    # Du Bois, 70 kg 170 cm: 0.007184 x 70^0.425 x 170^0.725 = 1.81
    assert _alt(60, "du_bois_1916", {"weight": [70, "kg"], "height": [170, "cm"]}) == "1.81"


def test_score_variants():
    # CHA2DS2-VASc of a 70-year-old woman with hypertension: 1 + 1 + 1 = 3; CHA2DS2-VA drops sex -> 2
    e = {"age": [70, "years"], "sex": "Female", "Hypertension history": True}
    assert (compute(4, e).value, _alt(4, "cha2ds2_va_2024", e)) == ("3", "2")
    # HAS-BLED, 70 y with hypertension history: 2; uncontrolled-only: 1, or 2 with SBP 170
    hb = {"age": [70, "years"], "Hypertension history": True}
    assert (compute(25, hb).value, _alt(25, "hypertension_uncontrolled_sbp_160", hb)) == ("2", "1")
    assert _alt(25, "hypertension_uncontrolled_sbp_160", {**hb, "Systolic Blood Pressure": [170, "mm Hg"]}) == "2"
    # Centor: 10 y, 38.5 C, cough absent: McIsaac 1 + 1 + 1 = 3; original Centor 2
    ce = {"age": [10, "years"], "Temperature": [38.5, "degrees celsius"], "Cough Absent": True}
    assert (compute(20, ce).value, _alt(20, "original_centor", ce)) == ("3", "2")
    # GCS with verbal not testable: declared N/A; "1T" convention 4 + 1 + 6 = 11
    g = {"Best eye response": "eyes open spontaneously", "Best verbal response": "not testable",
         "Best motor response": "obeys commands"}
    assert compute(21, g).value is None and _alt(21, "not_testable_scored_1", g) == "11"
    # Charlson, 75 y with MI: 3 + 1 = 4; without age points 1
    cci = {"age": [75, "years"], "Myocardial infarction": True}
    assert (compute(32, cci).value, _alt(32, "without_age_points", cci)) == ("4", "1")


def test_apache_unstated_admission_alternative_on_real_rows(real_instances):
    import json
    rows = real_instances[real_instances["calculator_id"].astype(int) == 28]
    seen = 0
    for raw in rows["entities"]:
        e = json.loads(raw)
        d = compute(28, e).value
        if d is None:
            continue
        a = _alt(28, "chronic_health_unstated_elective", e)
        unstated = e.get("History of severe organ failure or immunocompromise") is True and "Surgery Type" not in e
        # nonoperative 5 points vs elective 2 points: exactly 3 less, and only then
        assert int(a) == int(d) - (3 if unstated else 0)
        seen += unstated
    assert seen >= 1


# --- findings ------------------------------------------------------------------------------------

def test_definition_finding_says_how_much_the_label_changes():
    e = {"Methadone Dose": [10, "mg"], "Methadone Dose Per Day": [3, "per day"]}
    [f] = D.definition_findings(49, e, "141", "decimal")
    assert f["check"] == "definition_alternative" and f["severity"] == "definition"
    assert f["evidence_text"] == "" and f["evidence_start"] is None and f["evidence_end"] is None
    # (240 - 141) / 141 = +70%
    assert "cdc_2016" in f["reason"] and "240 instead of 141 (+70%)" in f["reason"]
    # a label that follows the alternative is named as such
    [g] = D.definition_findings(49, e, "240", "decimal")
    assert "follows cdc_2016" in g["reason"] and "gives 141" in g["reason"]
    # no alternative differs (no methadone/hydromorphone/tramadol): no finding; no alternatives: none
    assert D.definition_findings(49, {"Morphine Dose": [10, "mg"], "Morphine Dose Per Day": [2, "per day"]}, "20",
                                 "decimal") == []
    assert D.definition_findings(5, {"Systolic Blood Pressure": [120, "mm Hg"],
                                     "Diastolic Blood Pressure": [60, "mm Hg"]}, "80", "decimal") == []
    # dates: in days; a decrease carries a minus sign
    [d] = D.definition_findings(68, {"Last menstrual date": "03/01/2024", "cycle length": 35}, "03/22/2024", "date")
    assert "03/15/2024 instead of 03/22/2024 (-7 days)" in d["reason"]
    [m] = D.definition_findings(63, AG, "14", "decimal")
    assert "4 instead of 14 (\u221271%)" in m["reason"]
    assert D.definition_findings(63, AG, "N/A", "decimal") == []


def test_guideline_versions():
    assert P.guideline_version(49) == "cdc-2022-mme"
    assert P.guideline_version(3) == "ckd-epi-2021-race-free"
    assert P.guideline_version(12345) is None


# --- contradictions and re-review ----------------------------------------------------------------

@pytest.fixture(scope="module")
def contradictions(real_maintained, real_instances):
    return D.policy_contradictions(real_maintained, real_instances)


def test_policy_contradictions_on_real_labels(contradictions, real_maintained):
    c = contradictions.set_index("uid")
    assert list(contradictions.columns) == D.CONTRADICTION_COLUMNS
    assert 15 <= len(c) <= 60
    # uid 990 (MME): the note gives methadone; campaign label 366 follows the 2016 tiers, the declared
    # 2022 factors give 426 (verified against the note); uid 992 with 2022 factors was confirmed -> not listed
    assert c.loc[990, "alternative"] == "cdc_2016" and c.loc[990, "declared_value"] == "426"
    assert c.loc[990, "label"] == "366" and c.loc[990, "label_status"] == "corrected"
    assert 992 not in c.index
    # uid 742 (delta gap): label 3 = (AG - 12) - (24 - HCO3); the declared AG - 12 gives 18
    assert c.loc[742, "alternative"] == "delta_gap_minus_delta_bicarbonate" and c.loc[742, "declared_value"] == "18"
    # every listed row: declared value disagrees with the label, the named alternative reproduces it
    m = real_maintained.set_index("uid")
    for uid, r in c.iterrows():
        assert m.loc[uid, "Ground Truth Answer"] == r["label"]
        assert r["declared_value"] != r["label"]


def test_contradictions_go_to_the_triage_queue_first(contradictions, tmp_path):
    rows = requeue.requeue(contradictions)
    assert len(rows) == len(contradictions) and all(v.startswith("policy contradiction: ") for v in rows.values())
    queue = pd.DataFrame({"split": ["test"] * 4, "uid": [1, 990, 2, 742], "priority": [5.0, 0.1, 3.0, 0.0],
                          "evidence": ["recompute disagrees", "", "", "x"], "rank": [1, 3, 2, 4]})
    q = requeue.mark_queue(queue, rows)
    assert list(q["uid"]) == [990, 742, 1, 2] and list(q["rank"]) == [1, 2, 3, 4]
    assert q["policy_contradiction"].tolist() == [True, True, False, False]
    assert q.loc[0, "evidence"].startswith("policy contradiction: label 366 follows cdc_2016")
    assert q.loc[1, "evidence"].endswith("; x") and q.loc[2, "evidence"] == "recompute disagrees"
    assert list(q["priority"]) == [0.1, 0.0, 5.0, 3.0]  # priorities are kept, nothing else changes
    out = D.write_contradictions(contradictions, tmp_path / "policy_contradictions.csv")
    back = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(back) == len(contradictions) and list(back.columns) == D.CONTRADICTION_COLUMNS
