"""evaluate against release directories and versions, --subset, and hostile prediction files."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading.predictions import read_predictions
from medcalc_maintained.scoring.evaluate import evaluate
from medcalc_maintained.scoring.labels import resolve_against, subset_uids

CURB = "CURB-65 Score for Pneumonia Severity"


def _row(uid: int, label: str, status: str) -> dict:
    return {"Row Number": str(uid), "Calculator ID": "45", "Calculator Name": CURB, "Output Type": "integer",
            "Relevant Entities": "{}", "Ground Truth Answer": label, "Lower Limit": label, "Upper Limit": label,
            "Label Status": status}


def release_dir(root: Path, version: str, labels: dict[int, str], default: list[int], configs: dict) -> Path:
    """A small built release: `full` with every row, `default` with ``default`` rows, and the
    manifest with the sha256 of each file (evaluate reads only a release that matches it)."""
    from medcalc_maintained.core.readers import sha256_file

    root.mkdir(parents=True)
    full = [_row(u, v, "unverified" if u not in default else "confirmed") for u, v in labels.items()]
    files = {}
    for name, uids in {"full": list(labels), "default": default, **configs}.items():
        (root / "data" / name).mkdir(parents=True)
        part = root / "data" / name / "test-00000-of-00001.parquet"
        pd.DataFrame([r for r in full if int(r["Row Number"]) in uids], columns=list(full[0])).to_parquet(part)
        files[str(part.relative_to(root))] = sha256_file(part)
    (root / "manifest.json").write_text(json.dumps({"version": version, "files": files}))
    return root


@pytest.fixture
def two_releases(tmp_path):
    # old: 6 rows, all labelled; new: rows 1-4 labelled (2 -> 3, 4 -> N/A), 5 and 6 unlabelled
    old = release_dir(tmp_path / "old", "1.0.0", {1: "1", 2: "2", 3: "0", 4: "4", 5: "1", 6: "2"},
                      [1, 2, 3, 4, 5, 6], {})
    new = release_dir(tmp_path / "new", "2.0.0", {1: "1", 2: "3", 3: "0", 4: "N/A", 5: "1", 6: "2"},
                      [1, 2, 3, 4], {"mini": [1, 2, 5]})
    preds = tmp_path / "p.jsonl"
    # answers: 1 right under both; 2 answers the old label; 3 wrong (0 -> 4, another CURB-65 band);
    # 4 abstains; 5 right (old only labels it); 6 has no prediction; 99 is in neither release
    preds.write_text("".join(json.dumps(r) + "\n" for r in [
        {"uid": 1, "output": "<answer>1</answer>"}, {"uid": 2, "output": "<answer>2</answer>"},
        {"uid": 3, "output": "The score is 4. <answer>4</answer>"}, {"uid": 4, "answer": "N/A"},
        {"uid": 5, "output": "1"}, {"uid": 99, "output": "1"}]))
    return old, new, preds


def test_release_directories_hand_counted(two_releases, tmp_path):
    old, new, preds = two_releases
    project = None  # directories need no project
    sources = resolve_against(project, [f"old={old}", str(new)])
    assert [s.name for s in sources] == ["old", "new"]
    report = evaluate(preds, sources, n_boot=500, seed=0)
    acc = report.accuracy.set_index("label_set")
    # old: scored 1..5 (6 has no prediction, 99 is in no release); correct 1, 2, 5 -> 3/5
    assert (acc.loc["old", "n"], acc.loc["old", "correct"]) == (5, 3)
    assert acc.loc["old", ["skipped_no_prediction", "skipped_unlabelled_in_this_version",
                           "skipped_not_in_this_label_set"]].tolist() == [1, 0, 1]
    # new: scored 1..4; correct 1 and 4 (N/A) -> 2/4; 5 is unlabelled in new; 99 not in it
    assert (acc.loc["new", "n"], acc.loc["new", "correct"]) == (4, 2)
    assert acc.loc["new", ["skipped_no_prediction", "skipped_unlabelled_in_this_version",
                           "skipped_not_in_this_label_set"]].tolist() == [0, 1, 1]
    # common rows 1..4: old right on 1, 2; new right on 1, 4 -> flips 2 and 4, McNemar 1 vs 1
    assert report.n_common == 4 and sorted(report.flips["uid"]) == [2, 4]
    (comp,) = report.comparisons.to_dict("records")
    assert (comp["a_only"], comp["b_only"], comp["mcnemar_p"]) == (1, 1, 1.0)
    # severity: uid 3 answers 4 for a CURB-65 of 0 (home -> hospital: L3) under both; uid 2's 2
    # for a label 3 under new (another band); old's abstention on 4 replaces a value
    assert acc.loc["old", "severe_errors"] == 2 and acc.loc["new", "severe_errors"] == 2
    per_status = report.per_status.set_index(["rows", "label_set", "label_status"])
    assert per_status.loc[("own", "new", "confirmed"), "n"] == 4


def test_subset_restricts_and_refuses_unknown(two_releases):
    old, new, preds = two_releases
    sources = resolve_against(None, [str(old), str(new)])
    uids, notes = subset_uids(sources, "mini")
    assert uids == {1, 2, 5} and any("old have no 'mini'" in n for n in notes)
    report = evaluate(preds, sources, n_boot=500, seed=0, subset=uids)
    acc = report.accuracy.set_index("label_set")
    assert (acc.loc["old", "n"], acc.loc["old", "correct"]) == (3, 3)  # 1, 2, 5
    assert (acc.loc["new", "n"], acc.loc["new", "correct"]) == (2, 1)  # 1, 2 (5 unlabelled)
    with pytest.raises(DataError, match="config 'nope' is in none"):
        subset_uids(sources, "nope")


def test_subset_empty_in_one_release_scores_the_rows_of_the_other(two_releases, tmp_path):
    """Release 1.0.0's `mini` is empty: `--subset mini` scores the mini rows of the release that
    has them under both versions, and says so (it used to find no row at all)."""
    _, new, preds = two_releases
    old = release_dir(tmp_path / "old-empty-mini", "1.0.0", {1: "1", 2: "2", 3: "0", 4: "4", 5: "1", 6: "2"},
                      [1, 2, 3, 4, 5, 6], {"mini": []})
    sources = resolve_against(None, [f"old={old}", f"new={new}"])
    uids, notes = subset_uids(sources, "mini")
    assert uids == {1, 2, 5}
    assert any("old has an empty 'mini' config; scored on the 3 'mini' rows of new" in n for n in notes)
    report = evaluate(preds, sources, n_boot=500, seed=0, subset=uids, notes=notes)
    acc = report.accuracy.set_index("label_set")
    assert (acc.loc["old", "n"], acc.loc["old", "correct"]) == (3, 3)  # 1, 2, 5 answer the old labels
    assert (acc.loc["new", "n"], acc.loc["new", "correct"]) == (2, 1)  # 1 right, 2 wrong; 5 unlabelled
    # every release empty: a clear refusal, not "no prediction uid is labelled"
    alone = resolve_against(None, [f"old={old}"])
    with pytest.raises(DataError, match="config 'mini' has no rows in any of the --against releases"):
        subset_uids(alone, "mini")


def test_nan_and_infinity_are_unparsable_never_abstentions(tmp_path):
    old = release_dir(tmp_path / "r", "2.0.0", {1: "N/A", 2: "N/A", 3: "N/A", 4: "N/A"}, [1, 2, 3, 4], {})
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"uid": 1, "output": NaN}\n{"uid": 2, "output": Infinity}\n'
                     '{"uid": 3, "output": "<answer>nan</answer>"}\n{"uid": 4, "output": "N/A"}\n')
    report = evaluate(preds, resolve_against(None, [str(old)]), n_boot=500, seed=0)
    graded = report.graded.set_index("uid")
    assert graded.loc[[1, 2, 3], "status"].tolist() == ["unparsable"] * 3
    assert graded.loc[4, "status"] == "correct"


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_long_lines_are_refused_fast(tmp_path, suffix):
    path = tmp_path / f"p{suffix}"
    big = "1" * 5_000_000
    if suffix == ".csv":
        path.write_text(f"uid,output\n1,2\n2,{big}\n")
    else:
        path.write_text(json.dumps({"uid": 1, "output": "2"}) + "\n" + json.dumps({"uid": 2, "output": big}) + "\n")
    t = time.monotonic()
    with pytest.raises(DataError, match="line [23]") as info:
        read_predictions(path, max_line_bytes=1_048_576)
    assert time.monotonic() - t < 2 and str(path) in str(info.value)
    # under the limit, a few-MB untagged output is graded unparsable quickly
    t = time.monotonic()
    preds = read_predictions(path, max_line_bytes=10_000_000)
    labels = pd.DataFrame([{"uid": u, "Ground Truth Answer": "2", "Lower Limit": "2", "Upper Limit": "2",
                            "Output Type": "integer", "Calculator Name": CURB} for u in (1, 2)])
    report = evaluate(preds, {"x": labels}, n_boot=500, seed=0)
    assert report.graded.set_index("uid")["status"].tolist() == ["correct", "unparsable"]
    assert time.monotonic() - t < 5


def test_csv_predictions(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text('uid,answer\n1,"<answer>3</answer>"\n2,N/A\n')
    assert read_predictions(path) == {1: "<answer>3</answer>", 2: "N/A"}
    path.write_text("uid,answer\nx,3\n")
    with pytest.raises(DataError, match="line 2: uid must be an integer"):
        read_predictions(path)
