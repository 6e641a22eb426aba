"""Unverified rows of ``full`` (releases from 2.1.0 on) carry a proposal backed by the checks' error
findings, never a label: ``Proposed Answer`` and ``Proposal`` (issue 25 item 6).

The end-to-end tests of this subject; the fast ones are in tests/release/test_proposals.py."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medcalc_maintained.project import Project
from medcalc_maintained.quality.checks import run_checks
from medcalc_maintained.release import table_builder as T
from medcalc_maintained.release import upstream as follow
from tests.support.release_support import cli

LABEL_COLUMNS = ["Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status", "Original Ground Truth Answer",
                 "Ground Truth Explanation", "Derivation", "Derivation Status"]


@pytest.fixture(scope="module")
def findings(real_instances, real_recompute) -> pd.DataFrame:
    return run_checks(real_instances, real_recompute)


@pytest.fixture(scope="module")
def built(tmp_path_factory, pipeline_project, findings):
    """(project root, release directory): 2.1.0 built in a copy of the pipeline project that holds the
    recompute stage's findings."""
    root = tmp_path_factory.mktemp("proposals") / "project"
    shutil.copytree(pipeline_project, root)
    findings.to_parquet(Project.load(root).findings, index=False)
    out = root / "build" / "v2.1.0"
    r = cli(root, "release", "build", "--out", str(out), "--version", "2.1.0")
    assert r.exit_code == 0, r.output
    return root, out


def _full(out) -> pd.DataFrame:
    return pq.read_table(out / "data" / "full" / "test-00000-of-00001.parquet").to_pandas()


def _errors(findings: pd.DataFrame) -> dict[int, pd.DataFrame]:
    err = findings[findings["severity"] == "error"]
    return {int(u): part for u, part in err.groupby("uid")}


# builds release 2.1.0 (module fixture `built`)
def test_unverified_rows_with_error_findings_carry_them_and_verified_rows_never(built, findings):
    _, out = built
    full = _full(out)
    errors = _errors(findings)
    unverified = full["Label Status"] == "unverified"
    proposed = full[unverified & full["Row Number"].isin(errors)]
    assert len(proposed) > 0
    for uid, text in zip(proposed["Row Number"], proposed["Proposal"]):
        doc = json.loads(text)
        want = errors[int(uid)]
        assert [(f["check"], f["reason"], f["evidence"]["text"]) for f in doc["findings"]] == \
            list(zip(want["check"], want["reason"], want["evidence_text"]))
        assert {f["severity"] for f in doc["findings"]} == {"error"}
    others = full[~(unverified & full["Row Number"].isin(errors))]
    assert len(others[others["Label Status"] != "unverified"]) > 0
    assert others["Proposal"].isna().all() and (others["Proposed Answer"] == "").all()


# builds release 2.1.0 (module fixture `built`)
def test_an_aggregation_mismatch_proposes_the_reference_calculators_value(built, findings, real_recompute):
    # the recompute stage's own value on the row's features, not read from the proposal code
    _, out = built
    full = _full(out).set_index("Row Number")
    recomputed = dict(zip(real_recompute["uid"].astype(int), real_recompute["recomputed"]))
    mismatch = findings[findings["check"] == "recompute_aggregation_mismatch"]["uid"].astype(int)
    rows = [u for u in mismatch if full.at[u, "Label Status"] == "unverified"]
    assert len(rows) > 10
    for uid in rows:
        doc = json.loads(full.at[uid, "Proposal"])
        if "boolean_contradicted" in {f["check"] for f in doc["findings"]}:
            continue  # the criterion patched too
        assert full.at[uid, "Proposed Answer"] == recomputed[uid] == doc["derivation"]["value"]
        assert doc["derivation"]["inputs"] == []


