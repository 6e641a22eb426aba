"""lm-evaluation-harness task directory for one release (extra ``lm-eval``).

:func:`write_task_dir` writes, for a release tag such as ``v2.0``, one task YAML per config
(``medcalc_maintained`` = ``default``, ``medcalc_maintained_full``, ``medcalc_maintained_mini``),
each loading ``org/medcalc-maintained`` with ``dataset_kwargs: {revision: TAG}``, plus a
``utils.py`` whose hooks are the functions below (prompt, target, and ``process_results`` grading
with our answer semantics). Run it with ``lm_eval --include_path DIR --tasks medcalc_maintained``.
The command ``medcalc-maintained harness lm-eval --revision v2.0 --out DIR`` calls it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from medcalc_maintained.core.io import scratch_dir, swap_in_dir
from medcalc_maintained.harnesses.common import CONFIGS, DATASET, check_revision, is_correct, prompt_text
from medcalc_maintained.project import check_replace

TASKS = {"default": "medcalc_maintained", "full": "medcalc_maintained_full", "mini": "medcalc_maintained_mini"}
MAX_GEN_TOKS = 2048

UTILS = '''"""Hooks of the medcalc-maintained lm-evaluation-harness tasks (written by
`medcalc-maintained harness lm-eval`; needs the medcalc-maintained package installed)."""

from medcalc_maintained.harnesses.lm_eval_task import doc_to_target, doc_to_text, process_results  # noqa: F401
'''


def doc_to_text(doc: dict[str, Any]) -> str:
    """The prompt of one row: the system prompt, the patient note and the question."""
    return prompt_text(doc)


def doc_to_target(doc: dict[str, Any]) -> str:
    """The released label of one row (shown in lm-eval's logged samples)."""
    return str(doc["Ground Truth Answer"])


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``acc``: 1.0 when the first generation is correct under our grading, else 0.0."""
    output = results[0] if results else ""
    return {"acc": float(is_correct(doc, output))}


def task_yaml(config: str, revision: str) -> str:
    """The YAML of the task of ``config`` at ``revision``."""
    return (
        f"# medcalc-maintained {revision}, config {config} (written by `medcalc-maintained harness lm-eval`)\n"
        f"task: {TASKS[config]}\n"
        f"dataset_path: {DATASET}\n"
        f"dataset_name: {config}\n"
        "dataset_kwargs:\n"
        f"  revision: {revision}\n"
        "output_type: generate_until\n"
        "test_split: test\n"
        "num_fewshot: 0\n"
        "doc_to_text: !function utils.doc_to_text\n"
        "doc_to_target: !function utils.doc_to_target\n"
        "process_results: !function utils.process_results\n"
        "generation_kwargs:\n"
        "  until: []\n"
        "  do_sample: false\n"
        "  temperature: 0.0\n"
        f"  max_gen_toks: {MAX_GEN_TOKS}\n"
        "metric_list:\n"
        "  - metric: acc\n"
        "    aggregation: mean\n"
        "    higher_is_better: true\n"
        "metadata:\n"
        "  version: 1.0\n"
        f"  revision: {revision}\n"
    )


def write_task_dir(out: os.PathLike | str, revision: str, *, force: bool = False) -> list[Path]:
    """Write the task directory of ``revision`` into ``out`` (whole: into a scratch sibling, then
    swapped in); an existing non-empty ``out`` is refused unless ``force`` and it is an earlier task
    directory (its four files and lm_eval's ``__pycache__``, nothing else: ``core/io.py:
    check_replace``). Returns the files."""
    check_revision(revision)
    out = Path(out)
    files = {f"{TASKS[c]}.yaml": task_yaml(c, revision) for c in CONFIGS}
    files["utils.py"] = UTILS
    # --force replaces only an earlier task directory: these files and lm_eval's bytecode of utils.py
    check_replace(out, command="harness lm-eval", writes=set(files), required=set(files), force=force,
                  caches={"__pycache__": ".pyc"})
    tmp = scratch_dir(out)
    try:
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        swap_in_dir(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [out / name for name in sorted(files)]
