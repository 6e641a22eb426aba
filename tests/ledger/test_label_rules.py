"""Impossible labels are refused at the door: per-calculator output ranges, the one checker, and the
one rule set for ledger records run by propose, review import, apply and the ledger contract."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.ranges import label_problem, output_ranges, range_problem
from medcalc_maintained.cli import app
from medcalc_maintained.contracts.views import instance_view, ledger_view
from medcalc_maintained.core.labels import row_style
from medcalc_maintained.ledger import rules

runner = CliRunner()
GCS_UID = 860  # Glasgow Coma Score row of v1.0, label 10, unverified
TODAY = dt.date.today()


def today_either() -> set[str]:
    """Today as this module's import saw it and as it is now: a run that crosses midnight still agrees."""
    return {TODAY.isoformat(), dt.date.today().isoformat()}


# --- the ranges as data ----------------------------------------------------------------------

def test_every_registered_calculator_has_one_range_and_no_range_is_unknown():
    registry, ranges = load_all(), output_ranges()
    assert len(registry) == 55
    assert set(ranges) == set(registry)
    for cid, rng in ranges.items():
        calc = registry[cid]
        assert rng.name == calc.name, cid
        assert len(rng.source) > 20 and rng.kind in ("score", "formula", "physiological", "window"), cid
        if calc.output_type == "date":
            lo, hi = rng.days_after
            assert rng.kind == "window" and 0 <= lo < hi, cid
        else:
            assert rng.days_after is None and rng.min < rng.max and rng.unit, cid
        if rng.kind == "score":
            assert float(rng.min).is_integer() or cid == 8  # Wells' PE has half points


@pytest.mark.parametrize("cid, lo, hi", [(21, 3, 15), (45, 0, 5), (4, 0, 9), (28, 0, 71), (43, 0, 24), (15, 5, 15)])
def test_published_score_ranges(cid, lo, hi):
    rng = output_ranges()[cid]
    assert (rng.min, rng.max) == (lo, hi)


def test_verified_labels_of_the_real_data_are_inside_their_ranges_and_uid_862_is_not(real_maintained):
    outside = {}
    for _, r in real_maintained.iterrows():
        p = label_problem(r["Calculator ID"], r["Ground Truth Answer"], r["Output Type"], row_style(r), r["Patient Note"])
        if p:
            outside[int(r["uid"])] = (r["Label Status"], p)
    verified = {u: v for u, v in outside.items() if v[0] != "unverified"}
    assert verified == {}
    # v1.0 ships a GCS of 18 at uid 862 (unverified); GCS is 3-15 by definition
    assert list(outside) == [862] and "18 is outside the range of Glasgow Coma Score (GCS) (3 to 15 points)" in outside[862][1]


def test_reference_calculators_stay_inside_the_ranges_on_the_real_data(real_recompute, real_instances):
    rows = real_instances.set_index(["split", "uid"])
    computed = real_recompute[real_recompute["computable"]]
    assert len(computed) > 1000
    bad = []
    for _, r in computed.iterrows():
        row = rows.loc[(r["split"], r["uid"])]
        if (p := range_problem(r["calculator_id"], str(r["recomputed"]), row["Patient Note"], row["Output Type"])):
            bad.append((int(r["uid"]), p))
    assert bad == []


# --- the checker -----------------------------------------------------------------------------

@pytest.mark.parametrize("value, words", [
    ("25", "25 is outside the range of Glasgow Coma Score (GCS) (3 to 15 points)"),
    ("-3", "-3 is outside the range"),
    ("9.5", "not a whole number"),
    ("10.4", "not a whole number"),
    ("78.1 ml/hr", "not a whole number"),
    ("", "empty value (write N/A for an abstention)"),
    ("  ", "empty value"),
    (None, "empty value"),
    ("03/02/2020", "a date is not an integer answer"),
])
def test_gcs_refuses_impossible_values(value, words):
    assert words in label_problem(21, value, "integer")


@pytest.mark.parametrize("value", ["3", "15", "N/A", "12"])
def test_gcs_accepts_possible_values(value):
    assert label_problem(21, value, "integer") is None


def test_a_date_for_a_decimal_calculator_is_named_as_such():
    assert label_problem(5, "01/02/2020", "decimal") == "a date is not a decimal answer"
    assert label_problem(5, "2020-01-02", "decimal") == "a date is not a decimal answer"


