"""The card's paragraph on the ``unverified`` rows: the estimated share of wrong labels among them,
per calculator with 95% intervals, and how it was estimated.

The numbers come from ``unverified_estimate.json`` of stage ``triage-simulate``
(:func:`medcalc_maintained.stages.triage_simulate.release_estimates`): one entry per release,
the error model fitted on the rows that release had adjudicated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from medcalc_maintained.core.errors import DataError


def read(path: Path) -> dict[str, Any] | None:
    """The estimates by release version; ``None`` when the stage has not run."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise DataError(path, "expected a mapping of release version -> estimate")
    return doc


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def text(estimates: dict[str, Any] | None, version: str) -> str:
    """Markdown for the card of release ``version``."""
    from medcalc_maintained.release.markdown import md_table

    est = (estimates or {}).get(version)
    if not est:
        return ("No estimate of the wrong labels among the unverified rows was made for this release "
                "(stage `triage-simulate` has not run for it).")
    if not est.get("unverified_rows"):
        return "Every row of this release has an adjudicated label: there is nothing to estimate."
    tot = est["total"]
    head = (f"Estimated share of wrong labels among the {est['unverified_rows']:,} unverified rows: "
            f"**{_pct(tot['mean'])}** (95% interval {_pct(tot['ci95'][0])}–{_pct(tot['ci95'][1])}).")
    if not est.get("fitted_on_adjudicated_rows"):
        head += (" This release had no adjudicated rows, so the estimate is the model's prior alone "
                 "(the intervals are correspondingly wide).")
    rows = [[r["calculator"], r["unverified_rows"], _pct(r["mean"]), f"{_pct(r['ci95'][0])}–{_pct(r['ci95'][1])}"]
            for r in est["per_calculator"]]
    table = md_table(["calculator", "unverified rows", "estimated wrong", "95% interval"], rows, ["l", "r", "r", "r"])
    method = (f"How: {est['method']} Fitted on {est['fitted_on_adjudicated_rows']:,} adjudicated rows "
              f"({est['adjudicated_wrong']:,} of them wrong).")
    return f"{head}\n\n{table}\n\n{method}"


__all__ = ["read", "text"]
