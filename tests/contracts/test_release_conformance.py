"""Contract view ``conformance`` (issue 50): a release's conformance vectors and errata read back and
checked against each other and against the reference calculators; each tampering is caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from medcalc_maintained.conformance import load_vectors
from medcalc_maintained.conformance.vectors import document
from medcalc_maintained.contracts.release_conformance import conformance_view
from medcalc_maintained.release.layout import CONFORMANCE_FILES

ROOT = Path(__file__).resolve().parents[2]
ERRATA = ROOT / "data" / "errata"


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """A release folder with the committed errata and the packaged vectors, as stage errata writes them."""
    folder = tmp_path / "release" / "conformance"
    folder.mkdir(parents=True)
    (folder / "vectors.json").write_text(json.dumps(document(load_vectors())))
    for name in ("errata.json", "errata.md"):
        shutil.copyfile(ERRATA / name, folder / name)
    return tmp_path / "release"


FULL = pd.DataFrame({"Calculator ID": sorted(v.calculator_id for v in load_vectors())})


def _resealed(doc: dict) -> dict:
    """``doc`` with the sha256 of the vectors it now holds (as a careful forger would write it)."""
    from medcalc_maintained.conformance.vectors import digest_of, parse_doc

    return {**doc, "vectors_sha256": digest_of([parse_doc(c, "test") for c in doc["calculators"]])}


def test_malformed_files_are_problems_not_crashes(release):
    (release / CONFORMANCE_FILES[0]).write_text(json.dumps({"calculators": ["a"]}))
    (release / CONFORMANCE_FILES[1]).write_text("{}")
    view = conformance_view(release, FULL, "2.4.1")
    assert not view["valid"].iloc[0] and not view["valid"].iloc[1] and not view["consistent"].iloc[2]
    assert "not the errata layout" in view["problem"].iloc[1]


def _row(view: pd.DataFrame, rel: str) -> dict:
    return view.set_index("path").loc[rel].to_dict()


def test_the_shipped_files_pass(release):
    view = conformance_view(release, FULL, "2.4.1")
    assert list(view["path"]) == list(CONFORMANCE_FILES)
    assert view[["present", "valid", "consistent"]].all().all(), view.to_dict("records")


def test_before_2_4_1_there_is_nothing_to_check(release):
    assert conformance_view(release, FULL, "2.4.0").empty


def test_an_edited_table_a_wrong_vector_and_an_unadjudicated_erratum_are_caught(release):
    md = release / CONFORMANCE_FILES[2]
    md.write_text(md.read_text().replace("fixed-in-ours", "open", 1))
    assert not _row(conformance_view(release, FULL, "2.4.1"), CONFORMANCE_FILES[2])["consistent"]

    vec = release / CONFORMANCE_FILES[0]
    doc = json.loads(vec.read_text())
    case = next(c for c in doc["calculators"] if c["calculator_id"] == 4)["cases"][0]  # CHA2DS2-VASc: an integer
    case["expected"] = case["expected"] + 1
    vec.write_text(json.dumps(doc))  # its sha256 no longer that of what it holds
    row = _row(conformance_view(release, FULL, "2.4.1"), CONFORMANCE_FILES[0])
    assert not row["valid"] and "is not the sha256 of the vectors it holds" in row["problem"]
    vec.write_text(json.dumps(_resealed(doc)))  # re-hashed: the reference calculators still disagree
    row = _row(conformance_view(release, FULL, "2.4.1"), CONFORMANCE_FILES[0])
    assert row["valid"] and not row["consistent"]
    assert row["problem"].startswith(f"calculator 4 case {case['id']}: ours gives")

    err = release / CONFORMANCE_FILES[1]
    doc = json.loads(err.read_text())
    doc["implementations"][0]["errata"][0]["status"] = "unreviewed"
    err.write_text(json.dumps(doc))
    row = _row(conformance_view(release, FULL, "2.4.1"), CONFORMANCE_FILES[1])
    assert not row["valid"] and "status 'unreviewed' is not adjudicated" in row["problem"]


def test_a_missing_calculator_and_a_missing_file_are_caught(release):
    vec = release / CONFORMANCE_FILES[0]
    doc = json.loads(vec.read_text())
    doc["calculators"] = [c for c in doc["calculators"] if c["calculator_id"] != 69]
    vec.write_text(json.dumps(_resealed(doc)))
    row = _row(conformance_view(release, FULL, "2.4.1"), CONFORMANCE_FILES[0])
    assert not row["valid"] and row["problem"] == "no vectors for calculator(s) [69] of full"
    (release / CONFORMANCE_FILES[2]).unlink()
    row = _row(conformance_view(release, FULL, "2.4.1"), CONFORMANCE_FILES[2])
    assert not row["present"] and row["problem"] == "missing"
