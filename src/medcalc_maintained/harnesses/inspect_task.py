"""An Inspect (``inspect-ai``) task for one release (extra ``inspect``).

Offline, after ``make run`` (the release in a local directory, given as an absolute path: Inspect
creates a task from a file inside that file's directory; ``-M`` arguments are the ``hf`` provider's:
``do_sample=false`` makes it greedy, it samples otherwise)::

    inspect eval src/medcalc_maintained/harnesses/inspect_task.py@medcalc_maintained \\
        -T release=$PWD/build/release -T config=mini --model hf/local -M model_path=MODEL \\
        -M dtype=float32 -M do_sample=false --max-connections 1

or from Python, ``inspect_ai.eval(medcalc_maintained(release=...), model=...)``; a published release
is ``-T revision=v2.0`` (``org/medcalc-maintained`` at the tag; ``-T dataset=`` another repository).
Each row is one sample whose input is the two chat messages every adapter sends (system prompt, then
note and question: :mod:`medcalc_maintained.grading.prompts`); the task asks for greedy decoding with
:data:`~medcalc_maintained.harnesses.common.MAX_NEW_TOKENS` new tokens (``GenerateConfig``;
``--max-tokens N`` overrides the budget), and :func:`greedy_generate` refuses a model that would
sample anyway (the ``hf`` provider without ``-M do_sample=false``). :func:`medcalc_scorer` grades
with our answer semantics (accuracy and its standard error). The task's metadata records the
release, its tag and its source.
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from medcalc_maintained.core.answers import graded_answer
from medcalc_maintained.harnesses.common import (
    DATASET,
    MAX_NEW_TOKENS,
    TEMPERATURE,
    is_correct,
    label_fields,
    load_rows,
    prompt_messages,
    resolve_release,
    variant_metadata,
)
from medcalc_maintained.harnesses.registry import task_version

# the task's version as Inspect records it (the harness table's; 2 from the shared decoding on)
TASK_VERSION = task_version("inspect")


def to_sample(row: dict[str, Any], prompt: str = "default") -> Sample:
    """One dataset row as an Inspect sample: chat input (prompt variant ``prompt``), the label as target,
    the grading columns as metadata, the row number as id."""
    roles = {"system": ChatMessageSystem, "user": ChatMessageUser}
    messages = [roles[m["role"]](content=m["content"]) for m in prompt_messages(row, prompt)]
    return Sample(id=int(row["Row Number"]), input=messages, target=str(row["Ground Truth Answer"]),
                  metadata=label_fields(row))


def generate_config() -> GenerateConfig:
    """Greedy, with the shared budget."""
    return GenerateConfig(temperature=TEMPERATURE, max_tokens=MAX_NEW_TOKENS)


@solver
def greedy_generate() -> Solver:
    """``generate()``, after refusing a model that samples although the task asks for temperature 0:
    Inspect's ``hf`` provider samples unless its model argument ``do_sample`` is false."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        if getattr(model.api, "do_sample", None) is True and not model.config.temperature:
            raise ValueError(f"model {model.name} samples (do_sample=True) while the medcalc_maintained task decodes "
                             "greedily (temperature 0): pass -M do_sample=false (or model_args={'do_sample': False})")
        return await generate(state)

    return solve


@scorer(metrics=[accuracy(), stderr()])
def medcalc_scorer():
    """Correct when the completion's answer (its last ``<answer>``, else the whole completion) is
    right for the sample's row under our grading."""

    async def score(state: TaskState, target: Target) -> Score:
        output = state.output.completion if state.output else ""
        ok = is_correct(state.metadata, output)
        return Score(value=CORRECT if ok else INCORRECT, answer=graded_answer(output),
                     explanation=f"label {target.text!r} ({state.metadata.get('Output Type')})")

    return score


@task
def medcalc_maintained(release: str | None = None, revision: str | None = None, config: str = "default",
                       dataset: str = DATASET, prompt: str = "default") -> Task:
    """MedCalc-Bench with the maintained labels of one release, config ``config``: ``release`` a
    local directory built by ``release build`` (``build/release`` after ``make run``), or ``dataset``
    on the Hub at tag ``revision``; ``prompt`` the prompt variant (``default``, ``stepwise``: ``-T
    prompt=stepwise``)."""
    extra = variant_metadata(prompt)
    rel = resolve_release(release, revision, dataset=dataset)
    rows = load_rows(config, rel)
    data = MemoryDataset([to_sample(r, prompt) for r in rows], name=f"medcalc-maintained:{config}@{rel.version}")
    return Task(dataset=data, solver=greedy_generate(), scorer=medcalc_scorer(), config=generate_config(),
                version=TASK_VERSION, metadata={**rel.metadata(), "config": config, **extra})
