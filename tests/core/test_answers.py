"""Answer semantics: parsing, MedCalc-Bench grading and the audit's discrepancy."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from medcalc_maintained.core.answers import (
    first_number,
    format_answer,
    is_correct,
    labels_agree,
    limits,
    parse_answer,
    rel_err,
)

# ---------------------------------------------------------------------------------------------
# parse_answer


@pytest.mark.parametrize(
    "raw, otype, kind, value",
    [
        ("25.238", "decimal", "decimal", 25.238),
        ("38", "decimal", "integer", 38.0),
        (" -0.0943 ", "decimal", "decimal", -0.0943),
        ("1,434", "decimal", "integer", 1434.0),
        ("4", "integer", "integer", 4.0),
        (4.0, "integer", "integer", 4.0),
        ("78.1 ml/hr", "decimal", "decimal", 78.1),
        ("9.2 kg", "decimal", "decimal", 9.2),
        ("09/23/2014", "date", "date", dt.date(2014, 9, 23)),
        ("2014-09-23", "date", "date", dt.date(2014, 9, 23)),
        ("2014-09-23 00:00:00", "date", "date", dt.date(2014, 9, 23)),
        (dt.datetime(2012, 11, 10), "date", "date", dt.date(2012, 11, 10)),
        ("('14 weeks', '1 days')", "integer", "gestational_age", 14 * 7 + 1),
        ("(4 weeks, 3 days)", "integer", "gestational_age", 31.0),
        ("8 weeks, 0 days", "integer", "gestational_age", 56.0),
    ],
)
def test_parse_values(raw, otype, kind, value):
    a = parse_answer(raw, otype)
    assert a.kind == kind
    assert a.value == value


@pytest.mark.parametrize("raw", ["N/A", "NA", "n/a", "unknown", "Not applicable", "", "  ", None, float("nan")])
@pytest.mark.parametrize("otype", ["decimal", "integer", "date"])
def test_parse_abstentions(raw, otype):
    assert parse_answer(raw, otype).kind == "abstain"


@pytest.mark.parametrize(
    "raw, otype",
    [
        ("Multiple", "decimal"),
        ("about five", "integer"),
        ("13/45/2020", "date"),
        ("02/30/2021", "date"),
        (42, "date"),
        (dt.datetime(2020, 1, 1), "decimal"),
        ("12 12", "decimal"),
        (True, "integer"),
        ("inf", "decimal"),
    ],
)
def test_parse_invalid_is_reported_not_guessed(raw, otype):
    a = parse_answer(raw, otype)
    assert a.kind == "invalid" and a.reason


def test_gestational_age_keeps_weeks_and_days():
    a = parse_answer("('0 weeks', '6 days')", "integer")
    assert (a.weeks, a.days, a.value) == (0, 6, 6.0)


# ---------------------------------------------------------------------------------------------
# is_correct: hand-written MedCalc-Bench grading cases of every output type


def test_decimal_inside_and_outside_limits():
    # v1.0 row 1: label 25.238 with limits 23.9761 .. 26.4999 (= 25.238 * 0.95 .. * 1.05)
    assert is_correct("25.238", "25.238", "23.9761", "26.4999", "decimal")
    assert is_correct("24", "25.238", "23.9761", "26.4999", "decimal")
    assert is_correct("26.4999", "25.238", "23.9761", "26.4999", "decimal")
    assert not is_correct("26.5", "25.238", "23.9761", "26.4999", "decimal")
    assert not is_correct("23.9", "25.238", "23.9761", "26.4999", "decimal")


def test_decimal_band_without_limits_and_negative_labels():
    # label 80 -> band 76 .. 84
    assert is_correct("76", "80", None, None, "decimal")
    assert is_correct("84", "80", None, None, "decimal")
    assert not is_correct("84.1", "80", None, None, "decimal")
    # label -2.75 -> band -2.8875 .. -2.6125 (order of the ends is fixed by the code)
    assert is_correct("-2.7", "-2.75", None, None, "decimal")
    assert not is_correct("-2.5", "-2.75", None, None, "decimal")


def test_integer_is_rounded_then_exact():
    assert is_correct("4", "4", "4", "4", "integer")
    assert is_correct("4.2", "4", "4", "4", "integer")  # MedCalc-Bench rounds integer answers
    assert not is_correct("5", "4", "4", "4", "integer")
    assert not is_correct("3", "4", "4", "4", "integer")


def test_dates_must_match_exactly():
    assert is_correct("09/23/2014", "09/23/2014", None, None, "date")
    assert is_correct("2014-09-23", "09/23/2014", None, None, "date")
    assert is_correct("9/23/2014", "09/23/2014", None, None, "date")
    assert not is_correct("09/24/2014", "09/23/2014", None, None, "date")


def test_gestational_age_matches_weeks_and_days():
    gt = "('14 weeks', '1 days')"
    assert is_correct("(14 weeks, 1 days)", gt, gt, gt, "integer")
    assert is_correct("14 weeks, 1 day", gt, gt, gt, "integer")
    assert not is_correct("(14 weeks, 2 days)", gt, gt, gt, "integer")
    assert not is_correct("(13 weeks, 1 days)", gt, gt, gt, "integer")
    # the campaign writes total days: 14*7+1 = 99 is the same quantity
    assert is_correct("99", gt, gt, gt, "integer")


def test_abstention_is_correct_only_against_abstention():
    assert is_correct("N/A", "N/A", "N/A", "N/A", "decimal")
    assert is_correct("not applicable", "N/A", None, None, "integer")
    assert not is_correct("N/A", "4", "4", "4", "integer")
    assert not is_correct("4", "N/A", "N/A", "N/A", "integer")


def test_unparseable_prediction_is_wrong_but_bad_label_raises():
    assert not is_correct("the answer is a lot", "4", "4", "4", "integer")
    with pytest.raises(ValueError):
        is_correct("4", "Multiple", None, None, "integer")


# ---------------------------------------------------------------------------------------------
# rel_err: hand-computed cases


@pytest.mark.parametrize(
    "a, b, otype, expected",
    [
        ("10", "8", "integer", 0.2),  # |10-8| / max(10, 8) = 2/10
        ("25.017", "19.79", "decimal", 5.227 / 25.017),  # row 3 of the audit
        ("-1", "0", "integer", 1.0),  # |-1-0| / max(1, 0) = 1
        ("0", "0", "integer", 0.0),  # both zero
        ("-2", "2", "integer", 2.0),  # |-2-2| / max(2, 2) = 4/2 (opposite signs exceed 1)
        ("N/A", "3", "integer", 1.0),
        ("3", "N/A", "integer", 1.0),
        ("N/A", "N/A", "decimal", 0.0),
        ("11/09/2012", "11/10/2012", "date", 0.0),  # one day apart is within tolerance
        ("12/13/2023", "12/11/2023", "date", 1.0),  # two days apart
        ("('14 weeks', '1 days')", "99", "integer", 0.0),
    ],
)
def test_rel_err_hand_computed(a, b, otype, expected):
    assert rel_err(a, b, otype) == pytest.approx(expected)


def test_rel_err_rejects_unparseable():
    with pytest.raises(ValueError):
        rel_err("Multiple", "3", "integer")


# ---------------------------------------------------------------------------------------------
# labels_agree / format_answer / limits / first_number


def test_labels_agree_uses_band_of_reference_for_decimals_and_exact_otherwise():
    assert labels_agree("26", "25.238", "decimal")  # inside 23.976 .. 26.4999
    assert not labels_agree("27", "25.238", "decimal")
    assert not labels_agree("5", "4", "integer")
    assert labels_agree("99", "('14 weeks', '1 days')", "integer")
    assert labels_agree("N/A", "n/a", "integer")
    assert not labels_agree("N/A", "4", "integer")


def test_format_and_limits():
    assert format_answer("19.790", "decimal") == "19.79"
    assert format_answer(dt.datetime(2014, 9, 12), "date") == "09/12/2014"
    assert format_answer("99", "integer", style="gestational_age") == "('14 weeks', '1 days')"
    assert format_answer("n/a", "decimal") == "N/A"
    assert format_answer("4.0", "integer") == "4"
    assert limits("20", "decimal") == ("19", "21")  # 20 * 0.95, 20 * 1.05
    assert limits("4", "integer") == ("4", "4")
    assert limits("N/A", "integer") == ("N/A", "N/A")


def test_first_number_reads_physician_cells():
    assert first_number("78.1 ml/hr") == 78.1
    assert first_number("N/A") is None
    assert first_number("Multiple") is None
    assert first_number(9) == 9.0
    assert first_number("-0.31") == -0.31


# ---------------------------------------------------------------------------------------------
# properties

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(finite, finite)
def test_rel_err_is_symmetric_and_bounded(a, b):
    r1, r2 = rel_err(repr(a), repr(b), "decimal"), rel_err(repr(b), repr(a), "decimal")
    assert r1 == pytest.approx(r2)
    assert 0.0 <= r1 <= 2.0  # opposite signs can reach 2
    if a == b:
        assert r1 == 0.0


@given(st.floats(min_value=0.01, max_value=1e5, allow_nan=False), st.floats(min_value=-0.0499, max_value=0.0499))
def test_inside_band_is_correct(label, offset):
    text = format_answer(repr(label), "decimal")
    ref = parse_answer(text, "decimal").value
    lo, hi = limits(text, "decimal")
    assert is_correct(repr(ref * (1 + offset)), text, lo, hi, "decimal")


@given(st.floats(min_value=0.01, max_value=1e5, allow_nan=False), st.floats(min_value=0.051, max_value=5))
def test_outside_band_is_wrong(label, offset):
    text = format_answer(repr(label), "decimal")
    ref = parse_answer(text, "decimal").value
    lo, hi = limits(text, "decimal")
    assert not is_correct(repr(ref * (1 + offset)), text, lo, hi, "decimal")
    assert not is_correct(repr(ref * (1 - offset)), text, lo, hi, "decimal")


@given(st.dates(min_value=dt.date(1900, 1, 1), max_value=dt.date(2100, 12, 31)))
def test_date_round_trip(d):
    text = format_answer(d.strftime("%Y-%m-%d"), "date")
    assert parse_answer(text, "date").value == d
    assert is_correct(text, d.strftime("%m/%d/%Y"), None, None, "date")


@given(st.integers(min_value=0, max_value=45), st.integers(min_value=0, max_value=6))
def test_gestational_age_round_trip(w, d):
    text = format_answer(f"('{w} weeks', '{d} days')", "integer", style="gestational_age")
    a = parse_answer(text, "integer")
    assert (a.weeks, a.days) == (w, d)


@given(st.integers(min_value=-10**6, max_value=10**6))
def test_integer_round_trip(n):
    assert parse_answer(format_answer(str(n), "integer"), "integer").value == n


@given(st.floats(min_value=-1e5, max_value=1e5, allow_nan=False))
def test_decimal_format_round_trip_within_rounding(x):
    assume(abs(x) > 1e-3)
    back = parse_answer(format_answer(repr(x), "decimal"), "decimal").value
    assert back == pytest.approx(x, abs=5e-4)


@pytest.mark.parametrize("otype", ["integer", "decimal", "date"])
def test_gestational_age_is_the_same_answer_whatever_the_declared_type(otype):
    # upstream 2024-06 types its 20 gestational-age rows `date`; v1.0 types them `integer`
    a = parse_answer("('17 weeks', '1 days')", otype)
    assert (a.kind, a.value, a.weeks, a.days) == ("gestational_age", 120.0, 17, 1)
    assert is_correct("(17 weeks, 1 days)", "('17 weeks', '1 days')", None, None, otype)
    assert not is_correct("('17 weeks', '2 days')", "('17 weeks', '1 days')", None, None, otype)
    assert format_answer(a, otype) == "('17 weeks', '1 days')"


def test_the_2024_06_gestational_age_rows_are_ingested(old_test_csv):
    from medcalc_maintained.stages.ingest import ingest

    result = ingest([("test", old_test_csv)])
    ga = result.instances[result.instances["Calculator Name"].str.contains("Gestational Age")]
    assert len(ga) == 20 and set(ga["Output Type"]) == {"date"} and set(ga["gt_kind"]) == {"gestational_age"}
    assert result.quarantine.empty
    assert len(result.instances) == 1047 and result.instances["calculator_id"].nunique() == 55


@pytest.mark.parametrize("text", ["None", "none", " NONE "])
def test_the_text_none_is_unparsable_not_an_abstention(text):
    from medcalc_maintained.core.answers import parse_model_answer

    assert parse_answer(text, "decimal").kind == "invalid"
    assert parse_model_answer(text, "integer") is None
    assert not is_correct(text, "N/A", "N/A", "N/A", "decimal")   # graded wrong, not a correct abstention
    assert parse_answer(None, "decimal").kind == "abstain"           # a missing cell is still empty
