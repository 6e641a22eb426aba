"""Decision thresholds (calculators/thresholds.yaml) and the severity of a label change (calculators/severity).

Expected levels come from the published cut-offs quoted in each test, not from the code: e.g.
CURB-65 0-1 home / 2 short stay / >=3 hospital (BTS 2009), CHA2DS2-VASc anticoagulation at >=2 in
men and >=3 in women (ESC 2020), QTc prolonged at >=450 ms (men) / >=460 ms (women) and high risk
above 500 ms (AHA/ACCF/HRS 2009, Drew 2010).
"""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.severity import LEVELS, change_table, level_counts, per_calculator, severity
from medcalc_maintained.calculators.thresholds import action_edges, load, thresholds
from medcalc_maintained.core.errors import DataError
from tests.support.citations import cites

MALE, FEMALE = {"sex": "Male"}, {"sex": "Female"}


def lv(*args, **kw) -> str:
    return severity(*args, **kw)[0]


# -- the thresholds file ---------------------------------------------------------------------------

def test_every_calculator_has_one_entry_with_a_citation_or_a_reason():
    t = thresholds()
    assert set(t) == set(load_all()) and len(t) == 55
    for cid, e in t.items():
        if e.type == "none":
            assert not e.has_bands and len(e.reason) > 40, cid
        else:
            assert len(e.citation) > 40 and cites(e.citation), (cid, e.citation)
            assert e.has_bands or e.type in ("relative_dose", "date_shift"), cid


def test_calculators_without_bands_are_the_documented_seven():
    none = sorted(cid for cid, e in thresholds().items() if e.type == "none")
    # APACHE II, serum osmolality, HOMA-IR, Charlson, target weight, delta gap, albumin-corrected delta gap
    assert none == [28, 30, 31, 32, 61, 63, 66]


def test_sex_and_age_dependent_entries_name_their_entity_keys():
    t = thresholds()
    assert {cid for cid, e in t.items() if e.type == "sex_dependent"} == {4, 11, 56, 57, 58, 59}
    assert {cid for cid, e in t.items() if e.type == "age_dependent"} == {19}
    assert t[4].depends_on == "sex" and t[19].depends_on == "age"


def test_care_changing_edges_of_curb65():
    edges = action_edges(thresholds()[45].bands)
    assert [hi for _, hi in edges] == ["moderate (2)", "severe (3)"]  # not 3 -> 4-5 (both hospital)


@pytest.mark.parametrize("text, field", [
    ("calculators: {1: {type: score, citation: x, bands: [{name: a, action: x}, {name: b, action: y}]}}", "bands[1]"),
    ("calculators: {1: {type: score, citation: x, bands: [{name: a, action: x}, {name: b, min: 3, action: y},"
     " {name: c, min: 2, action: z}]}}", "bands[2]"),
    ("calculators: {1: {type: none, bands: none}}", "reason"),
    ("calculators: {1: {type: cutoff, bands: [{name: a, action: x}]}}", "citation"),
    ("calculators: {1: {type: relative_dose, citation: x, tolerance: 1.5, tolerance_basis: y}}", "tolerance"),
    ("calculators: {1: {type: sex_dependent, citation: x, depends_on: sex, variants: ["
     "{when: {sex: other}, bands: [{name: a, action: x}]}, {when: {sex: male}, bands: [{name: a, action: x}]}]}}",
     "variants[0].when"),
    ("calculators: {1: {type: banded}}", "type"),
])
def test_a_bad_entry_is_refused_with_calculator_and_field(text, field):
    with pytest.raises(DataError) as exc:
        load(text, "t.yaml")
    assert exc.value.row == 1 and exc.value.field == field and "t.yaml" in str(exc.value)


def test_an_entry_missing_for_a_calculator_is_refused():
    with pytest.raises(DataError, match=r"missing \[2\]"):
        load("calculators: {1: {type: none, bands: none, reason: r}}", "t.yaml", {1, 2})


# -- score bands (integer) -------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, level", [
    ("1", "1", "L0"),
    ("0", "1", "L1"),  # both 0-1: home treatment
    ("1", "2", "L3"),  # home -> short stay
    ("2", "3", "L3"),  # short stay -> hospital
    ("3", "4", "L2"),  # both hospital (severe), 4-5 adds ICU assessment only
    ("4", "5", "L1"),
])
def test_curb65_band_edges(old, new, level):
    assert lv(45, old, new, "integer") == level


