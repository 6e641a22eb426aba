"""The prompt of every training and evaluation row: the fixed system prompt and the chat messages.

The ``compare`` stage writes these prompts into both training arms and ``compare train`` trains on
them, so a change here changes the stage's outputs (``dvc.yaml`` lists this module as a dependency).
"""

from __future__ import annotations

SYSTEM_PROMPT = (
    "You are a careful clinical calculation assistant. You are given a patient note and a question "
    "that names one medical calculator. Work out which values the calculator needs, find them in the "
    "note (converting units where needed), and compute the result step by step. End your reply with "
    "the final result alone between <answer> and </answer>: a number for scores and measurements, a "
    "date as MM/DD/YYYY, or a gestational age as ('W weeks', 'D days'). If the note does not contain "
    "what the calculator needs, or the calculator does not apply to this patient, reply "
    "<answer>N/A</answer> instead of guessing."
)


def build_prompt(note: str, question: str) -> list[dict[str, str]]:
    """The chat messages of one instance: the fixed system prompt, then the note and the question."""
    user = f"Patient note:\n{note.strip()}\n\nQuestion: {question.strip()}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
