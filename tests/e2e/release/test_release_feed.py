"""Issue 40, items 4 and 5: the release feed ``releases.json``, the card's opening score shift of the
worked example, a card that documents every column and value, and a ``mini`` whose first rows
sample calculators. The slow tests build releases 2.1.0 and 2.2.0 of the repro project (the
committed ledger) and check the feed and the card against numbers computed here from the builds.

The end-to-end tests of this subject; the fast ones are in tests/release/test_release_feed.py."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from medcalc_maintained.core.answers import is_correct
from medcalc_maintained.release import feed
from medcalc_maintained.release.tables import CONFIGS
from tests.support.release_support import cli

PART = "test-00000-of-00001.parquet"


SCORED = ["Calculator ID", "Patient Note", "Question", "Output Type", "Ground Truth Answer", "Lower Limit",
          "Upper Limit"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, repro_project) -> tuple[Path, dict[str, Path]]:
    """(project root, {version: release dir}): releases 2.1.0 and 2.2.0 built from a copy of the
    repro project whose worked example answers every row of 2.1.0's `default` with its 2.1.0 label."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.tables import load_config
    from medcalc_maintained.stages import release_tables

    root = tmp_path_factory.mktemp("feed") / "project"
    shutil.copytree(repro_project, root)
    project = Project.load(root)
    release_tables.run(project)  # a reader of a release by version reads the stored tables only
    labels = load_config(project, "2.1.0", "default")
    project.example_predictions.parent.mkdir(parents=True, exist_ok=True)
    project.example_predictions.write_text("".join(
        json.dumps({"uid": int(u), "output": f"<answer>{a}</answer>"}) + "\n"
        for u, a in zip(labels["Row Number"], labels["Ground Truth Answer"])))
    out = {}
    for version in ("2.1.0", "2.2.0"):
        out[version] = root / "build" / f"v{version}"
        r = cli(root, "release", "build", "--out", str(out[version]), "--version", version)
        assert r.exit_code == 0, r.output
    return root, out


def _config(release: Path, config: str) -> pd.DataFrame:
    return pd.read_parquet(release / "data" / config / PART)


