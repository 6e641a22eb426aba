"""Release 2.1.0: definition contradictions decided under the declared definition by policy records,
confirmed labels restored to upstream's text, derivations shipped in ``full`` and checked by the
blocking release contract ``label_reproduces_definition``; changelogs computed from the data.

The end-to-end tests of this subject; the fast ones are in tests/release/test_release_2_1.py."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.release import test_release_2_1 as fast_tests
from tests.support.release_support import built_copy, cli

# shared with the fast tests
upstream_labels = fast_tests.upstream_labels


@pytest.fixture(scope="module")
def built(tmp_path_factory, pipeline_project):
    return built_copy(tmp_path_factory, pipeline_project, "2.1.0", "r21")


def _full(out) -> pd.DataFrame:
    return pq.read_table(out / "data" / "full" / "test-00000-of-00001.parquet").to_pandas()


def _validate(root, out) -> tuple[int, str]:
    """The release contracts on ``out`` (without Data Docs, which would double GX's time)."""
    r = cli(root, "validate", "--no-docs", str(out))
    return r.exit_code, r.output


# builds release 2.1.0 (module fixture `built`)
def test_release_ships_the_harmonized_labels_with_their_derivations(built, upstream_labels):
    root, out = built
    full = _full(out).set_index("Row Number")
    for uid in (997, 1003, 739):
        assert full.at[uid, "Ground Truth Answer"] == upstream_labels[uid]
        doc = json.loads(full.at[uid, "Derivation"])
        assert full.at[uid, "Derivation Status"] == doc["status"] == "reproduced"
    confirmed = full[full["Label Status"] == "confirmed"]
    assert [u for u, lab in confirmed["Ground Truth Answer"].items() if lab != upstream_labels[u]] == []
    assert full["Derivation"][full["Label Status"] == "unverified"].isna().all()
    log = (out / "CHANGELOG.md").read_text(encoding="utf-8")
    section = log.split("### Definition harmonization")[1].split("\n### ")[0]
    assert "| 997 |" in section and "389 → 290" in section and "cdc_2016" in section
    assert "Confirmed labels restored to upstream's value (332)" in log


# GX over the whole release, twice
def test_the_release_contract_passes_and_a_tampered_derivation_breaks_it_naming_the_row(built, tmp_path):
    root, out = built
    code, output = _validate(root, out)
    assert code == 0, output
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    path = bad / "data" / "full" / "test-00000-of-00001.parquet"
    table = pq.read_table(path)
    df = table.to_pandas()
    i = int(df.index[df["Row Number"] == 997][0])
    doc = json.loads(df.at[i, "Derivation"])
    doc["definition"] = "cdc_2016"  # the shipped 290 is not what CDC-2016 gives: 389
    df.at[i, "Derivation"] = json.dumps(doc)
    pq.write_table(pa.Table.from_pandas(df, schema=table.schema, preserve_index=False), path)
    code, output = _validate(root, bad)
    assert code != 0
    line = next(x for x in output.splitlines() if "label_reproduces_definition" in x)
    assert line.startswith("BLOCKING") and "uid 997" in line
