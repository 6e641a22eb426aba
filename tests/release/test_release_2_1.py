"""Release 2.1.0: definition contradictions decided under the declared definition by policy records,
confirmed labels restored to upstream's text, derivations shipped in ``full`` and checked by the
blocking release contract ``label_reproduces_definition``; changelogs computed from the data."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medcalc_maintained.ledger import harmonize
from medcalc_maintained.release import deferred
from medcalc_maintained.release.card import change_sections, config_change
from medcalc_maintained.release.state import derive_bump


@pytest.fixture(scope="module")
def upstream_labels(v1_test_csv) -> dict[int, str]:
    up = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)
    return dict(zip(up["Row Number"].astype(int), up["Ground Truth Answer"]))


@pytest.fixture(scope="module")
def policy(campaign_records, real_instances) -> dict[int, dict]:
    records = harmonize.policy_records(campaign_records, real_instances, release="2.1.0", id_prefix="policy2026",
                                       decided_at="2026-11-24")
    return {int(r["uid"]): r for r in records}


@pytest.mark.parametrize("uid, adjudicated, followed", [(997, "389", "cdc_2016"), (1003, "301", "cdc_2016"),
                                                        (739, "-3", "delta_gap_minus_delta_bicarbonate")])
def test_contradictions_take_the_declared_definitions_value_and_keep_the_adjudicated_one(policy, upstream_labels, uid,
                                                                                           adjudicated, followed):
    # the blind re-derivation: v1.0 was right under the declared cdc-2022-mme / AG - 12
    rec = policy[uid]
    assert rec["new_value"] == upstream_labels[uid] and rec["old_value"] == adjudicated
    assert rec["label_status"] == "confirmed" and rec["error_type"] is None
    assert rec["source"] == "policy" and rec["reviewer"]["role"] == "policy"
    assert rec["adjudicated"] == {"value": adjudicated, "definition": followed}
    assert rec["release"] == "2.1.0" and "definitions.yaml" in rec["evidence"][0]


def test_a_declared_definition_without_a_value_makes_the_label_na(policy):
    # GCS with a component not testable: gcs-1974-not-testable-undefined gives no total
    for uid in (856, 857):
        assert policy[uid]["new_value"] == "N/A" and policy[uid]["label_status"] == "abstain"
        assert "not testable" in policy[uid]["justification"]


def test_every_confirmed_label_is_restored_to_upstreams_text(policy, campaign_records, upstream_labels):
    differ = [r for r in campaign_records if r["label_status"] == "confirmed"
              and r.get("reconstruction") != "definition-contradiction"
              and str(r["new_value"]) != upstream_labels[int(r["uid"])]]
    assert len(differ) == 332  # the count of confirmed rows that shipped another value in 2.0.0
    for r in differ:
        rec = policy[int(r["uid"])]
        assert rec["new_value"] == upstream_labels[int(r["uid"])] and rec["old_value"] == r["new_value"]
        assert rec["label_status"] == "confirmed" and "adjudicated" not in rec


# --------------------------------------------------------------------------------------------
# semver and changelog rules on synthetic states


def _state(cols: list[list[str]], labels: str = "a") -> dict:
    return {"schema": {"full": {"splits": ["test"], "columns": cols}}, "rows_sha256": "r", "calculators": [],
            "label_space": {}, "labels_sha256": labels, "card_sha256": "c"}


def test_an_added_column_is_minor_and_a_removed_or_retyped_one_major():
    base = [["uid", "int64"], ["Ground Truth Answer", "string"]]
    assert derive_bump(_state(base), _state(base + [["Derivation", "string"]]))[0] == "minor"
    assert derive_bump(_state(base), _state(base[:1]))[0] == "major"
    assert derive_bump(_state(base), _state([["uid", "string"], base[1]]))[0] == "major"
    assert derive_bump(_state(base), _state(base, labels="b")) == ("minor", ["labels, limits or label statuses changed"])


def test_a_swapped_mini_row_is_not_unchanged():
    a = {"test:858": {"x": "1"}, "test:1": {"x": "2"}}
    b = {"test:862": {"x": "3"}, "test:1": {"x": "2"}}
    assert config_change(a, b) == "changed: 1 row out, 1 row in"
    assert config_change(a, dict(a)) == "unchanged"
    assert config_change(a, {"test:858": {"x": "9"}, "test:1": {"x": "2"}}) == "changed: 1 row with other values"


_VALUES = ["1", "2", "N/A", "3.5", "NA", "n/a"]  # three spellings of one abstention
_ABSTAIN = {"N/A", "NA", "n/a"}
_record = st.fixed_dictionaries({
    "old": st.sampled_from(_VALUES), "new": st.sampled_from(_VALUES),
    "status": st.sampled_from(["confirmed", "corrected", "abstain"]),
    "source": st.sampled_from(["physician", "pipeline", "policy", "contributor"]),
    "adjudicated": st.sampled_from([None, "4"]), "inputs": st.sampled_from([None, "[]", '[{"name": "x"}]']),
})


_deferred = st.fixed_dictionaries({"old": st.sampled_from(_VALUES), "new": st.sampled_from(_VALUES),
                                   "rationale": st.text(max_size=120), "by": st.sampled_from(["md-9", None])})


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, max_size=25), st.lists(_deferred, max_size=10))
def test_every_number_in_the_changelog_equals_the_rows_it_lists(recs, proposals):
    rows = [{"id": f"R{n}", "split": "test", "uid": n, "Calculator Name": "c", "old_value": r["old"], "new_value": r["new"],
             "label_status": r["status"], "source": r["source"], "adjudicated_value": r["adjudicated"],
             "inputs": r["inputs"], "error_type": None, "reviewer_id": "x", "reviewer_role": "y",
             "reviewer_specialty": None, "decided_at": "2026-11-24", "rationale": "r", "change_severity": "L1"}
            for n, r in enumerate(recs)]
    accepted = pd.DataFrame(rows, columns=list(rows[0]) if rows else ["id"])
    # a draft's deferred proposals (release/deferred.py): their own section, never a label change
    proposed = pd.DataFrame([{"id": f"RD{n}", "split": "test", "uid": 1000 + n, "Calculator Name": "c",
                              "old_value": p["old"], "new_value": p["new"], "rationale": p["rationale"],
                              "proposed_by": p["by"], "decided_at": "2026-11-24", "file": "x.yaml"}
                             for n, p in enumerate(proposals)], columns=deferred.COLUMNS)
    text = "\n".join(change_sections(accepted, {}) + deferred.proposed_section(proposed))
    def same(r):  # the label stays: the same text, or an abstention re-confirmed in another spelling
        return r["old_value"] == r["new_value"] or {r["old_value"], r["new_value"]} <= _ABSTAIN

    changed = {r["id"] for r in rows if not same(r)}
    reconfirmed = {r["id"] for r in rows if same(r) and r["label_status"] != "confirmed"}
    listed: list[str] = []
    # every "### <title> (n)" section lists exactly n rows; the label changes are listed once each
    for part in text.split("\n### ")[1:]:
        title, rest = part.split("\n", 1)
        n = int(title.rsplit("(", 1)[1].rstrip(")"))
        ids = [line.split(" | ")[0].lstrip("| ") for line in rest.splitlines() if line.startswith("| R")]
        assert len(ids) == n, title
        if title.startswith("Re-confirmed"):
            assert set(ids) == reconfirmed
        elif title.startswith(deferred.TITLE):
            assert ids == [f"RD{n}" for n in range(len(proposals))]
        else:
            listed += ids
    assert sorted(listed) == sorted(changed)
    assert text.startswith(f"{len(changed)} label(s) changed in this release")
    confirmations = len(rows) - len(changed) - len(reconfirmed)
    assert (f"{confirmations} accepted record(s) confirm the upstream label" in text) == (confirmations > 0)


def test_a_reconfirmed_abstention_is_no_label_change():
    """N/A -> N/A (however the abstention is spelled) keeps the label: listed under Re-confirmed only."""
    def rec(rid, old, new, status):
        return {"id": rid, "split": "test", "uid": int(rid[1:]), "Calculator Name": "APACHE II Score", "old_value": old,
                "new_value": new, "label_status": status, "source": "physician", "error_type": "unanswerable",
                "reviewer_id": "md-1", "reviewer_role": "physician", "reviewer_specialty": None,
                "decided_at": "2026-11-24", "rationale": "r", "change_severity": "L0"}
    accepted = pd.DataFrame([rec("R868", "N/A", "N/A", "abstain"), rec("R869", "N/A", "NA", "abstain"),
                             rec("R870", "n/a", "N/A", "abstain"), rec("R871", "12", "N/A", "abstain")])
    text = "\n".join(change_sections(accepted, {}))
    changes = text.split("### Label changes (")[1].split("\n### ")[0]
    assert changes.startswith("1)") and "| R871 |" in changes and "N/A → N/A" not in changes
    assert not any(f"| {r} |" in changes for r in ("R868", "R869", "R870"))
    reconfirmed = text.split("### Re-confirmed (")[1]
    assert reconfirmed.startswith("3)") and all(f"| {r} |" in reconfirmed for r in ("R868", "R869", "R870"))
    assert text.startswith("1 label(s) changed in this release")
