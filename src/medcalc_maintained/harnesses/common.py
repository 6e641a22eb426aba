"""What every harness adapter shares: the dataset, its configs, the prompt and the grading rule."""

from __future__ import annotations

import re
from typing import Any, Mapping

from medcalc_maintained.scoring.graders import grader
from medcalc_maintained.scoring.prompts import build_prompt

DATASET = "org/medcalc-maintained"
CONFIGS = ("default", "full", "mini")
# the published tags: v1.0 / v1.0.0 (the upstream baseline), v2.0 / v2.0.0, ...
REVISION = re.compile(r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)(\.(0|[1-9]\d*))?$")
# the columns a grader reads, carried along as each harness's sample metadata
LABEL_FIELDS = ("Row Number", "Calculator ID", "Calculator Name", "Category", "Output Type",
                "Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status")


def check_revision(revision: str) -> str:
    """``revision`` when it is a release tag (``v2.0`` or ``v2.0.0``); a ``ValueError`` otherwise."""
    if not isinstance(revision, str) or not REVISION.match(revision):
        raise ValueError(f"revision {revision!r} is not a release tag such as v2.0 or v2.0.0")
    return revision


def check_config(config: str) -> str:
    if config not in CONFIGS:
        raise ValueError(f"config {config!r} is not one of {', '.join(CONFIGS)}")
    return config


def prompt_messages(row: Mapping[str, Any]) -> list[dict[str, str]]:
    """The chat messages of one dataset row (the system prompt, then note and question)."""
    return build_prompt(str(row["Patient Note"]), str(row["Question"]))


def prompt_text(row: Mapping[str, Any]) -> str:
    """The same prompt as one string, for harnesses that send plain text."""
    return "\n\n".join(m["content"] for m in prompt_messages(row)) + "\n"


def label_fields(row: Mapping[str, Any]) -> dict[str, str]:
    """The grading columns of one row, as text."""
    return {k: "" if row.get(k) is None else str(row.get(k)) for k in LABEL_FIELDS}


def is_correct(row: Mapping[str, Any], output: str) -> bool:
    """Our grading of a model's whole ``output`` against one row: the last ``<answer>`` (else the
    whole output), decimals inside the limits, integers rounded, dates the same day, ``N/A``
    correct only against an ``N/A`` label."""
    return grader("ours")(row, output if isinstance(output, str) else "")


def load_rows(config: str = "default", revision: str = "v2.0", *, split: str = "test",
              dataset: str = DATASET) -> list[dict[str, Any]]:
    """The rows of one config of the release at ``revision``, read with ``datasets.load_dataset``
    from the Hub (``HF_ENDPOINT`` for a mirror; ``dataset`` another repository id or a local
    path). An empty config (``mini`` of 1.0.0) gives ``[]``."""
    import datasets

    check_config(config)
    check_revision(revision)
    try:
        ds = datasets.load_dataset(dataset, config, revision=revision, split=split)
    except ValueError as exc:
        # a config without rows has an empty parquet file, which `datasets` refuses to read
        # eagerly; streamed it is simply empty
        if "empty" not in str(exc).lower():
            raise
        ds = datasets.load_dataset(dataset, config, revision=revision, split=split, streaming=True)
    return [dict(r) for r in ds]
