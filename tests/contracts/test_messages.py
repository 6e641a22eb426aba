"""Messages that state the violation (issue 27): contract failures name what they observed, and the
publish note on N warnings names exactly N."""

from __future__ import annotations

import pandas as pd
import pytest

from medcalc_maintained.contracts import validate as contracts

LABEL_RANGE = {"column": "unverified_label_in_range", "value_set": [True]}


def _suite(name: str, view: str, expectations: list[dict]) -> dict:
    return {"name": name, "meta": {"view": view}, "expectations": expectations}


def _gates() -> dict:
    return contracts._gates({"max_abstain_rate": 0.25, "max_unverified_rate": 1.0, "min_per_calculator": 0,
                             "near_duplicate": {"threshold": 0.9}}, None)


def test_a_row_failure_names_each_row_and_the_values_it_observed():
    """A GCS of 18 (the range is 3 to 15) and a status outside the allowed set."""
    view = pd.DataFrame({"split": ["test", "test", "test"], "uid": [861, 862, 863],
                         "Ground Truth Answer": ["15", "18", "3"],
                         "range_problem": [None, "18 is outside the range of GCS (3 to 15 points)", None],
                         "unverified_label_in_range": [True, False, True],
                         "Label Status": ["confirmed", "unverified", "fixed"]})
    suite = _suite("label_invariants", "instances", [
        {"type": "expect_column_values_to_be_in_set", "kwargs": LABEL_RANGE,
         "meta": {"description": "an unverified label is inside its range", "observed": ["Ground Truth Answer", "range_problem"]}},
        {"type": "expect_column_values_to_be_in_set",
         "kwargs": {"column": "Label Status", "value_set": ["confirmed", "unverified"]},
         "meta": {"description": "a known status"}}])
    failures, evaluated = contracts.run({"instances": view}, [suite], _gates(), None)
    assert evaluated == 2
    by = {f.expectation: f for f in failures}
    rng = by["expect_column_values_to_be_in_set(unverified_label_in_range)"]
    assert rng.offending == ["split=test uid 862"]
    assert rng.details == ["split=test uid 862: Ground Truth Answer '18', range_problem '18 is outside the range of "
                           "GCS (3 to 15 points)'"]
    assert "1 row(s) break the rule (an unverified label is inside its range): split=test uid 862: " \
           "Ground Truth Answer '18'" in str(rng)
    status = by["expect_column_values_to_be_in_set(Label Status)"]
    assert status.details == ["split=test uid 863: Label Status 'fixed'"]


def test_an_aggregate_failure_names_the_observed_value_and_the_limit():
    view = pd.DataFrame({"split": ["test"] * 4, "uid": [1, 2, 3, 4], "is_abstain": [1.0, 1.0, 0.0, 0.0]})
    suite = _suite("qc_gates", "qc", [
        {"type": "expect_column_mean_to_be_between",
         "kwargs": {"column": "is_abstain", "max_value": {"$PARAMETER": "max_abstain_rate"}},
         "meta": {"description": "share of N/A labels is at most the ceiling"}}])
    (failure,), _ = contracts.run({"qc": view}, [suite], _gates(), None)
    assert str(failure).endswith("observed 0.5, the rule allows at most 0.25; the rule: share of N/A labels is at "
                                 "most the ceiling")


def test_the_publish_note_on_n_warnings_names_exactly_n():
    """The same expectation failing in two suites (``full`` and ``default``) is two warnings, and
    the note names both, each with what it observed."""
    from medcalc_maintained.release.publish import warnings_note

    def warning(suite: str) -> contracts.Failure:
        return contracts.Failure(suite, "expect_column_values_to_be_in_set(unverified_label_in_range)",
                                 "an unverified label is inside its range", "warning", ["split=test uid 862"],
                                 details=["split=test uid 862: Ground Truth Answer '18'"])
    leak = contracts.Failure("qc_gates", "expect_column_values_to_be_in_set(no_answer_leak)", "no leak", "warning",
                             ["split=test uid 48"], details=["split=test uid 48: answer_leak_text 'CHA2DS2 VASc score of 4'"])
    note = warnings_note([warning("label_invariants"), warning("label_invariants@default"), leak])
    head, *lines = note.splitlines()
    assert head.startswith("3 non-blocking contract warning(s)")
    assert len(lines) == 3
    assert lines[0].startswith("  1. label_invariants / ") and lines[1].startswith("  2. label_invariants@default / ")
    assert all("uid 862: Ground Truth Answer '18'" in x for x in lines[:2])
    assert "CHA2DS2 VASc score of 4" in lines[2]


def test_the_range_view_says_what_is_out_of_range_on_the_real_data(real_maintained, real_instances):
    from medcalc_maintained.calculators import load_all
    from medcalc_maintained.contracts.views import instance_view

    view = instance_view(real_maintained, real_instances, pd.DataFrame(), {c: k.name for c, k in load_all().items()})
    problems = view.loc[view["range_problem"].notna(), ["uid", "range_problem"]]
    assert problems.values.tolist() == [[862, "18 is outside the range of Glasgow Coma Score (GCS) (3 to 15 points)"]]


