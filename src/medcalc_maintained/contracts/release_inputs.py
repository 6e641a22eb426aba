"""Contract view ``inputs``: config ``inputs`` read against ``full`` and the notes (releases from
``core/versions.py: INPUTS_CONFIG_FROM`` on; before it the view is empty and the config must be absent).

One row per row of the config, and one per input of a verified row of ``full`` the config lacks:

``row_known``          the input's row is a verified row of ``full`` (it has an ``Evidence`` document) and the
                       row's columns (``Row Number``, ``Calculator ID``, ``Calculator Name``, ``Label Status``,
                       ``Evidence Status``) are ``full``'s
``matches_evidence``   the input is the row's ``Evidence`` document's input of that name, field by field (the
                       value and ``note_value`` compared as parsed JSON), in the document's order, and no input of
                       the document is missing
``quote_is_text``      a quote's text is the ``Patient Note``'s text at ``quote_start:quote_end`` (the ``Question``'s
                       for ``quote_in`` ``question``); offsets and text are all present or all null
``value_is_json``      ``value`` is JSON text (a number, text or true/false)
``derivation_listed``  of every row, the inputs in the config list each value the label's derivation uses (each
                       upstream entity of a declared input, each input its ledger record recorded), once, with
                       that value (``release_evidence.completeness`` on the config's own rows)

``inputs_problem`` says what failed. The config is checked on its own, not only through ``full``: a user who
loads ``inputs`` never reads the ``Evidence`` column.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.contracts.release_content import cell_text
from medcalc_maintained.contracts.release_evidence import completeness
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import rules
from medcalc_maintained.release.tables import INPUT_ROW_COLUMNS, is_missing

COLUMNS = ["split", "uid", "name", "row_known", "matches_evidence", "quote_is_text", "value_is_json",
           "derivation_listed", "inputs_problem"]
FIELDS = ("unit", "source", "verdict", "rule", "reason", "quote_in")  # compared as text with the document's


def _json(v: Any) -> tuple[bool, Any]:
    text = cell_text(v)
    if text is None:
        return True, None
    try:
        return True, json.loads(text)
    except ValueError:
        return False, None


def _int(v: Any) -> int | None:
    return None if is_missing(v) else int(v)


def _bool(v: Any, default: bool) -> bool:
    return default if is_missing(v) else bool(v)


def _differs(r: Mapping[str, Any], d: Mapping[str, Any]) -> str | None:
    """The first field where a config row differs from its ``Evidence`` input document (``None``: none)."""
    quote = d.get("quote") or {}
    want: dict[str, Any] = {"value": d.get("value"), "note_value": d.get("note_value"),
                            "quote_start": quote.get("start"), "quote_end": quote.get("end"),
                            "quote_text": quote.get("text"), "convention": bool(d.get("convention")),
                            "used": bool(d.get("used", True)),
                            "declared": {k: d[k] for k in ("timepoint", "unit_reading") if k in d} or None,
                            **{f: d.get(f) for f in FIELDS}}
    got: dict[str, Any] = {"value": _json(r.get("value"))[1], "note_value": _json(r.get("note_value"))[1],
                           "quote_start": _int(r.get("quote_start")), "quote_end": _int(r.get("quote_end")),
                           "quote_text": cell_text(r.get("quote_text")), "convention": _bool(r.get("convention"), False),
                           "used": _bool(r.get("used"), True), "declared": _json(r.get("declared"))[1],
                           **{f: cell_text(r.get(f)) for f in FIELDS}}
    for f in ("rule", "reason"):
        want[f] = want[f] or ""
        got[f] = got[f] or ""
    return next((f"{f}: config {got[f]!r}, Evidence {want[f]!r}" for f in want if got[f] != want[f]), None)


def _quote_problem(r: Mapping[str, Any], row: Mapping[str, Any]) -> str | None:
    parts = [_int(r.get("quote_start")), _int(r.get("quote_end")), cell_text(r.get("quote_text"))]
    if all(p is None for p in parts):
        return None
    if any(p is None for p in parts):
        return "quote_start, quote_end and quote_text are not all present"
    source = cell_text(row.get("Question" if r.get("quote_in") == "question" else "Patient Note")) or ""
    start, end, text = parts
    if source[start:end] != text:  # type: ignore[index]
        return f"quote_text is not the {'question' if r.get('quote_in') == 'question' else 'note'}'s text at {start}:{end}"
    return None


def _evidence(row: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    try:
        doc = json.loads(str(row.get("Evidence")))
        return [i for i in doc["inputs"] if isinstance(i, dict)]
    except (ValueError, KeyError, TypeError):
        return None


def _as_document(r: Mapping[str, Any]) -> dict[str, Any]:
    """A config row as the input document :func:`completeness` reads (name, value, source, used)."""
    return {"name": cell_text(r.get("name")), "value": _json(r.get("value"))[1], "source": cell_text(r.get("source")),
            "used": _bool(r.get("used"), True)}


def inputs_view(full: pd.DataFrame, inputs: pd.DataFrame | None, version: Any) -> pd.DataFrame:
    """The ``inputs`` view of a release (``inputs``: its config ``inputs``, ``None`` when it has none)."""
    if not rules(version).inputs_config:
        if inputs is None:
            return pd.DataFrame(columns=COLUMNS)
        return pd.DataFrame([{"split": "*", "uid": None, "name": "*", "row_known": False, "inputs_problem":
                              f"release {version} ships config inputs, which releases before 2.4.0 do not have"}],
                            columns=COLUMNS).fillna({c: False for c in COLUMNS[3:-1]})
    full_rows = {(str(r["split"]), int(r["uid"])): r for r in row_dicts(full)} if not full.empty else {}
    verified = {k: r for k, r in full_rows.items() if cell_text(r.get("Evidence")) is not None}
    config = row_dicts(inputs) if inputs is not None and not inputs.empty else []
    by_row: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in config:
        by_row.setdefault((str(r["split"]), int(r["uid"])), []).append(r)
    out: list[dict[str, Any]] = []
    for key in sorted(set(by_row) | set(verified)):
        row, listed = verified.get(key), by_row.get(key, [])
        docs = _evidence(row) if row is not None else None
        names = [str(i.get("name")) for i in docs or []]
        order_ok = [cell_text(r.get("name")) for r in listed] == names
        listed_problem = None
        if row is not None and docs is not None:
            listed_problem = completeness(int(row["Calculator ID"]), row, [_as_document(r) for r in listed])
        for r in listed:
            problems = []
            known = row is not None and all(cell_text(r.get(c)) == cell_text(row.get(c)) for c in INPUT_ROW_COLUMNS)
            if not known:
                problems.append("not a verified row of full, or the row's columns differ from full's")
            doc = next((d for d in docs or [] if str(d.get("name")) == cell_text(r.get("name"))), None)
            differs = "not an input of the row's Evidence" if doc is None else _differs(r, doc)
            if differs is None and not order_ok:
                differs = f"the row's inputs {[cell_text(x.get('name')) for x in listed]} are not its Evidence's {names}"
            problems += [differs] if differs else []
            quote = _quote_problem(r, row) if row is not None else None
            problems += [quote] if quote else []
            is_json = _json(r.get("value"))[0]  # null: the derivation uses no value (an unmentioned criterion)
            problems += [] if is_json else ["value is not JSON text"]
            problems += [listed_problem] if listed_problem else []
            out.append({"split": key[0], "uid": key[1], "name": cell_text(r.get("name")), "row_known": known,
                        "matches_evidence": differs is None, "quote_is_text": quote is None, "value_is_json": is_json,
                        "derivation_listed": listed_problem is None, "inputs_problem": "; ".join(problems) or None})
        have = {cell_text(r.get("name")) for r in listed}
        for n in names:
            if n not in have:
                out.append({"split": key[0], "uid": key[1], "name": n, "row_known": True, "matches_evidence": False,
                            "quote_is_text": True, "value_is_json": True, "derivation_listed": listed_problem is None,
                            "inputs_problem": "an input of the row's Evidence is missing from config inputs"})
        if docs is None and row is not None:
            out.append({"split": key[0], "uid": key[1], "name": "*", "row_known": True, "matches_evidence": False,
                        "quote_is_text": True, "value_is_json": True, "derivation_listed": False,
                        "inputs_problem": "the row's Evidence is not a document with inputs"})
    return pd.DataFrame(out, columns=COLUMNS)


__all__ = ["COLUMNS", "inputs_view"]
