"""The prompts of the two pipelines, versioned in ``src/medcalc_maintained/prompts/`` (written for
this project) and identified by their sha256.

``audit``    sees the note, the question, the calculator name, the original label with its
             accepted range, the extracted ``Relevant Entities`` and the ``Ground Truth
             Explanation``;
``relabel``  sees only the note and the question, never the original label or its derivation.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any, Mapping

from medcalc_maintained.verifiers.base import sha256_text

TEMPLATES = ("audit_system", "audit_user", "relabel_system", "relabel_user")


@lru_cache(maxsize=None)
def template(name: str) -> str:
    if name not in TEMPLATES:
        raise KeyError(f"unknown prompt {name!r}")
    return resources.files("medcalc_maintained").joinpath("prompts", f"{name}.txt").read_text(encoding="utf-8")


def template_hashes(stage: str | None = None) -> dict[str, str]:
    """sha256 of each prompt file (of one stage's two files when ``stage`` is given)."""
    return {n: sha256_text(template(n)) for n in TEMPLATES if stage is None or n.startswith(stage + "_")}


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def audit(row: Mapping[str, Any]) -> tuple[str, str]:
    """``(system, user)`` of the audit prompt for one instance row (upstream column names)."""
    user = template("audit_user").format_map({
        "calculator": _text(row["Calculator Name"]),
        "question": _text(row["Question"]),
        "note": _text(row["Patient Note"]),
        "answer": _text(row["Ground Truth Answer"]),
        "lower": _text(row["Lower Limit"]),
        "upper": _text(row["Upper Limit"]),
        "entities": _text(row["Relevant Entities"]),
        "explanation": _text(row["Ground Truth Explanation"]),
    })
    return template("audit_system").strip(), user.strip()


def relabel(row: Mapping[str, Any]) -> tuple[str, str]:
    """``(system, user)`` of the relabel prompt: the note and the question only."""
    user = template("relabel_user").format_map({
        "question": _text(row["Question"]),
        "note": _text(row["Patient Note"]),
    })
    return template("relabel_system").strip(), user.strip()


def prompt_sha256(system: str, user: str) -> str:
    """Identity of a rendered prompt: the hash of the system and user texts together."""
    return sha256_text(f"system\n{system}\n\nuser\n{user}")
