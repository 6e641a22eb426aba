"""Errata (issue 50): how an implementation's departures are found, counted on v1.0 rows and
adjudicated; the PyPI package and Verified's recorded answers as implementations."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.conformance import load_vectors, resolve
from medcalc_maintained.conformance.base import Implementation, NoResult, NotRecorded
from medcalc_maintained.conformance.errata import find_errata, registry, typed
from medcalc_maintained.conformance.recorded import RecordedError, fold, query_key
from medcalc_maintained.conformance.rows import V1Row, v1_rows


def _map_vectors():
    return load_vectors([5])


def _half_bias(calculator_id, inputs):
    """MAP as the arithmetic mean of SBP and DBP: a formula defect."""
    s, d = inputs["Systolic Blood Pressure"][0], inputs["Diastolic Blood Pressure"][0]
    return (s + d) / 2


def test_a_formula_defect_is_one_erratum_with_its_cases_and_its_consequence_on_v1_rows():
    rows = [V1Row(1, 5, {"Systolic Blood Pressure": [120, "mm hg"], "Diastolic Blood Pressure": [80, "mm hg"]}, "100.0"),
            V1Row(2, 5, {"Systolic Blood Pressure": [90, "mm hg"], "Diastolic Blood Pressure": [90, "mm hg"]}, "90"),
            V1Row(3, 5, {"Systolic Blood Pressure": [150, "mm hg"], "Diastolic Blood Pressure": [60, "mm hg"]}, "90")]
    labels = {"1.0.0": {1: "100.0", 3: "90"}, "2.0.0": {1: "93.333", 3: "90"}}
    rep = find_errata(Implementation("mean", "arithmetic mean", _half_bias), _map_vectors(), rows,
                      release_labels=labels)
    [e] = rep.errata
    assert (e.calculator_id, e.status) == (5, "unreviewed")
    assert e.vectors_failed > 0 and e.vectors_no_result == 0 and e.failing_cases[0]["got"] is not None
    # row 2 (SBP = DBP) agrees; rows 1 and 3 differ; row 1's v1.0 label is the implementation's answer
    # and 2.0.0 is the first release that labels it as the definition does; row 3's label (90) is ours
    assert (e.rows, e.rows_differ, e.rows_no_result, e.rows_label_follows_implementation) == (3, 2, 0, 1)
    assert e.fixed_in == {"2.0.0": 1} and e.carried_by == {"1.0.0": 1}
    assert e.differing_row_numbers == [1, 3] and [r["row_number"] for r in e.differing_rows] == [1, 3]
    assert e.failing_case_ids[0] == e.failing_cases[0]["case"] and len(e.failing_case_ids) == e.vectors_failed


def test_fixed_in_is_where_no_later_release_carries_the_error():
    """A release that brings the implementation's answer back undoes an earlier fix; a release where the
    row is gone or N/A does not carry it."""
    rows = [V1Row(1, 5, {"Systolic Blood Pressure": [120, "mm hg"], "Diastolic Blood Pressure": [80, "mm hg"]}, "100"),
            V1Row(2, 5, {"Systolic Blood Pressure": [150, "mm hg"], "Diastolic Blood Pressure": [60, "mm hg"]}, "105")]
    labels = {"1.0.0": {1: "100", 2: "105"}, "2.0.0": {1: "93.333", 2: "N/A"}, "2.1.0": {1: "100"},
              "2.2.0": {1: "100"}}
    [e] = find_errata(Implementation("mean", "arithmetic mean", _half_bias), _map_vectors(), rows,
                      release_labels=labels).errata
    assert e.rows_label_follows_implementation == 2
    assert e.carried_by == {"1.0.0": 2, "2.1.0": 1, "2.2.0": 1}
    assert e.fixed_in == {"2.0.0": 1, "not yet": 1}


def test_an_implementation_that_refuses_is_counted_as_no_result_and_ours_has_no_errata():
    def refuses(calculator_id, inputs):
        raise NoResult("unit 'mm hg' unknown")

    [e] = find_errata(Implementation("r", "refuses", refuses), _map_vectors(), []).errata
    assert e.vectors_failed == e.vectors_no_result == e.vectors
    assert find_errata(resolve("ours"), load_vectors(), []).errata == []


def test_typed_reads_our_answer_texts():
    assert typed("('14 weeks', '1 days')", "weeks_days") == [14, 1]
    assert typed("3", "integer") == 3 and typed("93.333", "decimal") == 93.333
    assert typed("N/A", "decimal") is None and typed(None, "date") is None


def test_every_adjudication_names_a_status_a_reason_and_the_counts_it_read():
    adjudicated = registry()
    assert len(adjudicated) == 88, "conformance/errata.yaml: one adjudication per erratum of both implementations"
    assert {v["status"] for v in adjudicated.values()} == {"fixed-in-ours", "definition-choice", "open"}
    assert all(len(v["reason"]) > 30 and v["vectors_failed"] + v["rows_differ"] > 0 for v in adjudicated.values())


def test_an_erratum_that_changed_since_it_was_read_is_unreviewed_again(monkeypatch):
    import medcalc_maintained.conformance.errata as errata

    [e] = find_errata(Implementation("mean", "arithmetic mean", _half_bias), _map_vectors(), []).errata
    read = {"status": "fixed-in-ours", "reason": "averages SBP and DBP", "rows_differ": 0}
    monkeypatch.setattr(errata, "registry", lambda: {("mean", 5): {**read, "vectors_failed": e.vectors_failed},
                                                     ("mean", 6): {**read, "vectors_failed": 1}})
    [same] = find_errata(Implementation("mean", "arithmetic mean", _half_bias), _map_vectors(), []).errata
    assert same.status == "fixed-in-ours"
    monkeypatch.setattr(errata, "registry", lambda: {("mean", 5): {**read, "vectors_failed": e.vectors_failed - 1}})
    rep = find_errata(Implementation("mean", "arithmetic mean", _half_bias), _map_vectors(), [])
    assert errata.unreviewed(rep)[0].reason.startswith("changed since it was adjudicated")
    monkeypatch.setattr(errata, "registry", lambda: {("mean", 5): {**read, "vectors_failed": e.vectors_failed},
                                                     ("mean", 6): {**read, "vectors_failed": 1}})
    assert errata.unused([find_errata(Implementation("mean", "m", _half_bias), _map_vectors(), [])]) == [("mean", 6)]


def test_recorded_answers_are_keyed_by_the_query_not_its_text():
    assert query_key(5, {"a": [1, "x"], "b": True}) == query_key(5, {"b": True, "a": [1, "x"]})
    assert query_key(5, {"a": 1}) != query_key(6, {"a": 1})
    assert fold("FiO₂") == "fio2"


def test_verified_is_recorded_for_every_vector_and_v1_row(v1_test_csv):
    """Every query stage errata makes has a recorded answer: the vectors and the 1,047 v1.0 rows as
    the ingest stage reads them (a vector added since the recording would say "not recorded")."""
    from medcalc_maintained.stages.ingest import ingest

    impl = resolve("recorded:verified")
    assert "0eb59609f413" in impl.describe
    queries = [(v.calculator_id, c.inputs, c.id) for v in load_vectors() for c in v.cases]
    rows = v1_rows(ingest([("test", v1_test_csv)]).instances)
    assert len(rows) == 1047
    queries += [(r.calculator_id, r.entities, r.row_number) for r in rows]
    missing = []
    for cid, inputs, where in queries:
        try:
            impl.call(cid, inputs)
        except NotRecorded:
            missing.append((cid, where))
        except (NoResult, RecordedError):
            pass  # its recorded refusal or failure: an answer
    assert missing == []
    with pytest.raises(NotRecorded, match="record it again"):
        impl.call(5, {"Systolic Blood Pressure": [121.5, "mm hg"], "Diastolic Blood Pressure": [80, "mm hg"]})


def test_the_pypi_package_runs_with_our_inputs():
    pytest.importorskip("medcalc", reason="the errata extra (medcalc-bench 1.7.0) is not installed")
    impl = resolve("medcalc-bench")
    assert impl.call(5, {"Systolic Blood Pressure": [120, "mm hg"], "Diastolic Blood Pressure": [80, "mm hg"]}) \
        == pytest.approx(93.333, abs=0.001)
    with pytest.raises(NoResult, match="no function for calculator 64"):
        impl.call(64, {"Sodium": [140, "mEq/L"]})
    with pytest.raises(NoResult, match="importing medcalc.target_weight fails"):
        impl.call(61, {"height": [170, "cm"], "Body Mass Index (BMI)": [22, "kg/m^2"]})


def test_v1_rows_read_the_ingest_table():
    df = pd.DataFrame({"Row Number": ["7"], "Calculator ID": ["5"], "Ground Truth Answer": ["93.333"],
                       "entities": [json.dumps({"Systolic Blood Pressure": [120, "mm hg"]})]})
    assert v1_rows(df) == [V1Row(7, 5, {"Systolic Blood Pressure": [120, "mm hg"]}, "93.333")]


def test_the_stage_refuses_an_erratum_nobody_adjudicated_and_renders_the_rest():
    from medcalc_maintained.conformance.errata import markdown
    from medcalc_maintained.conformance.vectors import document
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.stages.errata import refuse_unadjudicated

    rows = [V1Row(1, 5, {"Systolic Blood Pressure": [120, "mm hg"], "Diastolic Blood Pressure": [80, "mm hg"]}, "100")]
    rep = find_errata(Implementation("mean", "arithmetic mean", _half_bias), _map_vectors(), rows,
                      release_labels={"1.0.0": {1: "100"}, "2.0.0": {1: "93.333"}})
    with pytest.raises(DataError, match=r"1 erratum\(s\) not adjudicated as they are now: mean calculator 5; .*nothing written"):
        refuse_unadjudicated([rep])
    rep.errata[0].status, rep.errata[0].reason = "fixed-in-ours", "averages SBP and DBP | not 2/3 DBP + 1/3 SBP"
    text = markdown([rep.as_dict()])
    line = next(x for x in text.splitlines() if x.startswith("| 5 |"))
    assert "| 1/1 | 1 | 2.0.0 (1) | fixed-in-ours | averages SBP and DBP \\| not" in line
    doc = document(_map_vectors())
    assert len(doc["vectors_sha256"]) == 64 and doc["calculators"][0]["calculator_id"] == 5
    assert all({"id", "why", "inputs", "expected"} <= set(c) for c in doc["calculators"][0]["cases"])


def test_the_numbers_the_docs_and_readme_give_are_the_committed_errata():
    from tests.support.paths import ROOT

    doc = json.loads((ROOT / "data" / "errata" / "errata.json").read_text())
    reps = {r["implementation"]: r for r in doc["implementations"]}
    pypi, verified = reps["medcalc-bench"], reps["recorded:verified"]
    page = " ".join((ROOT / "docs" / "conformance.md").read_text().split())
    readme = (ROOT / "README.md").read_text()
    assert f"medcalc-bench 1.7.0: {pypi['vector_cases_passed']} pass" in readme
    n = sum(len(v.cases) for v in load_vectors())
    assert f"This package's calculators pass all {n:,} cases" in page
    assert (f"passes {pypi['vector_cases_passed']} ({len(pypi['errata'])} errata: "
            f"{sum(e['status'] == 'fixed-in-ours' for e in pypi['errata'])} fixed in ours") in page
    assert (f"on {sum(e['rows_differ'] for e in pypi['errata'])} rows (on "
            f"{sum(e['rows_no_result'] for e in pypi['errata'])} of them it gives none), and "
            f"{sum(e['rows_label_follows_implementation'] for e in pypi['errata'])} of those") in page
    follows = sum(e["rows_label_follows_implementation"] for e in pypi["errata"])
    assert f"{sum(e['fixed_in'].get('not yet', 0) for e in pypi['errata'])} of the {follows} still carry it" in page
    assert (f"passes {verified['vector_cases_passed']} ({len(verified['errata'])} errata: "
            f"{sum(e['status'] == 'fixed-in-ours' for e in verified['errata'])} fixed in ours") in page
    assert (f"{sum(e['rows_differ'] for e in verified['errata'])} rows, "
            f"{sum(e['rows_label_follows_implementation'] for e in verified['errata'])} labels, "
            f"{sum(e['fixed_in'].get('not yet', 0) for e in verified['errata'])} still carried") in page
