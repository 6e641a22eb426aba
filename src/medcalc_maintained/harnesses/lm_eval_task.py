"""lm-evaluation-harness task directory for one release (extra ``lm-eval``).

:func:`write_task_dir` writes one task YAML per config (``medcalc_maintained`` = ``default``,
``medcalc_maintained_full``, ``medcalc_maintained_mini``), one per config of the ``stepwise`` prompt
variant (the same names + ``_stepwise``: the system prompt also asks for an ``<inputs>`` block, the user
turn names the calculator's inputs; ``evaluate --steps`` / ``regrade --steps`` grade them) and a
``utils.py`` whose hooks are the functions below. Each YAML loads the release from a local directory built by ``release build``
(``dataset_path: /abs/build/release``, checked again when lm-eval loads the task: same version,
same file digests) or from the Hub at a tag (``dataset_kwargs: {revision: TAG}``), and records the
release, its tag and its source under ``metadata``.

The prompt is the two chat messages every adapter sends: the task's ``description`` is the system
prompt, which lm-eval turns into a **system message** when it applies the model's chat template,
and ``doc_to_text`` is the user turn (note and question). So ``--apply_chat_template`` is required:
the task class :class:`MedCalcMaintainedTask` refuses to build a prompt without it (lm-eval would
otherwise glue the two messages into one plain string). Decoding is greedy with
:data:`~medcalc_maintained.harnesses.common.MAX_NEW_TOKENS` new tokens (``--gen_kwargs
max_gen_toks=N`` overrides the budget). Offline, after ``make run``::

    medcalc-maintained harness lm-eval --release build/release --out runs/lm-eval-tasks
    lm_eval --model hf --model_args pretrained=MODEL,dtype=float32 --include_path runs/lm-eval-tasks \\
        --tasks medcalc_maintained_mini --apply_chat_template --log_samples --output_path runs/lm-eval

``process_results`` grades with our answer semantics (metric ``acc``).
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

from medcalc_maintained.core.atomic import write_dir
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.out_dirs import check_replace
from medcalc_maintained.grading.prompts import VARIANTS
from medcalc_maintained.harnesses.common import (
    CONFIGS,
    DATASET,
    LOCAL_LOAD,
    MAX_NEW_TOKENS,
    TEMPERATURE,
    Release,
    check_files,
    is_correct,
    local_release,
    resolve_release,
    system_prompt,
    user_prompt,
    variant_metadata,
)
from medcalc_maintained.harnesses.registry import task_version

TASKS = {"default": "medcalc_maintained", "full": "medcalc_maintained_full", "mini": "medcalc_maintained_mini"}
STEPWISE_TASKS = {c: f"{t}_stepwise" for c, t in TASKS.items()}  # prompt variant stepwise
# the task's version as lm-eval reports it (the harness table's; 2 from the chat prompt and the shared decoding on)
TASK_VERSION = float(task_version("lm-eval"))
NEEDS_CHAT = ("the medcalc-maintained tasks send a system and a user message through the model's chat "
              "template: run lm_eval with --apply_chat_template (without it lm-eval would send both as one "
              "plain-text string, a different prompt from every other harness's)")
_CLASSES: dict[str, type] = {}

UTILS = '''"""Hooks of the medcalc-maintained lm-evaluation-harness tasks (written by
`medcalc-maintained harness lm-eval`; needs the medcalc-maintained package installed)."""

from medcalc_maintained.harnesses.lm_eval_task import (  # noqa: F401
    MedCalcMaintainedTask, doc_to_target, doc_to_text, doc_to_text_stepwise, process_results)
'''


def __getattr__(name: str) -> Any:
    """:class:`MedCalcMaintainedTask`, built (and lm-eval imported) on first access: the task
    directory is written without lm-eval installed."""
    if name == "MedCalcMaintainedTask":
        if not _CLASSES:
            _CLASSES[name] = _build_task_class()
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def doc_to_text(doc: dict[str, Any]) -> str:
    """The user turn of one row: the patient note and the question (the system prompt is the
    task's ``description``)."""
    return user_prompt(doc)


def doc_to_text_stepwise(doc: dict[str, Any]) -> str:
    """The user turn of one row in the ``stepwise`` variant: note, question and the calculator's inputs."""
    return user_prompt(doc, "stepwise")


def doc_to_target(doc: dict[str, Any]) -> str:
    """The released label of one row (shown in lm-eval's logged samples)."""
    return str(doc["Ground Truth Answer"])


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """``acc``: 1.0 when the first generation is correct under our grading, else 0.0."""
    output = results[0] if results else ""
    return {"acc": float(is_correct(doc, output))}


def check_task_config(config: dict[str, Any]) -> None:
    """At load time: the YAML's system prompt is this package's, and a local release directory still
    holds the release (and the files) the YAML was written for."""
    where = f"task {config.get('task')!r}"
    variant = str((config.get("metadata") or {}).get("prompt_variant") or "default")
    if variant not in VARIANTS or config.get("description") != system_prompt(variant):
        raise DataError(where, "its description is not this package's system prompt: rewrite the task directory "
                        "with `medcalc-maintained harness lm-eval --force`", field="description")
    meta = config.get("metadata") or {}
    path = str(config.get("dataset_path") or "")
    if path and meta.get("source") == path:  # written for a local release directory
        release = local_release(path)
        if release.version != str(meta.get("release")):
            raise DataError(path, f"now holds release {release.version}, the task was written for "
                            f"{meta.get('release')}: rewrite the task directory with `medcalc-maintained harness "
                            "lm-eval --force`")
        check_files(release, str(config.get("dataset_name")))


def _build_task_class() -> type:
    from lm_eval.api.task import ConfigurableTask

    class MedCalcMaintainedTask(ConfigurableTask):
        """The YAML task, which builds its prompt only through a chat template."""

        def __init__(self, config: dict[str, Any] | None = None, **kwargs: Any) -> None:
            config = {k: v for k, v in (config or {}).items() if k != "class"}
            check_task_config(config)
            super().__init__(config=config, **kwargs)

        def fewshot_context(self, doc: dict, num_fewshot: int, system_instruction: str | None = None,
                            apply_chat_template: bool = False, fewshot_as_multiturn: bool = False,
                            chat_template: Any = None, gen_prefix: str | None = None) -> Any:
            if not apply_chat_template or chat_template is None:
                raise ValueError(NEEDS_CHAT)
            return super().fewshot_context(doc, num_fewshot, system_instruction=system_instruction,
                                           apply_chat_template=apply_chat_template,
                                           fewshot_as_multiturn=fewshot_as_multiturn, chat_template=chat_template,
                                           gen_prefix=gen_prefix)

    MedCalcMaintainedTask.__module__ = __name__
    return MedCalcMaintainedTask


def task_yaml(config: str, release: Release, variant: str = "default") -> str:
    """The YAML of the task of ``config`` of ``release`` with prompt variant ``variant``."""
    source = [f"dataset_path: {json.dumps(release.path)}", f"dataset_name: {config}"]
    if release.revision is not None:
        source += ["dataset_kwargs:", f"  revision: {release.revision}"]
    else:  # a local directory: read from its files, never from `datasets`' cache of an earlier build
        source += ["dataset_kwargs:", *(f"  {k}: {v}" for k, v in LOCAL_LOAD.items())]
    meta = {"version": TASK_VERSION, **release.metadata(), "config": config, **variant_metadata(variant)}
    stepwise = variant == "stepwise"
    return "\n".join([
        f"# medcalc-maintained {release.version} ({release.source}), config {config}",
        "# written by `medcalc-maintained harness lm-eval`; run lm_eval with --apply_chat_template (required)",
        f"task: {(STEPWISE_TASKS if stepwise else TASKS)[config]}",
        "class: !function utils.MedCalcMaintainedTask",
        *source,
        "output_type: generate_until",
        "test_split: test",
        "num_fewshot: 0",
        f"description: {json.dumps(system_prompt(variant))}",
        f"doc_to_text: !function utils.{'doc_to_text_stepwise' if stepwise else 'doc_to_text'}",
        "doc_to_target: !function utils.doc_to_target",
        "process_results: !function utils.process_results",
        "generation_kwargs:",
        "  until: []",
        "  do_sample: false",
        f"  temperature: {TEMPERATURE}",
        f"  max_gen_toks: {MAX_NEW_TOKENS}",
        "metric_list:",
        "  - metric: acc",
        "    aggregation: mean",
        "    higher_is_better: true",
        "metadata:",
        *(f"  {k}: {json.dumps(v)}" for k, v in meta.items()),
    ]) + "\n"


def write_task_dir(out: os.PathLike | str, revision: str | None = None, *, release: os.PathLike | str | None = None,
                   dataset: str = DATASET, force: bool = False) -> list[Path]:
    """Write the task directory of a release into ``out``: ``release``, a local release directory, or
    ``dataset`` at tag ``revision`` (:func:`~medcalc_maintained.harnesses.common.resolve_release`);
    the configs of a local release are checked against its manifest first. Written whole (into a
    scratch sibling, then swapped in); an existing non-empty ``out`` is refused unless ``force`` and
    it is an earlier task directory (its four files and lm_eval's ``__pycache__``, nothing else:
    ``core/out_dirs.py: check_replace``). Returns the files."""
    out = Path(out)
    required = {*(f"{TASKS[c]}.yaml" for c in CONFIGS), "utils.py"}
    names = required | {f"{STEPWISE_TASKS[c]}.yaml" for c in CONFIGS}
    # --force replaces only an earlier task directory: these files and lm_eval's bytecode of utils.py,
    # checked before the release is read and again at the moment of the swap (one written before the
    # stepwise tasks existed has only the default ones)
    check = functools.partial(check_replace, command="harness lm-eval", writes=names, required=required, force=force,
                              caches={"__pycache__": ".pyc"})
    check(out)
    rel = resolve_release(None if release is None else str(release), revision, dataset=dataset)
    for config in CONFIGS:
        check_files(rel, config)
    files = {f"{TASKS[c]}.yaml": task_yaml(c, rel) for c in CONFIGS}
    files.update({f"{STEPWISE_TASKS[c]}.yaml": task_yaml(c, rel, "stepwise") for c in CONFIGS})
    files["utils.py"] = UTILS
    write_dir(out, files, check=check)
    return [out / name for name in sorted(files)]
