"""The measured score shift that opens a release's card: the worked example's predictions (the
relabel stage's answers, ``compare.evaluate.predictions``, written by stage ``evaluate-example``)
graded under the previous release and under this one with the same grader (``ours``,
``grading/graders.py``), on the rows of the split they answer (``relabel.split``) that both
releases' ``default`` configs label. ``evaluate PREDICTIONS --against PREVIOUS --against THIS``
reports the same numbers as its common rows.
"""

from __future__ import annotations

from typing import Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.project import Project
from medcalc_maintained.release.feed import CLASSES, COMPARABLE
from medcalc_maintained.release.tables import Tables

GRADER = "ours"


def _graded(t: Tables, split: str, predictions: dict[int, str]) -> dict[int, bool]:
    from medcalc_maintained.grading.graders import grader

    grade = grader(GRADER)
    frame = t.tables["default"].get(split)
    if frame is None:
        return {}
    out = {}
    for row in row_dicts(frame):
        uid = int(row["Row Number"])
        if uid in predictions:
            out[uid] = grade(row, predictions[uid])
    return out


def measure(project: Project, previous: Tables | None, t: Tables) -> dict[str, Any] | None:
    """The worked example graded under ``previous`` and ``t`` (``None`` without a previous release
    or without the predictions file: stage ``evaluate-example`` has not run)."""
    from medcalc_maintained.grading.predictions import read_predictions

    path = project.example_predictions
    if previous is None or not path.is_file():
        return None
    try:
        predictions = read_predictions(path, max_line_bytes=project.param("compare.evaluate.max_line_bytes"))
    except DataError as exc:
        raise DataError(path, f"the worked example's predictions (stage evaluate-example): {exc.problem}") from None
    split = str(project.param("relabel.split"))
    before, after = _graded(previous, split, predictions), _graded(t, split, predictions)
    common = sorted(set(before) & set(after))
    return {"grader": GRADER, "predictions": len(predictions), "split": split, "rows": len(common),
            "previous": previous.release.version, "version": t.release.version,
            "correct_previous": sum(before[u] for u in common), "correct": sum(after[u] for u in common),
            "flips": sum(before[u] != after[u] for u in common)}


def example_text(project: Project) -> str:
    """What the worked example is, for the card (the path as params.yaml gives it, never this machine's)."""
    return (f"the relabel stage's answers graded as a model's predictions, "
            f"`{project.param('compare.evaluate.predictions')}` of the maintainers' repository")


def _pct(n: int, d: int) -> str:
    return f"{100 * n / d:.1f}%" if d else "n/a"


def banner(feed_entry: dict[str, Any], shift: dict[str, Any] | None, example: str) -> str:
    """The card's opening paragraph: whether scores on this release are comparable with the previous
    one (the class of ``default`` in ``releases.json``), with the measured shift of the worked example
    (``example``: where its predictions come from)."""
    prev, cls = feed_entry.get("previous"), feed_entry["comparability"]
    if prev is None:
        return (f"Release {feed_entry['version']} is the first release: there is no earlier release to compare "
                "scores with.")
    d = feed_entry["configs"]["default"]
    what = (f"{d['labels_changed']} rows of `default` have another label, {d['rows_out']} rows left it and "
            f"{d['rows_in']} came in (class `{cls}` in `releases.json`: {CLASSES[cls]})")
    head = (f"Scores on this release are comparable with {prev} (`v{prev}`)" if cls in COMPARABLE else
            f"**Scores on this release are not comparable with {prev}** (`v{prev}`)")
    if shift is None:
        return f"{head}: {what}. The worked example was not measured for this build ({example} not found)."
    n = shift["rows"]
    measured = (f"the worked example ({example}, {shift['predictions']:,} predictions) scores "
                f"{_pct(shift['correct_previous'], n)} ({shift['correct_previous']:,}/{n:,}) under {prev} and "
                f"{_pct(shift['correct'], n)} ({shift['correct']:,}/{n:,}) under {shift['version']}, same grader "
                f"`{shift['grader']}`, on the {n:,} rows of split `{shift['split']}` both releases label; "
                f"{shift['flips']:,} predictions change grade")
    advice = ("" if cls in COMPARABLE else
              f" Compare models across releases only by grading their outputs under both (`medcalc-maintained "
              f"evaluate PREDICTIONS --against v{prev} --against v{shift['version']}`), never with numbers "
              "measured on different releases.")
    return f"{head}: {measured}. {what[0].upper()}{what[1:]}.{advice}"