# builds release 2.1.0 (module fixture `built`)
def test_a_finding_that_reads_no_value_lists_the_findings_without_a_value(built, findings):
    _, out = built
    full = _full(out).set_index("Row Number")
    checks = findings[findings["severity"] == "error"].groupby("uid")["check"].apply(set)
    only_na = [u for u, c in checks.items() if full.at[u, "Label Status"] == "unverified"
               and not c & {"recompute_aggregation_mismatch", "boolean_contradicted"}]
    assert only_na
    for uid in only_na:
        doc = json.loads(full.at[uid, "Proposal"])
        assert doc["derivation"] is None and full.at[uid, "Proposed Answer"] == "" and doc["findings"]


# builds release 2.1.0 (module fixture `built`)
def test_default_and_the_label_columns_do_not_change_and_earlier_releases_have_no_proposal(
        built, pipeline_project):
    root, _ = built
    plan = follow.plan_for(Project.load(root))
    with_findings = T.build_tables(Project.load(root), plan.get("2.1.0"), plan.path)
    without = T.build_tables(Project.load(pipeline_project), plan.get("2.1.0"), plan.path)
    for config in ("default", "mini"):
        pd.testing.assert_frame_equal(with_findings.combined(config), without.combined(config))
    a, b = with_findings.combined("full"), without.combined("full")
    pd.testing.assert_frame_equal(a[LABEL_COLUMNS], b[LABEL_COLUMNS])
    assert b["Proposal"].isna().all() and a["Proposal"].notna().any()
    for version in ("1.0.0", "2.0.0"):
        full = T.build_tables(Project.load(root), plan.get(version), plan.path).combined("full")
        assert "Proposal" not in full.columns and "Proposed Answer" not in full.columns


def _tamper(out, tmp_path, change) -> tuple[int, str, int]:
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    path = bad / "data" / "full" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    df = table.to_pandas()
    uid = change(df)
    pq.write_table(pa.Table.from_pandas(df, schema=table.schema, preserve_index=False), path)
    return bad, uid


def _validate(root, out) -> tuple[int, str]:
    r = cli(root, "validate", str(out), "--no-docs")  # Data Docs are not under test here
    return r.exit_code, r.output


def _blocking_line(root, out, work, change, check: str) -> tuple[str, int]:
    """Tamper a copy of ``out`` with ``change``; validate must fail, and the line of ``check``."""
    bad, uid = _tamper(out, work, change)
    code, output = _validate(root, bad)
    assert code != 0
    line = next(x for x in output.splitlines() if check in x)
    assert line.startswith("BLOCKING"), line
    return line, uid


# builds release 2.1.0; GX over the whole release, three times
def test_the_contract_passes_and_a_tampered_proposal_fails_naming_row_and_field(built, tmp_path):
    root, out = built
    code, output = _validate(root, out)
    assert code == 0, output

    def wrong_value(df):
        i = int(df.index[(df["Proposed Answer"] != "")][0])
        doc = json.loads(df.at[i, "Proposal"])
        doc["derivation"]["value"] = str(float(doc["derivation"]["value"]) + 7)
        df.at[i, "Proposal"] = json.dumps(doc)
        df.at[i, "Proposed Answer"] = doc["derivation"]["value"]
        return int(df.at[i, "Row Number"])

    line, uid = _blocking_line(root, out, tmp_path / "a", wrong_value, "value_derives")
    assert f"uid {uid} field=Proposal" in line
    assert f"uid {uid} field=Proposed Answer" not in line  # the answer still says what the document says

    def on_verified(df):
        src = int(df.index[df["Proposal"].notna()][0])
        i = int(df.index[df["Label Status"] != "unverified"][0])
        df.at[i, "Proposal"], df.at[i, "Proposed Answer"] = df.at[src, "Proposal"], df.at[src, "Proposed Answer"]
        return int(df.at[i, "Row Number"])

    line, uid = _blocking_line(root, out, tmp_path / "b", on_verified, "only_unverified")
    assert f"uid {uid} field=Proposal" in line