def test_date_windows_come_from_the_dates_of_the_note():
    note = "The patient's last menstrual period was on 03/31/2006. Her cycle length is 24 days."
    # due date: LMP + 280 + (24 - 28) = 276 days -> 01/01/2007; window 267..342 days after 03/31/2006
    assert label_problem(13, "01/01/2007", "date", note=note) is None
    assert "outside the range of Estimated Due Date" in label_problem(13, "03/31/2008", "date", note=note)
    assert "outside the range" in label_problem(13, "04/10/2006", "date", note=note)
    assert label_problem(13, "03/31/2008", "date", note="no date printed") is None  # type only
    # conception: 1..76 days after the LMP
    assert label_problem(68, "04/20/2006", "date", note=note) is None
    assert "outside the range" in label_problem(68, "03/30/2006", "date", note=note)


def test_gestational_age_is_weeks_and_days_within_45_weeks():
    assert label_problem(69, "('14 weeks', '1 days')", "integer", "gestational_age") is None
    assert "outside the range" in label_problem(69, "('46 weeks', '0 days')", "integer", "gestational_age")
    assert "weeks and days" in label_problem(69, "99", "integer", "gestational_age")


# --- record rules ----------------------------------------------------------------------------

def test_decided_at_is_a_real_date_not_after_today():
    assert rules.decided_at_problem("2026-01-15", dt.date(2026, 3, 1)) is None
    assert "not a real date" in rules.decided_at_problem("2026-02-30", dt.date(2026, 3, 1))
    assert "in the future" in rules.decided_at_problem("2026-03-02", dt.date(2026, 3, 1))
    assert "not a YYYY-MM-DD date" in rules.decided_at_problem("2026-1-5", dt.date(2026, 3, 1))


@pytest.mark.parametrize("rec, blamed", [
    ({"source": "physician", "blinded": False}, True),
    ({"source": "contributor", "reviewer": {"id": "a", "role": "physician"}, "blinded": False}, True),
    ({"source": "contributor", "reviewer_role": "physician", "blinded": False}, True),  # flat (contract view)
    ({"source": "physician", "blinded": True}, False),
    ({"source": "contributor", "reviewer": {"id": "a", "role": "contributor"}, "blinded": False}, False),
])
def test_physician_records_must_be_blinded(rec, blamed):
    assert (rules.blinded_problem(rec) is not None) is blamed


# --- propose on a real GCS row -----------------------------------------------------------------

def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


@pytest.fixture(scope="module")
def proposed(pipeline_project, tmp_path_factory):
    """A project with one valid proposal for the GCS row, in data/corrections/proposals.yaml. Shared
    by the refusal tests: each checks that the file is byte-identical afterwards."""
    import shutil

    project_root = tmp_path_factory.mktemp("proposed") / "project"
    shutil.copytree(pipeline_project, project_root)
    target = project_root / "data" / "corrections" / "proposals.yaml"
    target.write_text("corrections: []\n", encoding="utf-8")
    r = invoke(project_root, "propose", "--uid", str(GCS_UID), "--new-value", "12", "--error-type", "extraction",
               "--rationale", "Eyes open to voice (3), confused (4), localises pain (5).", "--file", str(target),
               "--reviewer-id", "gh-someone", "--specialty", "neurology")
    assert r.exit_code == 0, r.output
    return project_root, target


def test_propose_keeps_the_proposer(proposed):
    _, target = proposed
    (rec,) = yaml.safe_load(target.read_text())["corrections"]
    assert (rec["old_value"], rec["new_value"], rec["label_status"]) == ("10", "12", "corrected")
    assert rec["proposed_by"] == {"id": "gh-someone", "role": "contributor", "specialty": "neurology"}
    assert rec["decided_at"] in today_either()


def test_future_date_names_today(proposed):
    root, target = proposed
    r = invoke(root, "propose", "--uid", str(GCS_UID), "--new-value", "12", "--error-type", "extraction",
               "--rationale", "x", "--file", str(target), "--date", "2999-01-01")
    said = " ".join(r.output.split())
    assert any(f"decided_at 2999-01-01 is in the future (today is {d})" in said for d in today_either()), said


# --- apply, duplicates and the ledger contract --------------------------------------------------

