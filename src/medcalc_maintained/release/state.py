"""The state of a release (what it is, for comparing two releases) and the next version.

The next version is derived from what changed since the previous release (:func:`derive_bump`):
MAJOR for a breaking schema or a label-space change, MINOR for new columns or label changes, PATCH
for the card only.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable

import pandas as pd

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import bump, rules
from medcalc_maintained.project import Project
from medcalc_maintained.release.card_layout import TEMPLATE as CARD_TEMPLATE
from medcalc_maintained.release.card_layout import select_blocks
from medcalc_maintained.release.tables import arrow_table


def _label_class(text: str, output_type: str) -> str:
    kind = parse_answer(text, output_type).kind
    return "number" if kind in ("decimal", "integer") else kind


def _sha(parts: Iterable[str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def _schema(tables: dict[str, dict[str, pd.DataFrame]]) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    for cfg in sorted(tables):
        splits = tables[cfg]
        cols = None
        for s in sorted(splits):
            t = arrow_table(splits[s]).schema
            cols = [[f.name, str(f.type)] for f in t]
        schema[cfg] = {"splits": sorted(splits), "columns": cols or []}
    return schema


def release_state(tables: dict[str, dict[str, pd.DataFrame]], card_template: str, version: str) -> dict[str, Any]:
    """What release ``version`` is, for comparing two releases: schema, rows, calculators, label space,
    labels and card (see :func:`derive_bump`)."""
    full = pd.concat([tables["full"][s] for s in sorted(tables["full"])], ignore_index=True) if tables.get("full") else pd.DataFrame()
    full = full.sort_values(["split", "uid"], kind="stable") if len(full) else full
    rows = _sha(f"{s}:{u}" for s, u in zip(full.get("split", []), full.get("uid", [])))
    calculators = sorted({f"{i}:{n}" for i, n in zip(full.get("Calculator ID", []), full.get("Calculator Name", []))})
    space: dict[str, set[str]] = {}
    for lab, ot in zip(full.get("Ground Truth Answer", []), full.get("Output Type", [])):
        space.setdefault(str(ot), set()).add(_label_class(str(lab), str(ot)))
    labels = _sha(
        f"{s}|{u}|{a}|{lo}|{hi}|{st}"
        for s, u, a, lo, hi, st in zip(*(full.get(c, []) for c in
                                        ("split", "uid", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status")))
    )
    return {
        "schema": _schema(tables),
        "rows_sha256": rows,
        "calculators": calculators,
        "label_space": {k: sorted(v) for k, v in sorted(space.items())},
        "labels_sha256": labels,
        "card_sha256": card_sha256(card_template, version),
    }


def read_card(project: Project) -> str:
    """The dataset card template (``release.card``)."""
    if not project.card_template.is_file():
        raise DataError(project.card_template, "dataset card template not found")
    return project.card_template.read_text(encoding="utf-8")


def card_sha256(card_template: str, version: str) -> str:
    """The hash of the card template as release ``version`` reads it (its layout's blocks,
    :mod:`.card_layout`): a block only another layout shows changes no release of this one."""
    r = rules(version)
    return hashlib.sha256(select_blocks(card_template, r.card_lead, CARD_TEMPLATE, visitor=r.card_visitor,
                                         graders=r.card_graders, inputs=r.inputs_config, steps=r.card_steps)
                          .encode("utf-8")).hexdigest()


def schema_changes(previous: dict[str, Any], current: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(breaking, additive) schema changes: a removed config, changed splits, a removed, renamed or
    retyped column break readers (MAJOR); a new config or a new column does not (MINOR)."""
    a, b = previous.get("schema") or {}, current.get("schema") or {}
    breaking: list[str] = []
    additive: list[str] = []
    for cfg in sorted(set(a) | set(b)):
        if cfg not in b:
            breaking.append(f"config {cfg!r} removed")
            continue
        if cfg not in a:
            additive.append(f"config {cfg!r} added")
            continue
        if a[cfg].get("splits") != b[cfg].get("splits"):
            breaking.append(f"splits of config {cfg!r} changed")
        old = {n: t for n, t in a[cfg].get("columns") or []}
        new = {n: t for n, t in b[cfg].get("columns") or []}
        gone = [n for n in old if n not in new]
        retyped = [f"{n} ({old[n]} -> {new[n]})" for n in old if n in new and old[n] != new[n]]
        if gone:
            breaking.append(f"config {cfg!r} removes column(s) {', '.join(gone)}")
        if retyped:
            breaking.append(f"config {cfg!r} retypes column(s) {', '.join(retyped)}")
        added = [n for n in new if n not in old]
        if added:
            additive.append(f"config {cfg!r} adds column(s) {', '.join(added)}")
    return breaking, additive


def _major_reasons(previous: dict[str, Any], current: dict[str, Any], breaking: list[str]) -> list[str]:
    reasons = list(breaking)
    if previous.get("rows_sha256") != current.get("rows_sha256"):
        reasons.append("the set of rows changed")
    if previous.get("calculators") != current.get("calculators"):
        reasons.append("the set of calculators changed")
    if previous.get("label_space") != current.get("label_space"):
        a, b = previous.get("label_space") or {}, current.get("label_space") or {}
        for ot in sorted(set(a) | set(b)):
            added, removed = set(b.get(ot, [])) - set(a.get(ot, [])), set(a.get(ot, [])) - set(b.get(ot, []))
            if added or removed:
                reasons.append(f"label space of {ot} outputs: +{sorted(added)} -{sorted(removed)}")
    return reasons


def derive_bump(previous: dict[str, Any], current: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The kind of change from the ``previous`` release state to the ``current`` one, with reasons.

    MAJOR: a breaking schema change (a config removed, splits changed, a column removed, renamed or
    retyped), a change of the set of rows or calculators, or a change of the label space (a class
    of label, e.g. ``N/A``, appearing in or disappearing from an output type). MINOR: a new config
    or column (backward compatible), any label, limit or label-status change. PATCH: the card
    template only. ``None``: nothing changed.
    """
    breaking, minor = schema_changes(previous, current)
    reasons = _major_reasons(previous, current, breaking)
    if reasons:
        return "major", reasons
    if previous.get("labels_sha256") != current.get("labels_sha256"):
        minor.append("labels, limits or label statuses changed")
    if minor:
        return "minor", minor
    if previous.get("card_sha256") != current.get("card_sha256"):
        return "patch", ["the dataset card changed"]
    return None, []


def next_version(previous_version: str, previous: dict[str, Any], current: dict[str, Any]) -> tuple[str | None, str | None, list[str]]:
    kind, reasons = derive_bump(previous, current)
    return (bump(previous_version, kind) if kind else None), kind, reasons