def _changed(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    both = before.merge(after, on="Row Number", suffixes=("_a", "_b"))
    diff = pd.Series(False, index=both.index)
    for c in SCORED:
        diff |= both[f"{c}_a"].astype(str) != both[f"{c}_b"].astype(str)
    return both[diff]


def test_the_feed_of_2_2_0_is_computed_from_the_releases(built):
    _root, out = built
    doc = json.loads((out["2.2.0"] / feed.FEED_FILE).read_text())
    versions = [e["version"] for e in doc["releases"]]
    assert versions == ["1.0.0", "2.0.0", "2.1.0", "2.2.0"] and doc["latest"] == "2.2.0"
    assert doc["compared_columns"]["rows"] == SCORED
    by = {e["version"]: e for e in doc["releases"]}
    assert by["1.0.0"]["comparability"] == "first" and by["1.0.0"]["previous"] is None
    assert [by[v]["tags"] for v in versions] == [["v1.0.0", "v1.0"], ["v2.0.0", "v2.0"], ["v2.1.0", "v2.1"],
                                                 ["v2.2.0", "v2.2"]]
    assert all(e["ledger_commit"] is None and e["ledger_ref"] is None for e in doc["releases"])  # working tree
    # the sha256 of 2.1.0's data files are those of a real build of 2.1.0; 2.2.0's those of this build
    for version in ("2.1.0", "2.2.0"):
        man = json.loads((out[version] / "manifest.json").read_text())
        listed = {f: h for c in by[version]["configs"].values() for f, h in c["files"].items()}
        assert listed == {f: h for f, h in man["files"].items() if f.startswith("data/")}
        assert {c: d["rows"] for c, d in by[version]["configs"].items()} == man["rows"]
    # 2.0.0 left 160 unverified rows out of 1.0.0's all-rows default
    d20 = by["2.0.0"]["configs"]["default"]
    assert (d20["class"], d20["rows_out"], d20["rows_in"]) == ("rows-changed", 1047 - 887, 0)
    # 2.1.0 -> 2.2.0, computed here from the two builds
    before, after = _config(out["2.1.0"], "default"), _config(out["2.2.0"], "default")
    assert set(before["Row Number"]) == set(after["Row Number"])
    changed = _changed(before, after)
    assert {891, 902, 905, 427, 146, 152} <= set(changed["Row Number"])  # the 2.2.0 corrections
    d22 = by["2.2.0"]["configs"]["default"]
    assert (d22["class"], d22["labels_changed"], d22["rows_in"], d22["rows_out"]) == (
        "labels-changed", len(changed), 0, 0)
    assert by["2.2.0"]["comparability"] == "labels-changed" and by["2.2.0"]["comparable"] is False
    per_calc = changed.groupby("Calculator ID_b").size().to_dict()
    assert {r["calculator_id"]: r["labels_changed"] for r in by["2.2.0"]["changed_rows_per_calculator"]} == per_calc
    # upstream's rows never change: `original` is byte-identical release after release
    sha = [hashlib.sha256((out[v] / "data" / "original" / PART).read_bytes()).hexdigest() for v in out]
    assert sha[0] == sha[1] and by["2.2.0"]["configs"]["original"]["class"] == "identical"
    # croissant.json and the manifest list the feed with its sha256
    man = json.loads((out["2.2.0"] / "manifest.json").read_text())
    croissant = json.loads((out["2.2.0"] / "croissant.json").read_text())
    assert {d["contentUrl"]: d["sha256"] for d in croissant["distribution"]}[feed.FEED_FILE] == \
        man["files"][feed.FEED_FILE] == hashlib.sha256((out["2.2.0"] / feed.FEED_FILE).read_bytes()).hexdigest()


def test_the_card_opens_with_the_measured_score_shift(built):
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages.evaluate_example import evaluate

    root, out = built
    before, after = _config(out["2.1.0"], "default"), _config(out["2.2.0"], "default")
    both = before.merge(after, on="Row Number", suffixes=("_a", "_b"))
    right = sum(is_correct(a, g, lo, hi, t) for a, g, lo, hi, t in zip(
        both["Ground Truth Answer_a"], both["Ground Truth Answer_b"], both["Lower Limit_b"], both["Upper Limit_b"],
        both["Output Type_b"]))
    n = len(both)
    body = (out["2.2.0"] / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    opening = body.split("\n\n")[1]
    assert opening.startswith("**Scores on this release are not comparable with 2.1.0**")
    assert f"scores 100.0% ({n:,}/{n:,}) under 2.1.0 and {100 * right / n:.1f}% ({right:,}/{n:,}) under 2.2.0" in opening
    assert "same grader `ours`" in opening and f"{n - right} predictions change grade" in opening
    assert f"{len(_changed(before, after))} rows of `default` have another label" in opening
    # the same numbers as `evaluate` on the common rows
    project = Project.load(root)
    run = evaluate(project, project.example_predictions, ["2.1.0", "2.2.0"], out_dir=root / "ev", n_boot=100)
    acc = run.report.accuracy.set_index("label_set")
    assert (int(acc.loc["v2.1.0", "correct"]), int(acc.loc["v2.2.0", "correct"])) == (n, right)
    # 2.1.0's card compares with 2.0.0 and says what its example measured
    first = (out["2.1.0"] / "README.md").read_text(encoding="utf-8").split("---\n", 2)[2].split("\n\n")[1]
    assert first.startswith("**Scores on this release are not comparable with 2.0.0**") and "under 2.1.0" in first


def _card_cell(card: str, col: str) -> str:
    lines = [line for line in card.splitlines() if line.startswith(f"| `{col}` |")]
    assert lines, f"column {col!r} is not in the card"
    return "\n".join(lines)


FREE = {"Row Number", "Note ID", "Patient Note", "Question", "Relevant Entities", "Ground Truth Answer", "Lower Limit",
        "Upper Limit", "Ground Truth Explanation", "uid", "instance_key", "Original Ground Truth Answer",
        "Correction IDs", "Derivation", "Proposed Answer", "Proposal", "id", "old_value", "new_value", "rationale",
        "evidence", "scoring_timepoint", "second_opinion", "inputs", "override_reason", "justification",
        "adjudicated_value"}


PER_CALCULATOR = {"Calculator ID", "Calculator Name", "calculator_id", "Guideline Version", "Category", "Output Type"}


def _shown(v) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and v != v):
        return "(null)"
    if isinstance(v, bool):
        return "`true`" if v else "`false`"
    return "(empty)" if str(v) == "" else f"`{v}`"


@pytest.mark.parametrize("version", ["2.1.0", "2.2.0"])
def test_the_card_documents_every_column_and_every_value(built, version):
    _root, out = built
    card = (out[version] / "README.md").read_text(encoding="utf-8")
    calculators = card.split("The calculators:")[1].split("The `corrections` config")[0]
    for config in CONFIGS:
        df = _config(out[version], config)
        for col in df.columns:
            cell = _card_cell(card, col)
            if col in FREE:
                continue
            shown = {_shown(v) for v in df[col].tolist()}
            where = calculators if col in PER_CALCULATOR else cell
            missing = sorted(s for s in shown if (s.strip("`") if col in PER_CALCULATOR else s) not in where)
            assert not missing, (config, col, missing)
    # the calculator table: every calculator with its name, category, output type and definitions
    full = _config(out[version], "full")
    for cid, part in full.groupby("Calculator ID"):
        (line,) = [x for x in card.splitlines() if x.startswith(f"| {cid} | ")]
        assert f"| {part['Calculator Name'].iloc[0]} | {part['Category'].iloc[0]} | {part['Output Type'].iloc[0]} |" in line
        assert all(f"`{g}`" in line for g in part["Guideline Version"])
        assert line.endswith(f"| {len(part)} | {int((_config(out[version], 'default')['Calculator ID'] == cid).sum())} | "
                             f"{int((_config(out[version], 'mini')['Calculator ID'] == cid).sum())} |")
    assert "`policy` (" in _card_cell(card, "Label Source") and "`contributor` (" in _card_cell(card, "Label Source")
    default_cols = len(_config(out[version], "default").columns)
    assert f"`default` and `mini` have {default_cols} columns: the 14 upstream columns + `Label Status`, " \
           "`Explanation Source`" in card
    assert "## How to evaluate" in card and "medcalc-maintained harness lm-eval --release build/release" in card


def test_the_first_55_rows_of_mini_cover_the_calculators(built):
    _root, out = built
    new, old = _config(out["2.2.0"], "mini"), _config(out["2.1.0"], "mini")
    assert new["Calculator ID"].head(55).nunique() == min(55, new["Calculator ID"].nunique())
    assert old["Row Number"].tolist() == sorted(old["Row Number"])  # 2.1.0 as it was published
    assert old["Calculator ID"].head(55).nunique() < 10


def test_the_contracts_check_the_feed_and_every_file(built, tmp_path):
    from medcalc_maintained.contracts.validate import validate
    from medcalc_maintained.project import Project

    root, out = built
    rep = validate(out["2.2.0"], project=Project.load(root))
    assert rep.success, [str(f) for f in rep.blocking]
    bad = tmp_path / "bad"
    shutil.copytree(out["2.2.0"], bad)
    doc = json.loads((bad / feed.FEED_FILE).read_text())
    entry = doc["releases"][-1]
    entry["comparability"] = entry["configs"]["default"]["class"] = "labels-unchanged"
    entry["comparable"] = True  # consistent with the class, inconsistent with the counts
    (bad / feed.FEED_FILE).write_text(json.dumps(doc))
    (bad / "notes.txt").write_text("not a file a release build writes")
    mini_file = bad / "data" / "mini" / PART
    pd.read_parquet(mini_file).sort_values("Row Number").to_parquet(mini_file, index=False)
    man = json.loads((bad / "manifest.json").read_text())
    man["files"] = {p.relative_to(bad).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in bad.rglob("*") if p.is_file() and p.name != "manifest.json"}
    (bad / "manifest.json").write_text(json.dumps(man))
    rep = validate(bad, project=Project.load(root))
    failed = {(f.suite, f.expectation): f.offending for f in rep.blocking}
    assert failed[("release", "expect_column_values_to_be_in_set(classes_consistent)")] == ["item=release 2.2.0"]
    assert failed[("manifest", "expect_column_values_to_be_in_set(known_file)")] == ["path=notes.txt"]
    assert failed[("release", "expect_column_values_to_be_in_set(in_rule_order)")]
    assert ("release", "expect_column_values_to_be_in_set(matches_release)") in failed  # the mini file's new sha256
