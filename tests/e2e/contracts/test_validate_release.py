"""`validate DIR` on a real release 2.0.0: the pristine build passes; each corruption of a config,
the manifest, the card or the file set fails with a named, blocking expectation. Parquet
corruptions re-hash the manifest, so the sha256 check alone cannot catch them."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.contracts.validate import validate
from medcalc_maintained.project import Project

# GX over a whole release per test (about 15 s each on 2 cores)
PART = "test-00000-of-00001.parquet"


@pytest.fixture(scope="module")
def release_dir(pipeline_project, tmp_path_factory) -> Path:
    from medcalc_maintained.stages import release as release_stage

    out = tmp_path_factory.mktemp("release") / "v2.0.0"
    release_stage.run(Project.load(pipeline_project), out=out, version="2.0.0")
    return out


@pytest.fixture
def copy(release_dir, tmp_path) -> Path:
    return shutil.copytree(release_dir, tmp_path / "release")


def rehash(release: Path) -> None:
    """Make manifest.json agree with the files again (sha256 of every listed file that exists)."""
    man = json.loads((release / "manifest.json").read_text())
    for rel in list(man["files"]):
        if (release / rel).is_file():
            man["files"][rel] = hashlib.sha256((release / rel).read_bytes()).hexdigest()
    (release / "manifest.json").write_text(json.dumps(man, indent=2, sort_keys=True))


def edit_config(release: Path, config: str, fn) -> None:
    p = release / "data" / config / PART
    df = fn(pq.read_table(p).to_pandas())
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), p)
    rehash(release)


def blocking(release: Path, project: Path) -> dict[str, dict[str, list[str]]]:
    """{suite: {expectation: offending}} of the blocking failures."""
    rep = validate(release, project=Project.load(project))
    out: dict[str, dict[str, list[str]]] = {}
    for f in rep.blocking:
        out.setdefault(f.suite, {})[f.expectation] = f.offending
    assert rep.success == (not out)
    return out


def in_set(column: str) -> str:
    return f"expect_column_values_to_be_in_set({column})"


def verified_decimal_row(release: Path) -> pd.Series:
    df = pd.read_parquet(release / "data" / "default" / PART)
    ok = df[(df["Output Type"] == "decimal") & (df["Ground Truth Answer"] != "N/A")]
    return ok.iloc[0]


def test_pristine_release_passes(release_dir, pipeline_project):
    from medcalc_maintained.release.build import pipeline_tables

    project = Project.load(pipeline_project)  # compared with what the pipeline builds for 2.0.0, as the CLI does
    rep = validate(release_dir, project=project, expected=pipeline_tables(project, release_dir))
    assert rep.success, [str(f) for f in rep.blocking]
    assert "history" not in {f.suite for f in rep.failures}
    suites = {f.suite for f in rep.failures}
    assert not suites & {"release", "manifest", "schema@default", "label_invariants@default"}
    # 2.0.0: default = the 887 verified rows of full; every config checked
    default = pd.read_parquet(release_dir / "data" / "default" / PART)
    full = pd.read_parquet(release_dir / "data" / "full" / PART)
    assert len(default) == 887 == int((full["Label Status"] != "unverified").sum())


def test_default_duplicated_row(copy, pipeline_project):
    edit_config(copy, "default", lambda df: pd.concat([df, df.iloc[[3]]], ignore_index=True))
    uid = int(pd.read_parquet(copy / "data" / "default" / PART).iloc[3]["Row Number"])
    bad = blocking(copy, pipeline_project)
    assert bad["release"][in_set("unique_in_default")] == [f"split=test uid {uid}"]
    assert bad["release"][in_set("rows_match_manifest")] == [f"path=data/default/{PART}"]
    assert "expect_compound_columns_to_be_unique(split,uid)" in bad["schema@default"]
    assert "manifest" not in bad  # re-hashed: the sha256 check alone would have passed it


def test_default_dropped_column(copy, pipeline_project):
    edit_config(copy, "default", lambda df: df.drop(columns=["Upper Limit"]))
    bad = blocking(copy, pipeline_project)
    assert bad["release"][in_set("present")] == ["config=default column=Upper Limit"]
    assert "expect_column_to_exist(Upper Limit)" in bad["schema@default"]


def test_default_answer_outside_limits(copy, pipeline_project):
    row = verified_decimal_row(copy)
    far = str(float(row["Upper Limit"]) * 3 + 1)

    def fn(df):
        df.loc[df["Row Number"] == row["Row Number"], "Ground Truth Answer"] = far
        return df
    edit_config(copy, "default", fn)
    bad = blocking(copy, pipeline_project)
    where = [f"split=test uid {int(row['Row Number'])}"]
    assert bad["label_invariants@default"][in_set("within_limits")] == where
    assert bad["release"][in_set("matches_full")] == where


def test_default_twenty_percent_band(copy, pipeline_project):
    row = verified_decimal_row(copy)
    x = float(row["Ground Truth Answer"])

    def fn(df):
        sel = df["Row Number"] == row["Row Number"]
        df.loc[sel, "Lower Limit"], df.loc[sel, "Upper Limit"] = str(x * 0.8), str(x * 1.2)
        return df
    edit_config(copy, "default", fn)
    bad = blocking(copy, pipeline_project)
    assert bad["label_invariants@default"][in_set("limits_rule_ok")] == [f"split=test uid {int(row['Row Number'])}"]


def test_default_unknown_label_status(copy, pipeline_project):
    def fn(df):
        df.loc[0, "Label Status"] = "probably-fine"
        return df
    edit_config(copy, "default", fn)
    bad = blocking(copy, pipeline_project)
    assert in_set("Label Status") in bad["schema@default"]
    assert in_set("matches_full") in bad["release"]


def test_default_wrong_calculator_name(copy, pipeline_project):
    def fn(df):
        df.loc[0, "Calculator Name"] = "Made-up Score"
        return df
    edit_config(copy, "default", fn)
    uid = int(pd.read_parquet(copy / "data" / "default" / PART).iloc[0]["Row Number"])
    bad = blocking(copy, pipeline_project)
    assert bad["schema@default"][in_set("calculator_in_registry")] == [f"split=test uid {uid}"]


def test_default_missing_a_verified_row_and_holding_an_unverified_one(copy, pipeline_project):
    full = pd.read_parquet(copy / "data" / "full" / PART)
    unverified = full[full["Label Status"] == "unverified"].iloc[0]
    cols = list(pd.read_parquet(copy / "data" / "default" / PART).columns)

    def fn(df):
        dropped = df.iloc[1:]
        return pd.concat([dropped, full.loc[[unverified.name], cols]], ignore_index=True)
    first = int(pd.read_parquet(copy / "data" / "default" / PART).iloc[0]["Row Number"])
    edit_config(copy, "default", fn)
    bad = blocking(copy, pipeline_project)
    assert sorted(bad["release"][in_set("membership_ok")]) == sorted(
        [f"split=test uid {first}", f"split=test uid {int(unverified['uid'])}"])


def test_full_label_changed_so_default_differs(copy, pipeline_project):
    row = verified_decimal_row(copy)

    def fn(df):
        df.loc[df["uid"] == int(row["Row Number"]), "Ground Truth Answer"] = "N/A"
        return df
    edit_config(copy, "full", fn)
    bad = blocking(copy, pipeline_project)
    assert bad["release"][in_set("matches_full")] == [f"split=test uid {int(row['Row Number'])}"]


def test_original_dropped_column(copy, pipeline_project):
    edit_config(copy, "original", lambda df: df.drop(columns=["Question"]))
    bad = blocking(copy, pipeline_project)
    assert bad["release"][in_set("present")] == ["config=original column=Question"]


def test_corrections_unknown_error_type(copy, pipeline_project):
    def fn(df):
        df.loc[df["error_type"].notna().idxmax(), "error_type"] = "typo"
        return df
    edit_config(copy, "corrections", fn)
    bad = blocking(copy, pipeline_project)
    assert in_set("error_type") in bad["ledger"]


def test_manifest_row_count_and_rule(copy, pipeline_project):
    man = json.loads((copy / "manifest.json").read_text())
    man["rows"]["full"]["test"] = 1046
    man["default_rows"] = "all"
    (copy / "manifest.json").write_text(json.dumps(man))
    bad = blocking(copy, pipeline_project)
    assert bad["release"][in_set("rows_match_manifest")] == [f"path=data/full/{PART}"]
    assert len(bad["release"][in_set("membership_ok")]) == 160  # the unverified rows are missing from default


def _edit_card(release: Path, fn) -> None:
    text = (release / "README.md").read_text()
    _, front, body = text.split("---\n", 2)
    doc = yaml.safe_load(front)
    fn(doc)
    (release / "README.md").write_text("---\n" + yaml.safe_dump(doc, sort_keys=False) + "---\n" + body)
    rehash(release)


def test_card_front_matter_drops_a_config_and_points_elsewhere(copy, pipeline_project):
    def fn(doc):
        doc["configs"] = [c for c in doc["configs"] if c["config_name"] != "original"]
        for c in doc["configs"]:
            if c["config_name"] == "full":
                c["data_files"][0]["path"] = "data/full/*.parquet"
    _edit_card(copy, fn)
    bad = blocking(copy, pipeline_project)
    assert bad["release"][in_set("in_card")] == ["config=original"]
    assert bad["release"][in_set("card_files_match_manifest")] == ["config=full"]


def test_card_default_flag_on_another_config(copy, pipeline_project):
    def fn(doc):
        for c in doc["configs"]:
            c.pop("default", None)
            if c["config_name"] == "full":
                c["default"] = True
    _edit_card(copy, fn)
    bad = blocking(copy, pipeline_project)
    assert sorted(bad["release"][in_set("default_flag_ok")]) == ["config=default", "config=full"]


def test_extra_files_not_in_manifest(copy, pipeline_project):
    shutil.copy(copy / "data" / "default" / PART, copy / "data" / "default" / "test-00001-of-00002.parquet")
    (copy / "notes.txt").write_text("not part of the release\n")
    bad = blocking(copy, pipeline_project)
    assert sorted(bad["manifest"][in_set("in_manifest")]) == [
        "path=data/default/test-00001-of-00002.parquet", "path=notes.txt"]
    assert in_set("unique_in_default") in bad["release"]  # a loader would read both files


def test_manifest_entry_without_its_file_and_cli_exit_code(copy, pipeline_project):
    (copy / "data" / "original" / PART).unlink()
    (copy / "CHANGELOG.md").unlink()
    bad = blocking(copy, pipeline_project)
    assert sorted(bad["manifest"][in_set("exists")]) == ["path=CHANGELOG.md", f"path=data/original/{PART}"]
    # --no-docs: Data Docs would be written into the shared read-only project (and cost a second GX pass)
    r = CliRunner().invoke(app, ["validate", "--no-docs", str(copy)], env={"MEDCALC_ROOT": str(pipeline_project)})
    assert r.exit_code == 1, r.output
    assert "exists" in r.output and "CHANGELOG.md" in r.output


def test_issue14_content_corruptions_are_caught(copy, pipeline_project):
    """A mini row swapped for one the rule did not choose, a corrected row given back its upstream
    explanation, `Row Number` as text, and croissant.json without its RAI fields: each is named."""
    mini = pd.read_parquet(copy / "data" / "mini" / PART)
    default = pd.read_parquet(copy / "data" / "default" / PART)
    outsider = default[~default["Row Number"].isin(mini["Row Number"])].iloc[[0]]
    dropped = int(mini.iloc[0]["Row Number"])
    edit_config(copy, "mini", lambda df: pd.concat([df.iloc[1:], outsider], ignore_index=True))
    original = pd.read_parquet(copy / "data" / "original" / PART).set_index("Row Number")
    full = pd.read_parquet(copy / "data" / "full" / PART)
    (i,) = full.index[(full["Label Status"] == "corrected") & (full["Explanation Source"] == "reference-calculator")][:1]
    uid = int(full.at[i, "Row Number"])

    def upstream_text(df):
        df.at[i, "Ground Truth Explanation"] = original.at[uid, "Ground Truth Explanation"]
        return df

    edit_config(copy, "full", upstream_text)
    edit_config(copy, "original", lambda df: df.assign(**{"Row Number": df["Row Number"].astype(str)}))
    doc = json.loads((copy / "croissant.json").read_text())
    del doc["rai:dataLimitations"]
    (copy / "croissant.json").write_text(json.dumps(doc))
    rehash(copy)
    bad = blocking(copy, pipeline_project)["release"]
    assert sorted(bad[in_set("selected_by_rule")]) == sorted(
        [f"split=test uid {int(outsider.iloc[0]['Row Number'])}", f"split=test uid {dropped}"])
    assert bad[in_set("explanation_fits_source")] == [f"split=test uid {uid}"]
    assert "config=original column=Row Number" in bad[in_set("declared_type_ok")]
    assert "item=croissant.json" in bad[in_set("described")]
    assert "config=original" in bad[in_set("features_match_files")]
