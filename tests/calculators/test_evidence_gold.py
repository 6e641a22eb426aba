"""The evidence gold set v2 (tests/data/evidence_gold_v2/): sealed by its committed hash, drawn and
labelled as its README says. The verifier's scores on it are printed by benchmarks/evidence_gold.py."""

from __future__ import annotations

import hashlib

import pandas as pd
import pytest

from tests.support.paths import TESTS

GOLD = TESTS / "data" / "evidence_gold_v2"


@pytest.fixture(scope="module")
def parts() -> dict[str, pd.DataFrame]:
    return {p: pd.read_csv(GOLD / f"{p}.csv", dtype=str, keep_default_na=False) for p in PARTS}


PARTS = ("dev", "sealed", "dev-extension", "dev-extension-2", "dev-extension-3", "sealed-2")


@pytest.mark.parametrize("seal, part", [("SEALED.sha256", "sealed.csv"), ("SEALED-2.sha256", "sealed-2.csv")])
def test_sealed_part_has_its_committed_hash(seal, part):
    digest, name = (GOLD / seal).read_text().split()
    assert name == part
    assert hashlib.sha256((GOLD / part).read_bytes()).hexdigest() == digest


def test_parts_split_by_row_and_large_enough(parts):
    dev, sealed = parts["dev"], parts["sealed"]
    assert len(dev) + len(sealed) >= 800
    for a in PARTS:  # every part holds rows of its own: no row of the sealed part is read for tuning
        for b in PARTS[PARTS.index(a) + 1:]:
            assert not set(parts[a]["uid"]) & set(parts[b]["uid"]), (a, b)
    rows = dev["uid"].nunique() + sealed["uid"].nunique()
    assert sealed["uid"].nunique() / rows >= 0.40


def test_labels_are_in_their_value_sets_and_quotes_are_the_notes(parts, v1_test_csv):
    notes = dict(zip(*pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)[["Row Number", "Patient Note"]]
                     .T.values))
    for name, df in parts.items():
        assert set(df["supports"]) <= {"yes", "no"}, name
        verdicts = {"supports", "contradicts", "not_addressed"}  # an extension keeps readers' verdicts apart as `disputed`
        assert set(df["verdict"]) <= verdicts | ({"disputed"} if name.startswith("dev-extension") else set()), name
        if name.startswith("dev-extension"):
            assert all(v != "disputed" or a != b for v, a, b in zip(df["verdict"], df["verdict_a"], df["verdict_b"])), name
        assert df["pair_id"].is_unique
        for r in df.itertuples():
            if r.quote:
                assert notes[r.uid][int(r.start):int(r.end)] == r.quote, (name, r.pair_id)
            if r.supports_a == r.supports_b:
                assert r.supports == r.supports_a, (name, r.pair_id)  # adjudication only where readers differ
            else:
                assert r.adjudication, (name, r.pair_id)
