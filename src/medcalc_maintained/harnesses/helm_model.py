"""HELM's configuration of a local Hugging Face checkpoint, in the dtype every other harness loads it in.

``helm-run --enable-local-huggingface-models DIR`` registers a checkpoint with no loading arguments,
so HELM's Hugging Face client loads it in the checkpoint's own dtype (bfloat16 for SmolLM2), and it
samples at temperature 1e-7 for a request of temperature 0: in bfloat16 the top logits often tie
(their spacing near 20 is 0.125), so its "greedy" outputs differed from lm-eval's on 3 of 4 rows
where in float32 all 4 were the same text. HELM's other way in is a local configuration folder
(``--local-path``; ``runs/prod_env`` by default, in the folder git ignores) holding ``model_metadata.yaml``,
``tokenizer_configs.yaml`` and ``model_deployments.yaml``; :func:`model_files` writes those three
for one checkpoint with ``torch_dtype`` set, and :func:`write_model_dir` puts them in a folder
(``medcalc-maintained harness helm-model``).

HELM keeps its request cache in ``<local path>/cache``: a completion is looked up by the request,
not by the weights, so the folder is replaced whole (cache included) when it is written again.
Standard library and PyYAML only (this runs in the project's venv, not in ``.venv-helm``).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from medcalc_maintained.core.atomic import write_dir
from medcalc_maintained.core.errors import DataError

FILES = ("model_metadata.yaml", "tokenizer_configs.yaml", "model_deployments.yaml")
DTYPES = ("float32", "bfloat16", "float16")
# every harness of the real-model test loads the checkpoint in float32 (docs/harnesses.md, "The real model, measured")
DEFAULT_DTYPE = "float32"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
# transformers writes this for a tokenizer whose context length nobody stated
NO_LIMIT = 1_000_000


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(path, "missing: MODEL must be a Hugging Face checkpoint directory (config.json, "
                              "tokenizer_config.json)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(path, f"not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise DataError(path, "is not a JSON object")
    return data


def _token(config: dict[str, Any], key: str, path: Path) -> str:
    value = config.get(key)
    if isinstance(value, dict):
        value = value.get("content")
    if not isinstance(value, str) or not value:
        raise DataError(path, f"field {key!r}: no token (HELM needs the {key.replace('_', ' ')})")
    return value


def context_length(model: Path) -> int:
    """The checkpoint's context length: ``max_position_embeddings`` of ``config.json``, else a stated
    ``model_max_length`` of ``tokenizer_config.json``."""
    value = _json(model / "config.json").get("max_position_embeddings")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    stated = _json(model / "tokenizer_config.json").get("model_max_length")
    if isinstance(stated, int) and not isinstance(stated, bool) and 0 < stated < NO_LIMIT:
        return stated
    raise DataError(model / "config.json", "field 'max_position_embeddings': missing, and tokenizer_config.json "
                                           "states no model_max_length (HELM needs the context length)")


def model_files(model: os.PathLike | str, name: str | None = None, dtype: str = DEFAULT_DTYPE) -> dict[str, str]:
    """The three YAML files (name -> text) that register checkpoint directory ``model`` with HELM as
    model and deployment ``name`` (default ``local/<folder name>``), loaded in ``dtype``."""
    model = Path(model).resolve()
    if not model.is_dir():
        raise DataError(model, "is not a directory (MODEL must be a local Hugging Face checkpoint)")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    name = name or f"local/{model.name}"
    if not NAME.match(name):
        raise ValueError(f"name {name!r} is not ORGANIZATION/MODEL (letters, digits, '.', '_', '-')")
    tokenizer = _json(model / "tokenizer_config.json")
    where = model / "tokenizer_config.json"
    path = {"pretrained_model_name_or_path": str(model)}
    documents = {
        "model_metadata.yaml": {"models": [{
            "name": name, "display_name": name.split("/", 1)[1], "description": f"local checkpoint {model}",
            "creator_organization_name": name.split("/", 1)[0], "access": "open", "release_date": None,
            "tags": ["TEXT_MODEL_TAG", "FULL_FUNCTIONALITY_TEXT_MODEL_TAG"]}]},
        "tokenizer_configs.yaml": {"tokenizer_configs": [{
            "name": name,
            "tokenizer_spec": {"class_name": "helm.tokenizers.huggingface_tokenizer.HuggingFaceTokenizer", "args": path},
            "end_of_text_token": _token(tokenizer, "eos_token", where),
            "prefix_token": _token(tokenizer, "bos_token", where)}]},
        "model_deployments.yaml": {"model_deployments": [{
            "name": name, "model_name": name, "tokenizer_name": name, "max_sequence_length": context_length(model),
            "client_spec": {"class_name": "helm.clients.huggingface_client.HuggingFaceClient",
                            "args": {**path, "torch_dtype": f"torch.{dtype}"}}}]},
    }
    header = f"# written by `medcalc-maintained harness helm-model` for {model} ({dtype})\n"
    return {file: header + yaml.safe_dump(doc, sort_keys=False) for file, doc in documents.items()}


def write_model_dir(out: os.PathLike | str, model: os.PathLike | str, name: str | None = None,
                    dtype: str = DEFAULT_DTYPE, force: bool = False) -> list[Path]:
    """Write :func:`model_files` into folder ``out`` whole (a scratch sibling swapped in). An existing
    non-empty ``out`` is refused unless ``force`` and it is an earlier one: these three files and
    HELM's request cache (``cache/*.sqlite``), which goes with it."""
    from medcalc_maintained.core.out_dirs import check_replace

    out = Path(out)
    check = functools.partial(check_replace, command="harness helm-model", writes=set(FILES), required=set(FILES),
                              force=force, caches={"cache": ".sqlite"})
    check(out)  # before the model is read, and again at the moment of the swap
    files = model_files(model, name, dtype)
    write_dir(out, files, check=check)
    return [out / file for file in FILES]
