"""A built release loads with `datasets.load_dataset(<dir>)` without the library discarding the
card's `dataset_info` ("The `splits` field in YAML is malformed ..."), and the card's sizes are the
ones `datasets` records."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app

runner = CliRunner()

# one process per load so the library's own logging reaches our stderr exactly as a user sees it
LOADER = r"""
import json, sys
import datasets
root, cache = sys.argv[1], sys.argv[2]
out = {}
for config in sys.argv[3:]:
    builder = datasets.load_dataset_builder(root, config, cache_dir=cache)
    builder.download_and_prepare()
    ds = builder.as_dataset(split="test")
    out[config] = {"rows": len(ds), "num_bytes": builder.info.splits["test"].num_bytes}
print(json.dumps(out))
"""


def test_built_release_loads_without_the_malformed_splits_warning(project_root, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDCALC_ROOT", str(project_root))
    release = tmp_path / "release"
    res = runner.invoke(app, ["release", "build", "--out", str(release), "--version", "2.0.0"])
    assert res.exit_code == 0, res.output
    front = yaml.safe_load((release / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    info = {d["config_name"]: d for d in front["dataset_info"]}
    configs = sorted(c for c, d in info.items() if d["splits"][0]["num_examples"] > 0)
    assert set(configs) == {"default", "full", "original", "corrections", "mini"}  # 2.0.0: none empty

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(HF_HOME=str(tmp_path / "hf-home"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HUB_DISABLE_TELEMETRY="1", HF_DATASETS_DISABLE_PROGRESS_BARS="1")
    proc = subprocess.run([sys.executable, "-c", LOADER, str(release), str(tmp_path / "cache"), *configs],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "Ignoring part of dataset_info" not in proc.stderr, proc.stderr
    assert "malformed" not in proc.stderr, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    for config in configs:
        (split,) = info[config]["splits"]
        assert split["name"] == "test" and split["num_examples"] == loaded[config]["rows"]
        # the declared Arrow size is what `datasets` measures when it writes the split (it adds a
        # validity bitmap to some columns: a few hundred bytes of megabytes)
        assert split["num_bytes"] == pytest.approx(loaded[config]["num_bytes"], rel=1e-3)
        assert info[config]["dataset_size"] == split["num_bytes"]

    # the release contracts still hold on this build (Data Docs are not this test's subject)
    val = runner.invoke(app, ["validate", "--no-docs", str(release)])
    assert val.exit_code == 0, val.output