@pytest.mark.parametrize("cid, old, new, level", [
    (15, "6", "7", "L3"), (15, "9", "10", "L3"), (15, "7", "9", "L1"),       # Child-Pugh A|B|C
    (21, "13", "12", "L3"), (21, "9", "8", "L3"), (21, "15", "13", "L1"),    # GCS 13-15 | 9-12 | <=8
    (20, "1", "2", "L3"), (20, "3", "4", "L3"), (20, "-1", "1", "L1"),       # McIsaac
    (16, "1", "2", "L3"), (16, "0", "1", "L2"), (16, "2", "3", "L2"),        # Wells DVT unlikely <=1
    (29, "70", "71", "L3"), (29, "130", "131", "L2"),                        # PSI II|III, IV|V
])
def test_score_band_edges(cid, old, new, level):
    assert lv(cid, old, new, "integer") == level


# -- continuous cut-offs ---------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, level", [
    ("4", "4.5", "L3"),    # Wells PE <=4 unlikely vs >4 likely
    ("4.5", "4", "L3"),
    ("1.5", "2", "L2"),    # low -> moderate, both PE unlikely
    ("6", "6.5", "L2"),    # moderate -> high, both PE likely
    ("2", "4", "L1"),
])
def test_wells_pe_edges(old, new, level):
    assert lv(8, old, new, "decimal") == level


@pytest.mark.parametrize("old, new, level", [
    ("90", "89.9", "L2"),  # G1 -> G2 (both not CKD by GFR alone)
    ("60", "59.9", "L3"),  # G2 -> G3a
    ("45", "44.9", "L3"),  # G3a -> G3b
    ("30", "29.9", "L3"),  # G3b -> G4 (referral)
    ("15", "14.9", "L3"),  # G4 -> G5
    ("92", "120", "L1"),
    ("100", "103", "L0"),  # within 5%, same band
    ("61", "59", "L3"),    # within 5% but crosses 60: bands come first
])
def test_ckd_epi_stage_edges(old, new, level):
    assert lv(3, old, new, "decimal") == level


def test_strict_cutoff_belongs_to_the_lower_band():
    # FENa "above: 2": 2.0 is indeterminate (1-2), 2.01 intrinsic; a diagnostic edge -> L2
    assert lv(40, "1.5", "2", "decimal") == "L1"
    assert lv(40, "2", "2.2", "decimal") == "L2"


# -- sex- and age-dependent cut-offs ---------------------------------------------------------------

@pytest.mark.parametrize("entities, old, new, level", [
    (MALE, "0", "1", "L3"), (MALE, "1", "2", "L3"), (MALE, "2", "5", "L1"),
    (FEMALE, "0", "1", "L1"),  # 1 in a woman is the sex point alone
    (FEMALE, "1", "2", "L3"), (FEMALE, "2", "3", "L3"), (FEMALE, "3", "6", "L1"),
])
def test_cha2ds2_vasc_by_sex(entities, old, new, level):
    assert lv(4, old, new, "integer", entities) == level


def test_cha2ds2_vasc_sex_read_from_json_entities_and_unknown_sex_takes_the_worse():
    assert lv(4, "2", "3", "integer", '{"sex": "Male", "age": [70, "years"]}') == "L1"
    level, reason = severity(4, "2", "3", "integer", {})
    assert level == "L3" and "sex not in the row" in reason


@pytest.mark.parametrize("entities, old, new, level", [
    (MALE, "449", "450", "L2"), (FEMALE, "449", "450", "L0"),
    (FEMALE, "455", "462", "L2"), (MALE, "455", "462", "L0"),
    (MALE, "500", "501", "L3"), (FEMALE, "500", "501", "L3"),
    (None, "448", "455", "L2"),  # no sex: crosses 450 for a man, not 460 for a woman
    (None, "420", "430", "L0"),
])
def test_qtc_by_sex(entities, old, new, level):
    for cid in (11, 56, 57, 58, 59):
        assert lv(cid, old, new, "decimal", entities) == level


