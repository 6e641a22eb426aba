"""`harness helm-model`: HELM's configuration of a local checkpoint, with the dtype stated, and the
HELM scenario's `limit` (the first rows, as lm-eval's --limit). Checkpoints here are the two JSON
files the command reads, made in the test; HELM itself reads the files in the slow real-model test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.harnesses.helm_model import FILES, model_files, write_model_dir
from medcalc_maintained.harnesses.helm_scenario import check_limit
from tests.support.paths import ROOT
from tests.support.release_support import cli


def checkpoint(path: Path, config: dict | None = None, tokenizer: dict | None = None) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(json.dumps({"max_position_embeddings": 8192} if config is None else config))
    (path / "tokenizer_config.json").write_text(json.dumps(
        {"eos_token": "<|im_end|>", "bos_token": {"content": "<|im_start|>"}, "model_max_length": 10 ** 30}
        if tokenizer is None else tokenizer))
    return path


def test_the_files_register_the_checkpoint_in_the_dtype_asked_for(tmp_path):
    model = checkpoint(tmp_path / "SmolLM2-135M")
    files = {name: yaml.safe_load(text) for name, text in model_files(model, dtype="float32").items()}
    assert sorted(files) == sorted(FILES)
    (deployment,) = files["model_deployments.yaml"]["model_deployments"]
    assert deployment["name"] == deployment["model_name"] == deployment["tokenizer_name"] == "local/SmolLM2-135M"
    assert deployment["max_sequence_length"] == 8192
    assert deployment["client_spec"]["args"] == {"pretrained_model_name_or_path": str(model.resolve()),
                                                 "torch_dtype": "torch.float32"}
    (tokenizer,) = files["tokenizer_configs.yaml"]["tokenizer_configs"]
    assert (tokenizer["end_of_text_token"], tokenizer["prefix_token"]) == ("<|im_end|>", "<|im_start|>")
    (meta,) = files["model_metadata.yaml"]["models"]
    assert meta["name"] == "local/SmolLM2-135M" and meta["access"] == "open"
    named = model_files(model, name="org/small", dtype="bfloat16")
    assert "torch.bfloat16" in named["model_deployments.yaml"] and "name: org/small" in named["model_deployments.yaml"]


def test_a_stated_tokenizer_length_is_the_fallback_and_no_length_is_refused(tmp_path):
    model = checkpoint(tmp_path / "a", config={}, tokenizer={"eos_token": "e", "bos_token": "b", "model_max_length": 2048})
    assert "max_sequence_length: 2048" in model_files(model)["model_deployments.yaml"]
    model = checkpoint(tmp_path / "b", config={}, tokenizer={"eos_token": "e", "bos_token": "b",
                                                             "model_max_length": 10 ** 30})
    with pytest.raises(DataError, match="max_position_embeddings.*context length"):
        model_files(model)
    model = checkpoint(tmp_path / "c", tokenizer={"eos_token": "e"})
    with pytest.raises(DataError, match="tokenizer_config.json.*'bos_token'"):
        model_files(model)
    (tmp_path / "d").mkdir()
    with pytest.raises(DataError, match="config.json.*missing"):
        model_files(tmp_path / "d")
    with pytest.raises(ValueError, match="dtype 'int8'"):
        model_files(tmp_path / "a", dtype="int8")
    with pytest.raises(ValueError, match="ORGANIZATION/MODEL"):
        model_files(tmp_path / "a", name="no-slash")


def test_the_folder_is_replaced_whole_with_helms_cache_and_nothing_else(tmp_path):
    model = checkpoint(tmp_path / "m")
    out = tmp_path / "prod_env"
    assert write_model_dir(out, model) == [out / f for f in FILES]
    (out / "cache").mkdir()
    (out / "cache" / "local.sqlite").write_bytes(b"cached completions of the old weights")
    with pytest.raises(DataError, match="not empty.*--force"):
        write_model_dir(out, model, dtype="bfloat16")
    write_model_dir(out, model, dtype="bfloat16", force=True)
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)  # HELM's request cache went with the old files
    assert "torch.bfloat16" in (out / "model_deployments.yaml").read_text()
    (out / "credentials.conf").write_text("key")
    with pytest.raises(DataError, match="not an earlier output of `harness helm-model`.*credentials.conf"):
        write_model_dir(out, model, force=True)


def test_the_command_writes_the_folder_and_says_what_to_run(tmp_path):
    model = checkpoint(tmp_path / "m")
    r = cli(ROOT, "harness", "helm-model", str(model), "--out", str(tmp_path / "env"), "--dtype", "float16")
    assert r.exit_code == 0, r.output
    assert "model=local/m" in " ".join(r.output.split()) and (tmp_path / "env" / "model_deployments.yaml").is_file()
    r = cli(ROOT, "harness", "helm-model", str(tmp_path / "missing"), "--out", str(tmp_path / "env2"))
    assert r.exit_code != 0 and "is not a directory" in r.output and not (tmp_path / "env2").exists()


@pytest.mark.parametrize("given, rows", [(None, None), ("", None), ("20", 20), (3, 3), (" 7 ", 7)])
def test_limit_takes_a_positive_row_count(given, rows):
    assert check_limit(given) == rows


@pytest.mark.parametrize("given", ["0", "-1", "2.5", "all", 0])
def test_limit_refuses_anything_else(given):
    with pytest.raises(ValueError, match="not a positive whole number"):
        check_limit(given)
