"""Transitional bridge to :mod:`medcalc_maintained.project` (removed once every caller uses Project)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.project import Project, find_root


def project_root(start: Path | None = None) -> Path:
    return find_root(start)


def load_params(root: Path | None = None) -> dict[str, Any]:
    return Project.load(root).params


def section(name: str, root: Path | None = None) -> dict[str, Any]:
    return Project.load(root).section(name)
