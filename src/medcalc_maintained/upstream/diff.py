"""Row-level diff of two upstream files: the row map and a summary of what changed.

The rows are paired by :mod:`medcalc_maintained.upstream.identity`. For every matched pair each
field below is compared; a field is *changed* when:

``note``, ``question``, ``explanation``  the normalised texts differ (:func:`identity.normalise`)
``label``                the two labels are not the same value (:func:`core.answers.same_value`,
                         under the new row's output type; ``38.0`` = ``38``)
``label_beyond_tolerance`` the labels are not the same label (:func:`core.answers.labels_agree`:
                         outside the ±5% band for decimals, different otherwise)
``limits``               ``Lower Limit`` or ``Upper Limit`` is not the same value
``output_type``, ``calculator_name``, ``category``, ``note_type``, ``note_id``  the stripped texts differ
``entities``             the parsed ``Relevant Entities`` differ
``uid``                  ``Row Number`` differs (renumbered)

A label that does not parse under either output type is compared as stripped text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained.core.answers import labels_agree, parse_answer, same_value
from medcalc_maintained.core.atomic import write_atomic, write_json
from medcalc_maintained.core.rows import parse_entities, read_upstream_csv, row_dicts
from medcalc_maintained.upstream.identity import THRESHOLD, Match, match_frames, normalise

FIELDS = ["uid", "note", "question", "label", "label_beyond_tolerance", "limits", "output_type", "entities",
          "explanation", "calculator_name", "category", "note_type", "note_id"]
CONTENT_FIELDS = ["note", "question", "label", "output_type"]  # what a ledger decision is about
ROW_MAP_COLUMNS = ["status", "old_uid", "new_uid", "calculator_id", "basis", "similarity", "changed_fields",
                   "old_note_id", "new_note_id", "old_label", "new_label", "candidates"]
STATUSES = ("matched", "added", "removed", "ambiguous")


def _label_type(old: str, old_type: str, new: str, new_type: str) -> str | None:
    """The output type both labels parse under (the new row's first), or None."""
    for otype in dict.fromkeys((new_type, old_type)):
        if parse_answer(old, otype).is_valid and parse_answer(new, otype).is_valid:
            return otype
    return None


def label_changed(old: str, old_type: str, new: str, new_type: str, *, tolerance: bool = False) -> bool:
    """Whether the label changed: not the same value (or, with ``tolerance``, not the same label)."""
    otype = _label_type(old, old_type, new, new_type)
    if otype is None:
        return str(old).strip() != str(new).strip()
    return not (labels_agree(old, new, otype) if tolerance else same_value(old, new, otype))


def _compared_entities(text: str) -> Any:
    """What the ``entities`` field compares: the parsed dict, or the text when it does not parse."""
    try:
        return parse_entities(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return str(text).strip()


def _text(col: str) -> Callable[[dict, dict], bool]:
    return lambda a, b: normalise(a[col]) != normalise(b[col])


def _plain(col: str) -> Callable[[dict, dict], bool]:
    return lambda a, b: str(a[col]).strip() != str(b[col]).strip()


def _limits(a: dict, b: dict) -> bool:
    return any(label_changed(a[c], a["Output Type"], b[c], b["Output Type"]) for c in ("Lower Limit", "Upper Limit"))


COMPARE: dict[str, Callable[[dict, dict], bool]] = {
    "uid": lambda a, b: int(a["Row Number"]) != int(b["Row Number"]),
    "note": _text("Patient Note"),
    "question": _text("Question"),
    "label": lambda a, b: label_changed(a["Ground Truth Answer"], a["Output Type"], b["Ground Truth Answer"], b["Output Type"]),
    "label_beyond_tolerance": lambda a, b: label_changed(a["Ground Truth Answer"], a["Output Type"],
                                                         b["Ground Truth Answer"], b["Output Type"], tolerance=True),
    "limits": _limits,
    "output_type": _plain("Output Type"),
    "entities": lambda a, b: _compared_entities(a["Relevant Entities"]) != _compared_entities(b["Relevant Entities"]),
    "explanation": _text("Ground Truth Explanation"),
    "calculator_name": _plain("Calculator Name"),
    "category": _plain("Category"),
    "note_type": _plain("Note Type"),
    "note_id": _plain("Note ID"),
}


def changed_fields(a: dict, b: dict) -> list[str]:
    """The fields of :data:`FIELDS` that differ between an old and a new upstream row."""
    return [f for f in FIELDS if COMPARE[f](a, b)]


@dataclass
class Diff:
    row_map: pd.DataFrame
    summary: dict[str, Any]
    matches: list[Match]


def _row_map(matches: list[Match], old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    orow = {int(r["Row Number"]): r for r in row_dicts(old)}
    nrow = {int(r["Row Number"]): r for r in row_dicts(new)}
    lines = []
    for m in matches:
        a = orow.get(m.old_uid) if m.old_uid is not None else None
        b = nrow.get(m.new_uid) if m.new_uid is not None else None
        either = a or b
        if either is None:
            raise ValueError(f"a {m.status} match names no row of either file")
        lines.append({
            "status": m.status, "old_uid": m.old_uid, "new_uid": m.new_uid,
            "calculator_id": int(either["Calculator ID"]), "basis": m.basis, "similarity": m.similarity,
            "changed_fields": ";".join(changed_fields(a, b)) if a and b else "",
            "old_note_id": a["Note ID"] if a else None, "new_note_id": b["Note ID"] if b else None,
            "old_label": a["Ground Truth Answer"] if a else None, "new_label": b["Ground Truth Answer"] if b else None,
            "candidates": ";".join(map(str, m.candidates)),
        })
    df = pd.DataFrame(lines, columns=ROW_MAP_COLUMNS)
    return df.astype({"old_uid": "Int64", "new_uid": "Int64", "similarity": "Float64"})


def summarise(row_map: pd.DataFrame, *, threshold: float, use_note_id: bool) -> dict[str, Any]:
    """Counts of the row map: statuses, bases, changed fields and the same per calculator."""
    matched = row_map[row_map["status"] == "matched"]
    fields = Counter(f for cf in matched["changed_fields"] for f in cf.split(";") if f)
    content_changed = matched["changed_fields"].map(lambda cf: any(f in cf.split(";") for f in CONTENT_FIELDS)).astype(bool)
    amb = row_map[row_map["status"] == "ambiguous"]
    per_calc: dict[str, dict[str, int]] = {}
    for cid, g in row_map.groupby("calculator_id"):
        m = g[g["status"] == "matched"]
        cc = m["changed_fields"].map(lambda cf: any(f in cf.split(";") for f in CONTENT_FIELDS)).astype(bool)
        per_calc[str(cid)] = {"matched_unchanged": int((~cc).sum()), "matched_changed": int(cc.sum()),
                              "added": int((g["status"] == "added").sum()), "removed": int((g["status"] == "removed").sum()),
                              "ambiguous": int((g["status"] == "ambiguous").sum())}
    return {
        "rule": {"threshold": threshold, "note_id_hint": use_note_id},
        "old_rows": int(row_map["old_uid"].notna().sum()), "new_rows": int(row_map["new_uid"].notna().sum()),
        "matched": int(len(matched)),
        "matched_unchanged": int((~content_changed).sum()), "matched_changed": int(content_changed.sum()),
        "added": int((row_map["status"] == "added").sum()), "removed": int((row_map["status"] == "removed").sum()),
        "ambiguous": int((amb["side"] == "old").sum()) if "side" in amb else 0,
        "ambiguous_new": int((amb["side"] == "new").sum()) if "side" in amb else 0,
        "basis": dict(sorted(Counter(matched["basis"]).items())),
        "changed": {f: int(fields.get(f, 0)) for f in FIELDS},
        "per_calculator": per_calc,
    }


def diff_frames(old: pd.DataFrame, new: pd.DataFrame, *, threshold: float = THRESHOLD, use_note_id: bool = True) -> Diff:
    """Pair the rows of two upstream frames and compare every matched pair field by field."""
    matches = match_frames(old, new, threshold=threshold, use_note_id=use_note_id)
    rm = _row_map(matches, old, new)
    rm["side"] = [m.side for m in matches]
    summary = summarise(rm, threshold=threshold, use_note_id=use_note_id)
    return Diff(rm.drop(columns="side"), summary, matches)


def diff_files(old: Path, new: Path, **kw) -> Diff:
    """:func:`diff_frames` of two upstream CSV files (read with the ingest stage's checks)."""
    d = diff_frames(read_upstream_csv(old), read_upstream_csv(new), **kw)
    d.summary = {"old": str(old), "new": str(new), **d.summary}
    return d


def plot(summary: dict[str, Any], path: Path) -> Path:
    """Stacked horizontal bars: per calculator, matched unchanged/changed, removed, added, ambiguous."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    per = summary["per_calculator"]
    cids = sorted(per, key=int)
    parts = ["matched_unchanged", "matched_changed", "removed", "added", "ambiguous"]
    colours = ["#bbbbbb", "#e69f00", "#d55e00", "#009e73", "#cc79a7"]
    fig, ax = plt.subplots(figsize=(8, max(4, 0.2 * len(cids))))
    left = [0] * len(cids)
    for part, colour in zip(parts, colours):
        vals = [per[c][part] for c in cids]
        ax.barh(cids, vals, left=left, color=colour, label=part.replace("_", " "))
        left = [x + v for x, v in zip(left, vals)]
    ax.set_xlabel("rows")
    ax.set_ylabel("Calculator ID")
    ax.invert_yaxis()
    ax.tick_params(axis="y", labelsize=6)
    ax.set_title("upstream changes per calculator: " + " -> ".join(Path(str(summary.get(k, k))).parent.name or k for k in ("old", "new")), fontsize=8)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    write_atomic(path, lambda p: fig.savefig(p, format="png", dpi=120, metadata={"Software": None}))
    plt.close(fig)
    return path


def write(d: Diff, out: Path) -> list[Path]:
    """``row_map.csv``, ``summary.json`` and ``changes_per_calculator.png`` into ``out``."""
    out = Path(out)
    paths = [out / "row_map.csv", out / "summary.json", out / "changes_per_calculator.png"]
    write_atomic(paths[0], lambda p: d.row_map.to_csv(p, index=False))
    write_json(paths[1], d.summary)
    plot(d.summary, paths[2])
    return paths


def diff_and_write(old: Path, new: Path, out: Path, *, threshold: float | None = None, use_note_id: bool = True,
                   progress: Callable[[str], None] | None = None) -> tuple[Diff, list[Path]]:
    """``upstream diff OLD NEW --out OUT``: :func:`diff_files` of the two upstream CSV files
    (``threshold`` default: the rule's :data:`THRESHOLD`) and :func:`write` of the diff into ``out``;
    ``progress`` is told each step ("matching rows", then "writing the row map, summary and plot")."""
    say = progress or (lambda step: None)
    say("matching rows")
    result = diff_files(old, new, threshold=THRESHOLD if threshold is None else threshold, use_note_id=use_note_id)
    say("writing the row map, summary and plot")
    return result, write(result, out)
