"""The DVC metric of a stage: ``metrics.json`` beside its outputs, holding the headline scalars of
its report (flat or one level nested), each file declared under ``metrics:`` in dvc.yaml so that
``dvc metrics show`` prints them; the lists and tables stay in the stage's own outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medcalc_maintained.core.atomic import write_json

METRICS = "metrics.json"


def write_report(target: Path, report: dict[str, Any], headline: dict[str, Any]) -> Path:
    """``report`` as JSON at ``target``, then its ``headline`` as :data:`METRICS` beside it; returns ``target``."""
    write_json(target, report)
    write_json(target.parent / METRICS, headline)
    return target
