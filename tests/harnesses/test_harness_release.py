"""The harness adapters on a local release directory (what `release build` writes; offline), and the
one prompt and decoding every adapter hands its harness.

The release here is a small one made in the test: a card with front matter (``version``,
``configs``), ``manifest.json`` with the sha256 of each data file, and parquet configs holding real
upstream rows. The harness packages run for real (lm-eval's task loading and prompt building, Inspect
with its ``mockllm`` model, verifiers' environment); each test skips when its extra is missing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading.prompts import SYSTEM_PROMPT
from medcalc_maintained.harnesses.common import (
    DATASET,
    MAX_NEW_TOKENS,
    load_rows,
    local_release,
    resolve_release,
)
from medcalc_maintained.harnesses.lm_eval_task import write_task_dir

COLUMNS = ["Row Number", "Calculator ID", "Calculator Name", "Category", "Output Type", "Note ID", "Patient Note",
           "Question", "Ground Truth Answer", "Lower Limit", "Upper Limit"]
PARQUET = "data/{config}/test-00000-of-00001.parquet"


def make_release(root: Path, rows: pd.DataFrame, version: str = "2.2.0") -> Path:
    """A release directory as `release build` lays it out: configs default (rows 0-2), full (all)
    and mini (rows 0-1), the card's front matter, and a manifest with every file's sha256."""
    parts = {"default": rows.iloc[:3], "full": rows, "mini": rows.iloc[:2]}
    files = {}
    for config, frame in parts.items():
        rel = PARQUET.format(config=config)
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        frame.assign(**{"Label Status": "verified"}).to_parquet(root / rel, index=False)
        files[rel] = hashlib.sha256((root / rel).read_bytes()).hexdigest()
    front = {"license": "cc-by-sa-4.0", "version": version,
             "configs": [{"config_name": c, **({"default": True} if c == "default" else {}),
                          "data_files": [{"split": "test", "path": PARQUET.format(config=c)}]} for c in parts]}
    (root / "README.md").write_text(f"---\n{yaml.safe_dump(front, sort_keys=False)}---\n# card\n", encoding="utf-8")
    files["README.md"] = hashlib.sha256((root / "README.md").read_bytes()).hexdigest()
    manifest = {"version": version, "tag": f"v{version}", "name": DATASET, "files": files,
                "releases": ["1.0.0", "2.0.0", "2.1.0", version]}
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return root


@pytest.fixture
def upstream_rows(v1_test_csv) -> pd.DataFrame:
    """Five real upstream rows of five calculators, as text columns (the release's types)."""
    data = pd.read_csv(v1_test_csv, dtype=str, keep_default_na=False)
    picked = data.drop_duplicates("Calculator ID").head(5)[COLUMNS].reset_index(drop=True)
    return picked.assign(**{"Row Number": picked["Row Number"].astype("int64")})


@pytest.fixture
def release(tmp_path, upstream_rows) -> Path:
    return make_release(tmp_path / "release", upstream_rows)


def test_a_local_release_names_its_version_and_reads_offline(release, upstream_rows, monkeypatch):
    monkeypatch.chdir(release.parent)
    rel = resolve_release("release")
    assert (rel.local, rel.version, rel.tag, rel.revision) == (True, "2.2.0", "v2.2.0", None)
    assert rel.path == str(release.resolve()) and rel.configs == ("default", "full", "mini")
    assert rel.metadata()["release"] == "2.2.0" and rel.metadata()["source"] == str(release.resolve())
    assert resolve_release("release", "v2.2").version == "2.2.0"  # the minor line's first release
    assert resolve_release(dataset=str(release)).local  # HELM's dataset_path form
    rows = load_rows("mini", rel)
    assert [r["Row Number"] for r in rows] == upstream_rows["Row Number"].head(2).tolist()
    assert rows[0]["Patient Note"] == upstream_rows["Patient Note"].iloc[0]
    hub = resolve_release(None, "v2.0")
    assert (hub.local, hub.path, hub.revision, hub.source) == (False, DATASET, "v2.0", f"{DATASET}@v2.0")


def test_what_is_not_a_release_is_named_with_what_is_missing(release, tmp_path, monkeypatch):
    with pytest.raises(DataError, match=r"absent: no such release directory; a release is built by .*release build"):
        local_release(tmp_path / "absent")
    monkeypatch.chdir(tmp_path)  # a relative path names where it was looked for (Inspect runs a task file elsewhere)
    with pytest.raises(DataError, match=rf"^absent: no such release directory \({tmp_path}/absent: a relative path"):
        local_release("absent")
    (tmp_path / "src").mkdir()
    with pytest.raises(DataError, match=r"src: is not a release directory: README.md and manifest.json missing"):
        local_release(tmp_path / "src")
    with pytest.raises(DataError, match=r"holds release 2.2.0 \(v2.2.0\), not v2.0"):
        local_release(release, "v2.0")
    with pytest.raises(ValueError, match="no release given"):
        resolve_release()
    with pytest.raises(ValueError, match="'main' is not a release tag"):
        resolve_release(None, "main")
    manifest = json.loads((release / "manifest.json").read_text())
    (release / "manifest.json").write_text(json.dumps({**manifest, "version": "2.1.0"}))
    with pytest.raises(DataError, match=r"manifest.json, field 'version': version '2.1.0' is not the card's '2.2.0'"):
        local_release(release)
    (release / "manifest.json").write_text(json.dumps(manifest))
    mini = release / PARQUET.format(config="mini")
    mini.write_bytes(mini.read_bytes() + b"\0")
    with pytest.raises(DataError, match=r"mini/test-00000-of-00001.parquet: sha256 .* manifest.json records"):
        load_rows("mini", local_release(release))
    card = (release / "README.md").read_text()
    (release / "README.md").write_text(card.replace("version: 2.2.0\n", ""))
    with pytest.raises(DataError, match=r"README.md, field 'version': the card's front matter has no `version`"):
        local_release(release)


def test_the_lm_eval_task_directory_of_a_local_release(release, tmp_path):
    files = write_task_dir(tmp_path / "tasks", release=release)
    text = (tmp_path / "tasks" / "medcalc_maintained_mini.yaml").read_text()
    assert "revision:" not in text and "download_mode: force_redownload" in text and "run lm_eval with --apply_chat_template (required)" in text
    body = yaml.safe_load("\n".join(ln for ln in text.splitlines() if "!function" not in ln))
    assert body["dataset_path"] == str(release.resolve()) and body["dataset_name"] == "mini"
    assert body["description"] == SYSTEM_PROMPT
    assert body["generation_kwargs"] == {"until": [], "do_sample": False, "temperature": 0.0,
                                         "max_gen_toks": MAX_NEW_TOKENS}
    assert body["metadata"]["release"] == "2.2.0" and body["metadata"]["release_tag"] == "v2.2.0"
    assert len(files) == 7  # three configs x two prompt variants, and utils.py
    hub = write_task_dir(tmp_path / "hub", "v2.0")[1].read_text()
    assert f"dataset_path: \"{DATASET}\"" in hub and "  revision: v2.0" in hub
    with pytest.raises(DataError, match="is not a release directory"):
        write_task_dir(tmp_path / "nothing", release=tmp_path / "tasks")
    assert not (tmp_path / "nothing").exists()