def gcs_record(**kw) -> dict:
    rec = {"id": "G-0001", "uid": GCS_UID, "split": "test", "old_value": "10", "new_value": "12",
           "decision": "accepted", "label_status": "corrected", "error_type": "extraction",
           "rationale": "Recomputed from the note.", "evidence": ["note"], "source": "contributor",
           "reviewer": {"id": "rv", "role": "contributor", "specialty": None}, "blinded": False,
           "decided_at": "2026-01-10"}
    rec.update(kw)
    return rec


def write(path: Path, records: list[dict]) -> Path:
    path.write_text(yaml.safe_dump({"corrections": records}, sort_keys=False), encoding="utf-8")
    return path


def test_apply_refuses_an_accepted_gcs_of_25_and_writes_nothing(project_root):
    bad = write(project_root / "data" / "corrections" / "2026-01-gcs.yaml", [gcs_record(new_value="25")])
    out = project_root / "data" / "maintained" / "instances.parquet"
    before = out.read_bytes()
    r = invoke(project_root, "apply")
    text = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert (f"{bad}, record G-0001, field 'new_value': '25' is not a valid integer answer (25 is outside the range "
            "of Glasgow Coma Score (GCS) (3 to 15 points))") in text
    assert out.read_bytes() == before


def test_a_duplicate_accepted_record_blames_the_later_one_and_names_both(project_root):
    corrections = project_root / "data" / "corrections"
    # the later decision sits in the file that sorts first: blame follows decided_at, not file names
    later = write(corrections / "a-review.yaml", [gcs_record(id="G-0002", new_value="13", decided_at="2026-03-01")])
    earlier = write(corrections / "b-proposals.yaml", [gcs_record(id="G-0001", decided_at="2026-01-10")])
    with pytest.raises(ledger.LedgerError) as exc:
        ledger.apply.build(pd.read_parquet(project_root / "data" / "interim" / "instances.parquet"),
                           [project_root / "data" / "campaign" / "audit-2025.yaml", corrections])
    (problem,) = exc.value.problems
    assert (problem.path, problem.record, problem.field) == (str(later), "G-0002", "decision")
    assert f"G-0002 ({later}, decided 2026-03-01) repeats G-0001 ({earlier}, decided 2026-01-10)" in problem.problem


def test_ledger_contract_runs_the_same_rules(real_instances):
    recs = [gcs_record(), gcs_record(id="G-0002", new_value="13", decided_at="2026-03-01"),
            gcs_record(id="G-0003", decision="deferred", new_value="25"),
            gcs_record(id="G-0004", decision="deferred", new_value="9.5"),
            gcs_record(id="G-0005", decision="deferred", source="physician"),
            gcs_record(id="G-0006", decision="deferred", decided_at="2026-02-30"),
            gcs_record(id="G-0007", decision="deferred", decided_at=(TODAY + dt.timedelta(days=3)).isoformat())]
    frame = ledger.records_frame([ledger.Record(r, "x.yaml", i) for i, r in enumerate(recs)])
    view = ledger_view(frame, real_instances).set_index("id")
    failing = {col: sorted(view.index[~view[col]]) for col in rules_columns()}
    assert failing == {"new_value_valid": ["G-0004"], "new_value_in_range": ["G-0003", "G-0004"],
                       "old_value_fits": [], "physician_blinded": ["G-0005"],
                       "decided_at_valid": ["G-0006", "G-0007"], "one_accepted_per_row_release": ["G-0002"]}


def rules_columns() -> tuple[str, ...]:
    return ("new_value_valid", "new_value_in_range", "old_value_fits", "physician_blinded", "decided_at_valid",
            "one_accepted_per_row_release")


def test_instance_view_splits_out_of_range_labels_by_status(real_maintained, real_instances):
    from medcalc_maintained.calculators import load_all as registry

    view = instance_view(real_maintained, real_instances, pd.DataFrame(), {c: k.name for c, k in registry().items()})
    assert sorted(view.loc[~view["label_in_range"], "uid"]) == [862]
    assert sorted(view.loc[~view["unverified_label_in_range"], "uid"]) == [862]
    assert view["verified_label_in_range"].all()


