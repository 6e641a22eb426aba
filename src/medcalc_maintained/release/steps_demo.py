"""The card's step-wise breakdown of a real model (placeholder ``steps_demo``, releases from
``CARD_STEPS_FROM``): the committed outputs of ``release.steps_demo`` (a small model's lm-eval answers with
an ``<inputs>`` block, ``data/steps_demo``) graded step by step against the release being built, exactly as
``evaluate --steps`` and ``regrade --steps`` grade them (:func:`medcalc_maintained.grading.steps.grade_label_set`).

The template holds the prose (which model, which harness, how to reproduce it); this module gives the
numbers: a table of the classes and a sentence on the blocks that could not be read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from medcalc_maintained.core.versions import rules
from medcalc_maintained.project import Project

if TYPE_CHECKING:
    from medcalc_maintained.release.tables import Tables

# the table's rows: (label, where its count is in the summary of `evaluate --steps`)
ROWS = (("right", ("classes", "right")),
        ("right, with a readable `<inputs>` block", ("right_with_readable_inputs",)),
        ("right from wrong inputs", ("right_from_wrong_inputs",)),
        ("wrong: extraction", ("classes", "extraction")),
        ("wrong: arithmetic", ("classes", "arithmetic")),
        ("wrong: both", ("classes", "both")),
        ("wrong: format", ("classes", "format")),
        ("wrong: N/A given or withheld", ("classes", "abstention")),
        ("wrong: unjudged", ("classes", "unjudged")))
BLOCK_WORDS = {"absent": "absent", "not_json": "not JSON", "no_declared_input": "name no input of the calculator",
               "bad_unit": "give an input a unit it cannot have (a misread input)"}


def summary(path: Path, version: str, labels: pd.DataFrame, inputs: pd.DataFrame) -> tuple[dict[str, Any], int]:
    """``evaluate --steps``'s summary of the outputs in ``path`` under release ``version`` (``labels``: its
    ``default`` config, ``inputs``: its config ``inputs``, every split with ``uid``) and how many outputs
    there are. An output of a row the release's ``default`` lacks is not graded; the summary counts it
    (``outputs_of_other_rows``), so a later release that drops a row still builds and says so."""
    from medcalc_maintained.grading.predictions import read_predictions
    from medcalc_maintained.grading.steps import grade_label_set

    predictions = read_predictions(path)
    rows = {int(u) for u in labels["uid"]}
    kept = {u: o for u, o in predictions.items() if u in rows}
    s = grade_label_set(f"v{version}", kept, labels, inputs)[2]
    return {**s, "outputs_of_other_rows": len(predictions) - len(kept)}, len(predictions)


def _count(s: dict[str, Any], keys: tuple[str, ...]) -> int:
    value: Any = s
    for k in keys:
        value = value[k]
    return int(value)


def table(s: dict[str, Any], outputs: int) -> str:
    from medcalc_maintained.release.markdown import md_table

    missing, other = s["rows_without_certified_inputs"], s.get("outputs_of_other_rows", 0)
    head = (f"answers ({s['rows']} step-graded rows of {outputs}"
            + (f"; {missing} {'has' if missing == 1 else 'have'} no certified input" if missing else "")
            + (f"; {other} of rows not in this release's `default`" if other else "") + ")")
    return md_table([head, "rows"], [[label, str(_count(s, keys))] for label, keys in ROWS], ["l", "r"])


def text(s: dict[str, Any], outputs: int) -> str:
    """The table and a sentence on accuracy and the blocks that could not be read."""
    n, right = s["rows"], s["classes"]["right"]
    from_right = s["right_with_readable_inputs"] - s["right_from_wrong_inputs"]
    problems = s["block_problems"]
    listed = "; ".join(f"{problems[k]} {BLOCK_WORDS[k]}" for k in BLOCK_WORDS if problems.get(k))
    pct = f" ({100 * right / n:.1f}%)" if n else ""
    return (table(s, outputs) + "\n\n"
            f"Accuracy is {right} of {n}{pct}; counting a right answer only when it comes from right inputs, "
            f"{from_right}. Blocks with a problem: {listed or 'none'}.")


def card_text(project: Project, tables: Tables) -> str:
    """The card's numbers for the release of ``tables`` (empty before ``CARD_STEPS_FROM``): the outputs of
    ``release.steps_demo`` graded against its ``default`` labels and its config ``inputs``."""
    version = tables.release.version
    if not rules(version).card_steps:
        return ""
    from medcalc_maintained.release.tables import INPUTS

    return text(*summary(project.steps_demo_outputs, version, tables.combined("default"), tables.combined(INPUTS)))
