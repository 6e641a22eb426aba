"""Release 2.4.0 as a user gets it: config ``inputs`` built from the committed ledger, checked by the release
contracts and loaded with ``datasets.load_dataset`` from the card's front matter. ``repro_project`` is read-only;
this test builds in a copy of it in its tmp_path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pandas as pd
import pyarrow.parquet as pq

from tests.support.release_support import cli

# one process, as a user runs it: each config of the built directory through `datasets`, saved as parquet
LOADER = r"""
import sys
import datasets
root, cache, out, snippet = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
for config in ("inputs", "full"):
    ds = datasets.load_dataset(root, config, split="test", cache_dir=cache)
    print(config, ds.features["quote_start"].dtype if config == "inputs" else "", len(ds))
    ds.to_parquet(f"{out}/{config}.parquet")


def load_dataset(repo, config, revision):  # the card's calls, answered by the built directory
    return datasets.load_dataset(root, config, cache_dir=cache)


exec(open(snippet).read())  # the card's own example, as written
print("card example ran")
"""


def test_2_4_ships_the_certified_inputs_as_a_config_that_loads_and_is_checked(repro_project, tmp_path):
    copy = tmp_path / "project"
    shutil.copytree(repro_project, copy, ignore=shutil.ignore_patterns("build"))
    out = copy / "build" / "v2.4.0"
    r = cli(copy, "release", "build", "--out", str(out), "--version", "2.4.0")
    assert r.exit_code == 0, r.output
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "data/inputs/test-00000-of-00001.parquet" in manifest["files"]
    feed = json.loads((out / "releases.json").read_text(encoding="utf-8"))
    entries = {e["version"]: e for e in feed["releases"]}
    assert entries["2.4.0"]["configs"]["inputs"]["class"] == "first"  # nothing to compare with
    assert "inputs" not in entries["2.3.2"]["configs"]
    assert entries["2.4.0"]["configs"]["default"]["class"] == "identical"  # no label changes

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1")
    loaded = tmp_path / "loaded"
    loaded.mkdir()
    card = (out / "README.md").read_text(encoding="utf-8")
    example = card.split("The `inputs` config is what each verified label")[1].split("```python\n")[1].split("```")[0]
    assert 'load_dataset("org/medcalc-maintained", "inputs", revision="v2.4.0")' in example
    (tmp_path / "example.py").write_text(example, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-c", LOADER, str(out), str(tmp_path / "cache"), str(loaded),
                           str(tmp_path / "example.py")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "inputs int64" in proc.stdout  # a quote's offsets are integers, null without a quote
    assert "card example ran" in proc.stdout
    inputs = pd.read_parquet(loaded / "inputs.parquet", dtype_backend="numpy_nullable")
    full = pd.read_parquet(loaded / "full.parquet").set_index("Row Number")

    # every input of every verified row's `Evidence`, in order: counted from the JSON, not from the config
    docs = {int(u): json.loads(e)["inputs"] for u, e in full["Evidence"].items() if isinstance(e, str)}
    assert len(docs) == int((full["Label Status"] != "unverified").sum()) and len(docs) >= 887
    assert len(inputs) == sum(len(d) for d in docs.values())
    got = inputs.groupby("Row Number", sort=False)["name"].apply(list).to_dict()
    assert got == {u: [d["name"] for d in ds] for u, ds in docs.items() if ds}
    # every quote is its note's (or question's) text at its offsets
    quoted = inputs[inputs["quote_text"].notna()]
    assert len(quoted) > 0.6 * len(inputs)
    for r in quoted.itertuples(index=False):
        text = full.at[r[0], "Question" if r.quote_in == "question" else "Patient Note"]
        assert text[int(r.quote_start):int(r.quote_end)] == r.quote_text, (r[0], r.name)
    # the rows a user joins on are `full`'s, with their statuses
    statuses = full.loc[inputs["Row Number"], "Evidence Status"].tolist()
    assert inputs["Evidence Status"].tolist() == statuses
    cg = inputs[(inputs["Row Number"] == 1)].set_index("name")  # Cockcroft-Gault: an 87-year-old man, 48 kg
    assert json.loads(cg.at["age", "value"]) == 87 and json.loads(cg.at["weight", "value"]) == 48.0
    assert cg.at["weight", "unit"] == "kg" and cg.at["weight", "verdict"] == "supports"

    assert f"{len(inputs):,} inputs of {len(docs):,} rows" in card

    val = cli(copy, "validate", "--no-docs", str(out))
    assert val.exit_code == 0, val.output

    # a config whose quote is moved and whose input is dropped is blocked, by name
    path = out / "data" / "inputs" / "test-00000-of-00001.parquet"
    table = pq.read_table(path).to_pandas()
    at = table.index[table["quote_start"].notna()][0]
    table.loc[at, "quote_start"] = table.loc[at, "quote_start"] + 1
    table = table.drop(index=table.index[-1])
    pq.write_table(pq.read_table(path).schema.empty_table().from_pandas(table, schema=pq.read_schema(path),
                                                                         preserve_index=False), path)
    val = cli(copy, "validate", "--no-docs", str(out))
    assert val.exit_code != 0
    assert "(quote_is_text)" in val.output and "(matches_evidence)" in val.output