@pytest.mark.parametrize("age, old, new, level", [
    ([70, "years"], "1.5", "2.1", "L3"),   # >=65: lower cut-off 2.0
    ([50, "years"], "1.5", "2.1", "L1"),   # <65: 1.3-2.67 indeterminate
    ([50, "years"], "1.2", "1.4", "L3"),
    ([65, "years"], "1.99", "2.0", "L3"),
    ([780, "months"], "1.5", "2.1", "L3"),  # 65 years in months
])
def test_fib4_by_age(age, old, new, level):
    assert lv(19, old, new, "decimal", {"age": age}) == level


# -- relative dose tolerance and dates -------------------------------------------------------------

@pytest.mark.parametrize("old, new, level", [
    ("100", "104", "L0"),   # within 5%
    ("100", "109", "L1"),   # 8.3% <= 10%
    ("100", "111", "L1"),   # symmetric difference 11/111 = 9.9%: within
    ("100", "112", "L3"),   # 12/112 = 10.7%
    ("90", "100", "L1"),    # exactly 10% of the larger value: within
])
def test_steroid_dose_tolerance_edges(old, new, level):
    assert lv(24, old, new, "decimal") == level


def test_mme_has_both_bands_and_dose_tolerance():
    assert lv(49, "48", "50", "decimal") == "L3"    # crosses 50 MME/day though within 5%
    assert lv(49, "200", "215", "decimal") == "L1"  # >=90 both, 7% change
    assert lv(49, "200", "240", "decimal") == "L3"  # 16.7%


def test_non_positive_dose_means_nothing_given():
    assert lv(38, "-0.4", "-0.3", "decimal") == "L1"
    assert lv(38, "-0.4", "1.0", "decimal") == "L3"


@pytest.mark.parametrize("old, new, level", [
    ("09/23/2014", "09/23/2014", "L0"),
    ("09/23/2014", "09/16/2014", "L1"),  # 7 days: within ACOG's 7-day redating limit
    ("09/23/2014", "09/15/2014", "L2"),  # 8 days
    ("09/23/2014", "N/A", "L2"),
])
def test_due_date_shift_edges(old, new, level):
    assert lv(13, old, new, "date") == level


def test_gestational_age_bands_in_days():
    assert lv(69, "('36 weeks', '6 days')", "('37 weeks', '0 days')", "integer") == "L3"  # preterm -> term
    assert lv(69, "('38 weeks', '0 days')", "('39 weeks', '2 days')", "integer") == "L1"


# -- abstentions and calculators without bands -----------------------------------------------------

def test_abstention_levels():
    assert lv(45, "2", "N/A", "integer") == "L3"        # drives disposition
    assert lv(39, "18", "N/A", "decimal") == "L2"       # diagnostic class only
    assert lv(32, "7", "N/A", "integer") == "L1"        # Charlson: no bands
    assert lv(45, "N/A", "NA", "integer") == "L0"


def test_no_bands_gives_l0_or_l1_only():
    assert lv(32, "7", "12", "integer") == "L1"
    assert lv(30, "290", "295", "decimal") == "L0"


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="calculator 45: new label 'two'"):
        severity(45, "1", "two", "integer")
    with pytest.raises(ValueError, match="calculator 1 has no entry"):
        severity(1, "1", "2", "integer")


def test_every_level_is_reachable_and_table_helpers_fill_missing_levels():
    import pandas as pd

    frame = pd.DataFrame({
        "uid": [1, 2, 3, 4, 5], "calculator_id": [45, 45, 45, 45, 45], "output_type": ["integer"] * 5,
        "Original Ground Truth Answer": ["1", "4", "3", "1", "2"], "Ground Truth Answer": ["1", "5", "4", "2", "N/A"],
        "Label Status": ["confirmed", "corrected", "corrected", "corrected", "abstain"],
    })
    table = change_table(frame)
    assert list(table["level"]) == ["L1", "L2", "L3", "L3"]
    assert level_counts(table) == {"L0": 0, "L1": 1, "L2": 1, "L3": 2}
    assert list(per_calculator(table).columns) == [*LEVELS, "total"]


# -- the 279 changes of release 2.0.0 (real data) --------------------------------------------------


