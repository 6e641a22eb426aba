"""Markdown tables of the dataset card (:mod:`medcalc_maintained.release.card`) and of its
sections written elsewhere (:mod:`medcalc_maintained.release.unverified_estimate`)."""

from __future__ import annotations

from typing import Any, Iterable

from medcalc_maintained.release.tables import is_missing


def uid_text(split: str, uid: int) -> str:
    """A row as the changelog and card name it: its uid, prefixed by its split unless ``test``."""
    return str(uid) if split == "test" else f"{split}:{uid}"


def _md(text: Any) -> str:
    """Text for one Markdown table cell."""
    if is_missing(text):
        return ""
    s = " ".join(str(text).split())
    return s.replace("\\", "\\\\").replace("|", "\\|")


def md_table(header: list[str], rows: Iterable[Iterable[Any]], align: list[str] | None = None) -> str:
    align = align or ["l"] * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
