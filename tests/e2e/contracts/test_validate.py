"""Data contracts (GX): a pristine target passes; each corruption fails, naming its expectation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.contracts.validate import validate
from medcalc_maintained.project import Project

runner = CliRunner()

# every test here runs Great Expectations over the whole real split or a whole release (5-15 s each)


@pytest.fixture(scope="module")
def built(pipeline_project) -> Path:
    """A project root holding real pipeline outputs (ingest -> import-campaign -> apply); read-only."""
    return pipeline_project


@pytest.fixture
def project(project_root) -> Path:
    return project_root


def corrupt_maintained(root: Path, fn) -> None:
    p = root / "data" / "maintained" / "instances.parquet"
    df = pd.read_parquet(p)
    df = fn(df)
    df.to_parquet(p)


def failing(root: Path) -> dict[str, list[str]]:
    rep = validate(None, project=Project.load(root))
    return {f.expectation: f.offending for f in rep.blocking}, rep


def test_pristine_outputs_pass(project):
    blocking, rep = failing(project)
    assert rep.success, blocking
    assert rep.evaluated > 50


def test_cli_exit_codes_and_data_docs(project, monkeypatch):
    monkeypatch.setenv("MEDCALC_ROOT", str(project))
    docs = project / "docs-out"
    ok = runner.invoke(app, ["validate", "--docs", str(docs)])
    assert ok.exit_code == 0, ok.output
    assert (docs / "index.html").is_file()
    corrupt_maintained(project, lambda d: pd.concat([d, d.iloc[[0]]], ignore_index=True))
    bad = runner.invoke(app, ["validate", "--no-docs"])
    assert bad.exit_code == 1
    assert "expect_compound_columns_to_be_unique(split,uid)" in " ".join(bad.output.split())


def _first(df, status):
    return df.index[df["Label Status"] == status][0]


def test_duplicate_uid(project):
    corrupt_maintained(project, lambda d: pd.concat([d, d.iloc[[5]]], ignore_index=True))
    blocking, _ = failing(project)
    assert "expect_compound_columns_to_be_unique(split,uid)" in blocking


def test_guideline_version_must_name_a_declared_or_alternative_definition(project):
    def f(d):
        mme = d.index[d["Calculator ID"].astype(int) == 49]
        d.loc[mme[0], "Guideline Version"] = "cdc_2016"      # a published alternative of MME: allowed
        d.loc[mme[1], "Guideline Version"] = "whatever-2030"  # no such definition
        return d
    corrupt_maintained(project, f)
    blocking, _ = failing(project)
    rows = blocking["expect_column_values_to_be_in_set(guideline_version_known)"]
    assert len(rows) == 1


def test_answer_outside_limits(project):
    def f(d):
        i = d.index[(d["Output Type"] == "decimal") & (d["Label Status"] == "unverified")][0]
        d.loc[i, "Upper Limit"] = str(float(d.loc[i, "Ground Truth Answer"]) * 0.9)
        d.loc[i, "Lower Limit"] = str(float(d.loc[i, "Ground Truth Answer"]) * 0.8)
        return d
    corrupt_maintained(project, f)
    blocking, _ = failing(project)
    assert "expect_column_values_to_be_in_set(within_limits)" in blocking


def test_decimal_limits_not_five_percent(project):
    uid = {}

    def f(d):
        i = d.index[(d["Output Type"] == "decimal") & (d["Label Status"] == "confirmed")][0]
        x = float(d.loc[i, "Ground Truth Answer"])
        d.loc[i, "Lower Limit"], d.loc[i, "Upper Limit"] = str(x * 0.9), str(x * 1.1)  # a ±10% band
        uid["u"] = int(d.loc[i, "uid"])
        return d
    corrupt_maintained(project, f)
    blocking, _ = failing(project)
    assert blocking["expect_column_values_to_be_in_set(limits_rule_ok)"] == [f"split=test uid {uid['u']}"]


def test_na_without_rationale(project):
    def f(d):
        i = d.index[d["Label Status"] == "unverified"][0]
        d.loc[i, ["Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status"]] = ["N/A", "N/A", "N/A", "abstain"]
        return d
    corrupt_maintained(project, f)
    blocking, _ = failing(project)
    assert "expect_column_values_to_be_in_set(na_is_abstain_with_rationale)" in blocking


def test_changed_label_without_correction(project):
    def f(d):
        i = d.index[(d["Output Type"] == "integer") & (d["Label Status"] == "unverified")
                    & ~d["Ground Truth Answer"].str.contains("weeks")][0]
        new = str(int(d.loc[i, "Ground Truth Answer"]) + 3)
        d.loc[i, ["Ground Truth Answer", "Lower Limit", "Upper Limit"]] = [new, new, new]
        return d
    corrupt_maintained(project, f)
    blocking, _ = failing(project)
    assert "expect_column_values_to_be_in_set(change_has_accepted_correction)" in blocking


def _add_ledger(root: Path, rec: dict) -> None:
    (root / "data" / "corrections" / "2026-01-bad.yaml").write_text(yaml.safe_dump({"corrections": [rec]}))


def _record(**kw):
    base = {"id": "C-0001", "uid": 2, "split": "test", "old_value": "38", "new_value": "40", "decision": "deferred",
            "label_status": "corrected", "error_type": "extraction", "rationale": "r", "evidence": "e",
            "source": "contributor", "reviewer": {"id": "x", "role": "physician"}, "blinded": True,
            "decided_at": "2026-01-02"}
    base.update(kw)
    return base


def test_correction_for_unknown_uid(project):
    _add_ledger(project, _record(uid=50000))
    blocking, _ = failing(project)
    assert blocking["expect_column_values_to_be_in_set(uid_exists)"] == ["id=C-0001"]


def test_old_value_mismatch(project, v1_test_csv):
    upstream = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False).set_index("Row Number")
    wrong = str(float(upstream.at["2", "Ground Truth Answer"]) + 7)
    _add_ledger(project, _record(old_value=wrong, decision="accepted"))
    blocking, _ = failing(project)
    assert blocking["expect_column_values_to_be_in_set(old_value_matches_base)"] == ["id=C-0001"]


def test_unknown_error_type(project):
    _add_ledger(project, _record(error_type="typo"))
    blocking, _ = failing(project)
    assert "expect_column_values_to_be_in_set(error_type)" in blocking


def test_physician_record_must_be_blinded(project):
    _add_ledger(project, _record(source="physician", blinded=False))
    blocking, _ = failing(project)
    assert "expect_column_values_to_be_in_set(physician_blinded)" in blocking


def test_gate_severity_comes_from_params(project):
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["validate"]["gates"]["max_unverified_rate"] = {"severity": "blocking", "max": 0.05}
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    blocking, _ = failing(project)
    assert "expect_column_mean_to_be_between(is_unverified)" in blocking  # 160/1047 = 15% > 5%
    params["validate"]["gates"]["max_unverified_rate"]["severity"] = "warning"
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    blocking, rep = failing(project)
    assert rep.success and any("is_unverified" in w.expectation for w in rep.warnings)


@pytest.fixture(scope="module")
def release_dir(built, tmp_path_factory) -> Path:
    """A real release 2.0.0 built from the fixture project by stage `release`."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import release as release_stage

    out = tmp_path_factory.mktemp("rel") / "release"
    release_stage.run(Project.load(built), out=out, version="2.0.0")
    return out