def test_tolerance_is_read_around_the_old_label_as_the_ledger_does():
    # CrCl 38 -> 40 (both moderate 30-59): 40 is 5.3% above 38, outside the old label's ±5% band,
    # so the ledger calls it `corrected`; 38 -> 39.9 is within it (`confirmed`)
    from medcalc_maintained.core.labels import status_of

    assert status_of("40", "38", "decimal") == "corrected" and lv(2, "38", "40", "decimal") == "L1"
    assert status_of("39.9", "38", "decimal") == "confirmed" and lv(2, "38", "39.9", "decimal") == "L0"


def _edges():
    """Every band edge of every entry of thresholds.yaml: (calculator, variant, lower band, upper band, edge, strict)."""
    for cid, t in sorted(thresholds().items()):
        for label, bands in t.band_sets():
            for lo, hi in zip(bands, bands[1:]):
                yield cid, label, lo, hi, hi.lower, hi.strict


@pytest.mark.parametrize("cid, label, lo, hi, edge, strict", list(_edges()),
                         ids=lambda v: str(v) if isinstance(v, (int, float, str)) else None)
def test_every_band_edge_of_the_file(cid, label, lo, hi, edge, strict):
    # `min: x` puts x in the upper band, `above: x` in the lower one; the level of crossing the edge is
    # L3 when the two bands decide different actions, else L2 (a diagnostic class only)
    from medcalc_maintained.calculators.severity import _crossing
    from medcalc_maintained.calculators.thresholds import band_of

    t = thresholds()[cid]
    bands = dict(t.band_sets())[label]
    step = 0.5 if t.type == "score" or float(edge).is_integer() and edge > 3 else 0.01
    below, above = edge - step, edge + step
    assert band_of(bands, edge) is (lo if strict else hi)
    assert band_of(bands, below) is lo and band_of(bands, above) is hi
    expected = "L3" if lo.action != hi.action else "L2"
    assert _crossing(lo, hi, "")[0] == expected
    sex = {"sex": {"sex=male": "Male", "sex=female": "Female"}.get(label)} if t.type == "sex_dependent" else None
    if t.type == "age_dependent":
        when = next(v.when for v in t.variants if v.label() == label)
        sex = {"age": [when.get("age_min", when.get("age_below", 1) - 1), "years"]}
    if t.type in ("score", "cutoff", "sex_dependent", "age_dependent") and lo.name != hi.name:
        otype = "decimal"
        level = lv(cid, f"{below:g}", f"{above:g}", otype, sex)
        assert level == expected, (cid, label, below, above, level)


@pytest.mark.parametrize("cid", sorted(c for c, e in thresholds().items() if e.type == "relative_dose"))
def test_every_dose_tolerance_edge(cid):
    # symmetric relative difference exactly at the tolerance is within it; just above it changes the dose
    t = thresholds()[cid]
    big = 1000.0
    at = big * (1 - t.tolerance)
    over = big * (1 - t.tolerance) - 1.0
    bands = t.bands
    same_band = not bands or band_of_all(bands, at, big)
    if same_band:
        assert lv(cid, f"{big:g}", f"{at:g}", "decimal") in ("L0", "L1")
    assert lv(cid, f"{big:g}", f"{over:g}", "decimal") == "L3"


def band_of_all(bands, *values):
    from medcalc_maintained.calculators.thresholds import band_of

    return len({id(band_of(bands, v)) for v in values}) == 1


@pytest.mark.parametrize("cid", sorted(c for c, e in thresholds().items() if e.type == "date_shift"))
def test_every_date_shift_edge(cid):
    import datetime as dt

    t = thresholds()[cid]
    d0 = dt.date(2020, 3, 1)
    fmt = lambda d: d.strftime("%m/%d/%Y")  # noqa: E731
    otype = load_all()[cid].output_type
    if otype != "date":
        pytest.skip("a dating in weeks and days: covered by test_gestational_age_bands_in_days")
    assert lv(cid, fmt(d0), fmt(d0 + dt.timedelta(days=t.days)), otype) == "L1"
    assert lv(cid, fmt(d0), fmt(d0 + dt.timedelta(days=t.days + 1)), otype) == "L2"
