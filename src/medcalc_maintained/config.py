"""Project root discovery and ``params.yaml`` access (one place for both)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml


def project_root(start: Path | None = None) -> Path:
    """The directory holding ``params.yaml``: ``$MEDCALC_ROOT`` or the nearest ancestor of cwd."""
    env = os.environ.get("MEDCALC_ROOT")
    if env:
        return Path(env).resolve()
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "params.yaml").is_file():
            return d
    return here


def load_params(root: Path | None = None) -> dict[str, Any]:
    """The parsed ``params.yaml`` of the project (an empty dict when there is none)."""
    path = (root or project_root()) / "params.yaml"
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8") as fh:
        return yaml.safe_load(fh) or {}


def section(name: str, root: Path | None = None) -> dict[str, Any]:
    return dict(load_params(root).get(name) or {})