def test_a_date_label_with_weeks_and_days_limits_fails_its_limit_facts(real_maintained, real_instances):
    """A date row whose limit is written as weeks and days (a gestational age, as 2024-06 writes
    them) has no order between its answer and that limit: both limit facts fail for that row, and
    the view is built (no TypeError comparing a date with a number)."""
    from medcalc_maintained.calculators import load_all as registry

    maintained = real_maintained.copy()
    dates = maintained.index[maintained["Output Type"] == "date"]
    assert len(dates) >= 2
    bad, good = dates[0], dates[1]
    maintained.loc[bad, "Upper Limit"] = "('17 weeks', '1 days')"
    view = instance_view(maintained, real_instances, pd.DataFrame(), {c: k.name for c, k in registry().items()})
    assert not view.loc[bad, "within_limits"] and not view.loc[bad, "limits_rule_ok"]
    assert view.loc[bad, "answer_parses"]
    assert view.loc[good, "within_limits"] and view.loc[good, "limits_rule_ok"]
    assert view.loc[maintained.index != bad, "within_limits"].equals(
        instance_view(real_maintained, real_instances, pd.DataFrame(),
                      {c: k.name for c, k in registry().items()}).loc[maintained.index != bad, "within_limits"])


def test_review_import_refuses_an_out_of_range_answer_naming_sheet_and_cell(real_instances, real_recompute,
                                                                          campaign_ledger, tmp_path):
    from medcalc_maintained.review import adjudicate
    from medcalc_maintained.review import packet as pkt
    from medcalc_maintained.review.layout import PacketError
    from tests.support.triage_support import ANSWERS, CASES, REVIEWER, fill

    packet = pkt.export_packet(real_instances, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    bad = dict(ANSWERS)
    bad["test-00041"] = {"answer": 12, "comment": "CHA2DS2-VASc"}  # CHA2DS2-VASc is 0-9 points
    where = fill(packet, bad, tmp_path / "bad.xlsx")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    with pytest.raises(PacketError) as exc:
        adjudicate.import_packet(tmp_path / "bad.xlsx", instances=real_instances,
                                 ledger_paths=[campaign_ledger, corrections], relabel=None, recompute=real_recompute,
                                 reviewers=[REVIEWER], adjudication=adjudicate.Adjudication((), "review"),
                                 out=corrections / "x.yaml", decided_at="2026-02-01")
    assert (f"{tmp_path / 'bad.xlsx'}, sheet Review, cell F{where['test-00041']}: row test-00041: 12 is outside the "
            "range of CHA2DS2-VASc Score for Atrial Fibrillation Stroke Risk (0 to 9 points)") in str(exc.value)
    assert len(exc.value.problems) == 1 and list(corrections.iterdir()) == []


def test_review_import_records_carry_the_routing_stage_as_proposer(real_instances, real_recompute, campaign_ledger,
                                                                  tmp_path):
    from medcalc_maintained.review import adjudicate
    from medcalc_maintained.review import packet as pkt
    from tests.support.triage_support import ANSWERS, CASES, REVIEWER, fill

    packet = pkt.export_packet(real_instances, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    fill(packet, ANSWERS, tmp_path / "filled.xlsx")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    records, _ = adjudicate.import_packet(
        tmp_path / "filled.xlsx", instances=real_instances, ledger_paths=[campaign_ledger, corrections], relabel=None,
        recompute=real_recompute, reviewers=[REVIEWER], adjudication=adjudicate.Adjudication((), "review"),
        out=corrections / "x.yaml", decided_at="2026-02-01")
    assert {r["proposed_by"]["id"] for r in records} == {"triage"}
    assert all(r["proposed_by"]["specialty"] == REVIEWER.specialty for r in records)
    assert ledger.load([corrections / "x.yaml"])  # the schema knows proposed_by


def test_a_near_duplicate_note_points_at_the_earlier_row_of_its_calculator_only():
    """Word-5-gram Jaccard: a 16-word note with its last word changed shares 11 of its 12 five-grams
    with the earlier note of the same split and calculator (11 / 13 = 0.846): a near duplicate at
    0.8, not at 0.9; the same note under another calculator, or an empty note, is none."""
    from medcalc_maintained.contracts.views import near_duplicates

    words = [f"w{i}" for i in range(16)]
    base, edited = " ".join(words), " ".join(words[:-1] + ["changed"])
    df = pd.DataFrame({"split": ["test"] * 4, "Calculator ID": [2, 2, 3, 2], "uid": [10, 11, 12, 13],
                       "Patient Note": [base, edited, edited, ""]})
    assert near_duplicates(df, 0.8) == [None, 10, None, None]
    assert near_duplicates(df, 0.9) == [None, None, None, None]