def test_pristine_release_passes(release_dir, built):
    from medcalc_maintained.release.build import pipeline_tables

    project = Project.load(built)  # compared with what the pipeline builds for 2.0.0, as the CLI does
    rep = validate(release_dir, project=project, expected=pipeline_tables(project, release_dir))
    assert rep.success, [str(f) for f in rep.blocking]
    assert any(f.suite == "manifest" for f in rep.failures) is False


def test_release_file_whose_sha256_differs_from_manifest(release_dir, built, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(release_dir, copy)
    part = sorted((copy / "data" / "full").glob("*.parquet"))[0]
    df = pd.read_parquet(part)
    df.iloc[::-1].to_parquet(part)  # same rows, other bytes
    rep = validate(copy, project=Project.load(built))
    assert not rep.success
    bad = {f.expectation: f.offending for f in rep.blocking}
    assert bad["expect_column_values_to_be_in_set(sha256_matches)"] == [f"path={part.relative_to(copy).as_posix()}"]


def test_release_duplicate_uid_is_caught_in_release_data(release_dir, built, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(release_dir, copy)
    part = sorted((copy / "data" / "full").glob("*.parquet"))[0]
    df = pd.read_parquet(part)
    pd.concat([df, df.iloc[[0]]], ignore_index=True).to_parquet(part)
    rep = validate(copy, project=Project.load(built))
    names = {f.expectation for f in rep.blocking}
    assert "expect_compound_columns_to_be_unique(split,uid)" in names
    assert "expect_column_values_to_be_in_set(sha256_matches)" in names