def test_a_partly_answered_packet_is_refused_in_one_line_that_points_to_partial(real_instances, tmp_path):
    from medcalc_maintained.review import packet as pkt
    from medcalc_maintained.review.layout import PacketError
    from medcalc_maintained.review.reader import read_packet
    from tests.support.triage_support import ANSWERS, CASES, REVIEWER, fill

    packet = pkt.export_packet(real_instances, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    where = fill(packet, {"test-00041": ANSWERS["test-00041"]}, tmp_path / "one.xlsx")
    with pytest.raises(PacketError) as exc:
        read_packet(tmp_path / "one.xlsx", real_instances)
    (problem,) = exc.value.problems
    empty = [rid for rid in where if rid != "test-00041"]
    assert len(empty) == 4
    text = str(problem)
    assert "the answers of 4 rows are empty: " in text and "`review import --partial`" in text
    assert all(f"{rid} (F{where[rid]})" in text for rid in empty)
    got = read_packet(tmp_path / "one.xlsx", real_instances, partial=True)
    assert [(i.split, i.uid) for i in got.items] == [("test", 41)] and sorted(got.skipped) == sorted(empty)
    # nothing answered: --partial would not help, so it is not offered
    fill(packet, {}, tmp_path / "none.xlsx")
    with pytest.raises(PacketError) as exc:
        read_packet(tmp_path / "none.xlsx", real_instances)
    assert "the answers of 5 rows are empty" in str(exc.value) and "--partial" not in str(exc.value)


def test_apply_names_every_problem_of_one_record_in_one_run(real_instances, tmp_path):
    """uid 862 (GCS, upstream label 18): one record breaking seven independent rules (the schema, the
    range, the date, old_value, the status, an unknown definition and an input whose evidence is not
    the note's text). ``apply`` names each on its own line with file, record and field, and writes nothing."""
    import yaml
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app
    from tests.support.ledger_support import record

    note = real_instances.set_index("uid").loc[862, "Patient Note"]
    quoted = note[0:10]
    bad = record(id="BAD-1", uid=862, old_value="17", new_value="16", label_status="confirmed", error_type=None,
                 decided_at="2999-01-01", comment="not a field of the schema", definition="no-such-definition",
                 inputs=[{"name": "Best eye response", "value": "spontaneously",
                          "evidence": {"start": 0, "end": 10, "text": quoted.upper() + "!"}}])
    ledger_file = tmp_path / "many-problems.yaml"
    ledger_file.write_text(yaml.safe_dump({"corrections": [bad]}, sort_keys=False), encoding="utf-8")
    instances_file = tmp_path / "instances.parquet"
    real_instances.to_parquet(instances_file)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["apply", "--ledger", str(ledger_file), "--instances", str(instances_file),
                                 "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output
    lines = [x.strip() for x in r.output.splitlines() if "many-problems.yaml, record BAD-1, field" in x]
    fields = {}
    for line in lines:
        field = line.split("field '", 1)[1].split("'", 1)[0]
        fields.setdefault(field, []).append(line)
    expected = {
        "comment": "Additional properties are not allowed",
        "new_value": "outside",
        "decided_at": "in the future",
        "label_status": "label_status 'confirmed' but new_value '16' differs from the upstream label '18'",
        "old_value": "old_value '17' does not match the current label '18'",
        "definition": "definition 'no-such-definition' is not one of calculators/definitions.yaml for calculator 21",
        "inputs": "evidence text",
    }
    assert set(fields) == set(expected), r.output
    for field, words in expected.items():
        assert any(words in line for line in fields[field]), (field, fields[field])
    assert f"{len(lines)} ledger problem(s); nothing written" in r.output
    assert not out.exists()


@pytest.mark.parametrize("release", ["1.01.0", "01.0.0"])
def test_a_release_that_is_no_semantic_version_is_a_ledger_problem_not_a_traceback(real_instances, tmp_path, release):
    """The schema's release pattern is the one the ledger sorts by (``core/versions.SEMVER``): a
    leading zero used to pass the schema and then crash ``apply`` with a ValueError."""
    import yaml
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app
    from tests.support.ledger_support import record

    old = real_instances.set_index("uid").loc[1, "Ground Truth Answer"]
    ledger_file = tmp_path / "l.yaml"
    ledger_file.write_text(yaml.safe_dump({"corrections": [record(id="R-1", uid=1, release=release, old_value=old,
                                                                   new_value=old, label_status="confirmed",
                                                                   error_type=None)]}), encoding="utf-8")
    instances_file = tmp_path / "instances.parquet"
    real_instances.to_parquet(instances_file)
    r = CliRunner().invoke(app, ["apply", "--ledger", str(ledger_file), "--instances", str(instances_file),
                                 "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert f"l.yaml, record R-1, field 'release': '{release}' does not match" in " ".join(r.output.split())
    assert not (tmp_path / "out").exists()
