"""An Inspect (``inspect-ai``) task for one release (extra ``inspect``).

``inspect eval medcalc_maintained/harnesses/inspect_task.py -T revision=v2.0 -T config=mini
--model ...`` (or ``inspect_ai.eval(medcalc_maintained(revision="v2.0"), model=...)``): the rows of
``org/medcalc-maintained`` at the tag, the chat prompt of :mod:`medcalc_maintained.scoring.prompts`,
one generation, and :func:`medcalc_scorer` grading it with our answer semantics (accuracy and its
standard error).
"""

from __future__ import annotations

from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

from medcalc_maintained.core.answers import graded_answer
from medcalc_maintained.harnesses.common import DATASET, is_correct, label_fields, load_rows, prompt_messages


def to_sample(row: dict[str, Any]) -> Sample:
    """One dataset row as an Inspect sample: chat input, the label as target, the grading columns
    as metadata, the row number as id."""
    roles = {"system": ChatMessageSystem, "user": ChatMessageUser}
    messages = [roles[m["role"]](content=m["content"]) for m in prompt_messages(row)]
    return Sample(id=int(row["Row Number"]), input=messages, target=str(row["Ground Truth Answer"]),
                  metadata=label_fields(row))


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
def medcalc_maintained(revision: str = "v2.0", config: str = "default") -> Task:
    """MedCalc-Bench with the maintained labels of release ``revision``, config ``config``."""
    rows = load_rows(config, revision)
    dataset = MemoryDataset([to_sample(r) for r in rows], name=f"{DATASET}:{config}@{revision}")
    return Task(dataset=dataset, solver=generate(), scorer=medcalc_scorer(),
                metadata={"dataset": DATASET, "config": config, "revision": revision})
