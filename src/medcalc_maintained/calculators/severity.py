"""Clinical severity of a label change: what replacing ``old`` by ``new`` would change for a patient.

>>> from medcalc_maintained.calculators.severity import severity
>>> severity(45, "1", "2", "integer")[0]        # CURB-65 home treatment -> short stay
'L3'
>>> severity(45, "3", "4", "integer")[0]        # both "hospital, severe pneumonia"
'L2'
>>> severity(45, "4", "5", "integer")[0]        # same band
'L1'

The rule (decision bands and actions from ``calculators/thresholds.yaml``):

``L0``  the same label (both abstain, or ``core.answers.labels_agree(new, old)``: the new label
        within ±5% of the old one for decimals, as the ledger's ``confirmed`` rule reads it; equal
        for integers and dates) and the same decision band;
``L1``  a different label in the same decision band (or, for a calculator without bands, any
        different value; for a date, a shift of at most the entry's ``days``; for a dose, a
        difference within its ``tolerance``);
``L2``  the label moves into another band with the same action (a risk or diagnostic class
        only), or a date moves by more than ``days`` (the pregnancy is dated differently);
``L3``  the label moves into a band with another action (treatment or disposition changes), or a
        dose moves by more than its ``tolerance`` (symmetric relative difference,
        ``core.answers.rel_err``); a value <= 0 of a dose entry means nothing is given, so two
        such values are the same dose (no dose) and one against a positive dose is ``L3``.

An abstention (``N/A``) on one side and a value on the other takes the worst level the
calculator can reach (:attr:`Threshold.max_level`): ``L3`` when its value drives a treatment or
dose decision, ``L2`` when only a diagnostic class or a dating, ``L1`` without bands. Bands are
compared before the tolerance: two labels within ±5% that straddle a cut-off cross it. When the
bands depend on the row's sex or age and the row does not give it, the change takes the worse
level of the variants (the reason names them). The level is the highest rule that applies;
``reason`` says which one, with the bands and actions on both sides.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from medcalc_maintained.calculators.thresholds import Band, Threshold, band_of, thresholds
from medcalc_maintained.core.answers import labels_agree, parse_answer, rel_err, same_value

LEVELS = ("L0", "L1", "L2", "L3")
SEVERE = ("L2", "L3")  # changes that cross a decision band


def _rank(level: str) -> int:
    return LEVELS.index(level)


def _worst(levels: Iterable[tuple[str, str]]) -> tuple[str, str]:
    return max(levels, key=lambda lr: _rank(lr[0]))


def _fmt(v: float) -> str:
    return f"{v:g}"


def _band_change(t: Threshold, x: float, y: float, entities: Any) -> tuple[str, str] | None:
    """The level of crossing bands between ``x`` and ``y`` (``None``: same band everywhere)."""
    sets = t.bands_for(entities)
    found: list[tuple[str, str]] = []
    for label, bands in sets:
        a, b = band_of(bands, x), band_of(bands, y)
        if a is b:
            continue
        where = f" [{label}]" if label else ""
        found.append(_crossing(a, b, where))
    if not found:
        return None
    level, reason = _worst(found)
    if len(sets) > 1:
        reason += f" ({t.depends_on} not in the row: worst of {len(sets)} variants)"
    return level, reason


def _crossing(a: Band, b: Band, where: str) -> tuple[str, str]:
    if a.action != b.action:
        return "L3", f"changes care{where}: {a.name} ({a.decision}) -> {b.name} ({b.decision})"
    return "L2", f"crosses a band{where}: {a.name} -> {b.name}, same action ({a.decision})"


def _dates(t: Threshold, old, new) -> tuple[str, str]:
    shift = abs((new.value - old.value).days)
    if shift == 0:
        return "L0", "same date"
    if t.days is not None and shift > t.days:
        return "L2", f"date moves {shift} days (> {t.days}): the pregnancy is dated differently"
    return "L1", f"date moves {shift} days (<= {t.days or 0})"


def severity(calculator_id: int, old_label: Any, new_label: Any, output_type: str,
             entities: Any = None) -> tuple[str, str]:
    """``(level, reason)`` of replacing ``old_label`` by ``new_label`` (see the module doc).

    ``entities`` is the row's entities (a dict or the JSON of the ``entities`` column), read only
    for the sex or age the bands depend on. Raises ``ValueError`` for an unknown calculator or an
    unparseable label.
    """
    t = thresholds().get(int(calculator_id))
    if t is None:
        raise ValueError(f"calculator {calculator_id} has no entry in thresholds.yaml")
    old, new = parse_answer(old_label, output_type), parse_answer(new_label, output_type)
    for side, a in (("old", old), ("new", new)):
        if a.kind == "invalid":
            raise ValueError(f"calculator {calculator_id}: {side} label {a.text!r} is not a valid "
                             f"{output_type} answer ({a.reason})")
    if old.is_abstain and new.is_abstain:
        return "L0", "both abstain"
    if old.is_abstain or new.is_abstain:
        what = "an abstention replaces a value" if new.is_abstain else "a value replaces an abstention"
        level = t.max_level
        drives = {"L3": "a treatment or dose decision", "L2": "a diagnostic class or dating",
                  "L1": "no decision band"}[level]
        return level, f"{what}; the value drives {drives}"
    if old.kind == "date" or new.kind == "date":
        return _dates(t, old, new)
    x, y = old.number, new.number
    found: list[tuple[str, str]] = []
    if labels_agree(new, old, output_type):
        found.append(("L0", "same label (within tolerance)"))
    else:
        found.append(("L1", f"{_fmt(x)} -> {_fmt(y)}: outside tolerance, same decision band"
                      if t.has_bands else f"{_fmt(x)} -> {_fmt(y)}: outside tolerance; no decision bands"))
    crossing = _band_change(t, x, y, entities)
    if crossing:
        found.append(crossing)
    if t.type == "relative_dose" and t.tolerance is not None:
        d = rel_err(old, new, output_type)
        if x <= 0 and y <= 0:
            found[0] = (found[0][0], f"{_fmt(x)} -> {_fmt(y)}: no dose on either side (<= 0)")
        elif x <= 0 or y <= 0:
            found.append(("L3", f"{_fmt(x)} -> {_fmt(y)}: a dose on one side only"))
        elif d > t.tolerance + 1e-12:
            found.append(("L3", f"dose changes by {d:.1%} (> {t.tolerance:.0%})"))
        elif not crossing and found[0][0] == "L1":
            found[0] = ("L1", f"dose changes by {d:.1%} (<= {t.tolerance:.0%})")
    return _worst(found)


def change_level(calculator_id: Any, old_label: Any, new_label: Any, output_type: str, entities: Any = None) -> str:
    """The level of one label change as the ledger and the release configs carry it: ``L0`` when
    the two texts denote the same label (no change at all, whatever the calculator), else
    :func:`severity`. Raises ``ValueError`` as :func:`severity` does."""
    if same_value(old_label, new_label, output_type):
        return "L0"
    return severity(int(calculator_id), old_label, new_label, output_type, entities)[0]


def record_level(calculator_id: Any, old_label: Any, new_label: Any, output_type: str, entities: Any = None) -> str | None:
    """The ``change_severity`` a new ledger record states (:func:`change_level`), or None when the
    level cannot be worked out (then the record leaves the field out and apply derives nothing)."""
    try:
        return change_level(calculator_id, old_label, new_label, output_type, entities)
    except ValueError:
        return None


# -- measuring the changes of a release ------------------------------------------------------------

CHANGED = ("corrected", "abstain")


def change_table(maintained: pd.DataFrame, entities: pd.DataFrame | None = None) -> pd.DataFrame:
    """Severity of every changed row (``Label Status`` corrected or abstain) of a maintained frame.

    ``maintained`` needs ``uid``, ``calculator_id``, ``output_type``, ``Original Ground Truth
    Answer``, ``Ground Truth Answer`` and ``Label Status``; the row's entities come from its
    ``entities`` column or from ``entities`` (a frame with ``uid`` and ``entities``, e.g. the
    interim instances). Returns one row per change: uid, calculator, old, new, status, level, reason.
    """
    rows = maintained[maintained["Label Status"].isin(CHANGED)]
    if "entities" not in rows.columns and entities is not None:
        rows = rows.merge(entities[["uid", "entities"]], on="uid", how="left")
    out = []
    for r in rows.to_dict("records"):
        old, new = r["Original Ground Truth Answer"], r["Ground Truth Answer"]
        level, reason = severity(int(r["calculator_id"]), old, new, r["output_type"], r.get("entities"))
        out.append({"uid": r["uid"], "calculator_id": int(r["calculator_id"]), "old": str(old), "new": str(new),
                    "status": r["Label Status"], "level": level, "reason": reason})
    return pd.DataFrame(out, columns=["uid", "calculator_id", "old", "new", "status", "level", "reason"])


def level_counts(table: pd.DataFrame) -> dict[str, int]:
    """Number of changes per level, every level present (0 when none)."""
    counts = table["level"].value_counts()
    return {lv: int(counts.get(lv, 0)) for lv in LEVELS}


def per_calculator(table: pd.DataFrame) -> pd.DataFrame:
    """Changes per calculator and level (columns L0..L3 and total), sorted by calculator."""
    wide = pd.crosstab(table["calculator_id"], table["level"]).reindex(columns=list(LEVELS), fill_value=0)
    wide["total"] = wide.sum(axis=1)
    return wide.sort_index()
