"""``Ground Truth Explanation`` and ``Explanation Source`` of the released rows: an explanation never
derives a label other than the row's own.

* A row whose label is the upstream one (``confirmed``, ``unverified``) keeps the upstream
  explanation: source ``upstream``.
* A changed row (``corrected``; see :data:`~medcalc_maintained.core.labels.ERROR_STATUSES`) gets a
  derivation written from the reference calculator (:mod:`medcalc_maintained.calculators`) run on the
  row's ``Relevant Entities`` when its result grades as correct against the maintained label
  (:func:`~medcalc_maintained.core.answers.is_correct`): the calculator and its formula or criteria,
  each input as read from the note (with its unit conversion), the criteria taken as absent, and
  the result. Source ``reference-calculator``. When the calculator does not reproduce the
  maintained label, the field is empty: source ``none``.
* A row whose maintained label is ``N/A`` (``abstain``) explains why the note cannot answer the
  question, from the rationale and evidence of the ledger record(s) that set it: source ``ledger``.

The upstream explanation of every row stays in the ``original`` config.
"""

from __future__ import annotations

from typing import Any, cast

import pandas as pd

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.calculators.inputs import declared_inputs, spec_by_name
from medcalc_maintained.calculators.policy import load_policy
from medcalc_maintained.core import units as U
from medcalc_maintained.core.answers import is_correct
from medcalc_maintained.core.labels import ERROR_STATUSES
from medcalc_maintained.core.rows import entities_or_empty, row_dicts
from medcalc_maintained.ledger.derivation import DERIVED

SOURCES = ("upstream", "reference-calculator", "ledger", "none")  # the values of tables.SOURCE_COLUMN
RESULT_PREFIX = "So the answer is "  # the last sentence of a reference-calculator derivation


def _missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v) or str(v).strip() == ""


def _input_text(calculator_id: int, key: str, value: Any) -> str:
    spec = spec_by_name(calculator_id).get(key)
    if spec is not None and spec.accessor == "quantity" and isinstance(value, list) and len(value) == 2:
        try:
            canonical = U.to_canonical(cast(str, spec.kind), float(value[0]), str(value[1]))
        except (ValueError, KeyError, TypeError):
            return f"{key} is {value[0]} {value[1]}"
        shown = f"{value[0]} {value[1]}"
        same = str(value[1]).strip().lower() == str(spec.canonical_unit).strip().lower()
        return f"{key} is {shown}" + ("" if same else f" ({canonical:.6g} {spec.canonical_unit})")
    if isinstance(value, bool):
        return f"{key}: {'present' if value else 'absent'}"
    return f"{key} is {value}"


def derivation(calculator_id: int, entities: dict[str, Any], value: str) -> str:
    """The reference calculator's derivation of ``value`` from ``entities``, in plain sentences."""
    calc = load_all()[int(calculator_id)]
    formula = calc.source.strip().split("\n\n")[0].strip()
    formula = " ".join(formula.split())
    lines = [f"This label comes from the project's reference implementation of {calc.name}: {formula}"]
    inputs = [_input_text(calculator_id, k, v) for k, v in entities.items()]
    if inputs:
        lines.append("From the note: " + "; ".join(inputs) + ".")
    absent = [s.name for s in declared_inputs(calculator_id) if s.accessor == "flag" and s.name not in entities]
    if absent:
        lines.append("Criteria the note does not mention count as absent: " + ", ".join(absent) + ".")
    lines.append(f"Putting these values into the definition above gives {value}.")
    lines.append(f"{RESULT_PREFIX}{value}.")
    return "\n".join(lines)


def _definition_line(calculator_id: int, name: str) -> str:
    entry = load_policy().get(int(calculator_id)) or {}
    spec = entry if name == entry.get("version") else (entry.get("alternatives") or {}).get(name) or {}
    text = " ".join(str(spec.get("definition") or "").split())
    cite = f" ({spec['citation']})" if spec.get("citation") else ""
    return f"{name}: {text}{cite}" if text else name


def recorded_derivation(calculator_id: int, entities: dict[str, Any], doc: dict[str, Any]) -> str:
    """The derivation of a label from its ``Derivation`` document (definition, recorded inputs with
    their note evidence, value), in plain sentences; the inputs not recorded are upstream's."""
    calc = load_all()[int(calculator_id)]
    lines = [f"This label is {calc.name} under {_definition_line(calculator_id, str(doc['definition']))}."]
    recorded = doc.get("inputs") or []
    if recorded:
        shown = []
        for inp in recorded:
            ev = inp.get("evidence") or {}
            value = "absent" if inp.get("value") is None else f"{inp['value']}{' ' + str(inp['unit']) if inp.get('unit') else ''}"
            quote = f' (note, characters {ev.get("start")}-{ev.get("end")}: "{ev.get("text")}")' if ev.get("text") else " (not in the note)"
            shown.append(f"{inp.get('name')} = {value}{quote}")
        lines.append("Inputs read from the note for this label: " + "; ".join(shown) + ".")
    names = {str(i.get("name")) for i in recorded}
    rest = [_input_text(calculator_id, k, v) for k, v in entities.items() if k not in names]
    if rest:
        lines.append(("Other inputs, as extracted upstream: " if recorded else "From the note: ") + "; ".join(rest) + ".")
    absent = [sp.name for sp in declared_inputs(calculator_id) if sp.accessor == "flag" and sp.name not in entities
              and sp.name not in names]
    if absent:
        lines.append("Criteria the note does not mention count as absent: " + ", ".join(absent) + ".")
    lines.append(f"Putting these values into the definition gives {doc['value']}.")
    lines.append(f"{RESULT_PREFIX}{doc['value']}.")
    return "\n".join(lines)


def _record_text(ids: Any, records: dict[str, dict[str, Any]]) -> str | None:
    parts = []
    for rid in [] if _missing(ids) else str(ids).split(";"):
        rec = records.get(rid.strip())
        if not rec:
            continue
        why = "" if _missing(rec.get("rationale")) else " ".join(str(rec["rationale"]).split())
        ev = "" if _missing(rec.get("evidence")) else " ".join(str(rec["evidence"]).split())
        parts.append(" ".join(p for p in (why, f"Evidence: {ev}" if ev else "") if p))
    if not parts:
        return None
    return ("The note cannot answer this question as asked, so the label is N/A. Reason given by the "
            "reviewed correction: " + " ".join(parts))


def explain(full: pd.DataFrame, records: pd.DataFrame,
            derivations: list[dict[str, Any] | None] | None = None) -> tuple[list[Any], list[str]]:
    """(explanation, source) for every row of a maintained frame (``full`` layout) given the released
    ledger records (the ``corrections`` layout). With ``derivations`` (releases from 2.1.0 on: each
    row's ``Derivation`` document, :func:`medcalc_maintained.ledger.derivation.label_derivation`) a
    changed label is explained by its recorded derivation, and an N/A by its justification."""
    by_id = {} if records is None or not len(records) else {
        str(r["id"]): r for r in row_dicts(records)}
    texts: list[Any] = []
    sources: list[str] = []
    for n, r in enumerate(row_dicts(full)):
        status, label = str(r.get("Label Status")), r.get("Ground Truth Answer")
        if status not in ERROR_STATUSES:
            texts.append(r.get("Ground Truth Explanation"))
            sources.append("upstream")
            continue
        doc = derivations[n] if derivations is not None else None
        if doc is not None:
            text, source = _derived_text(r, doc, by_id)
            texts.append(text)
            sources.append(source)
            continue
        if str(label).strip() == "N/A":
            text = _record_text(r.get("Correction IDs"), by_id)
            texts.append(text)
            sources.append("ledger" if text else "none")
            continue
        text = None
        entities = entities_or_empty(r.get("Relevant Entities"))
        if entities:
            try:
                res = compute(int(r["Calculator ID"]), entities)
            except (KeyError, ValueError, TypeError):
                res = None
            otype = str(r.get("Output Type"))
            if res is not None and res.computable and is_correct(res.value, label, r.get("Lower Limit"),
                                                                 r.get("Upper Limit"), otype):
                text = derivation(int(r["Calculator ID"]), entities, str(res.value))
        texts.append(text)
        sources.append("reference-calculator" if text else "none")
    return texts, sources


def _derived_text(r: dict[str, Any], doc: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> tuple[str | None, str]:
    """(explanation, source) of a changed row of a release with derivations."""
    if doc.get("status") not in DERIVED:
        return None, "none"
    if str(r.get("Ground Truth Answer")).strip() == "N/A":
        text = _record_text(r.get("Correction IDs"), by_id)
        why = str(doc.get("reason") or "").strip()
        if why:
            text = (text + " " if text else "The note cannot answer this question as asked, so the label is N/A. ") + \
                f"Under {doc['definition']}: {why}."
        return text, "ledger"
    return recorded_derivation(int(r["Calculator ID"]), entities_or_empty(r.get("Relevant Entities")), doc), \
        "reference-calculator"


def stated_result(text: Any) -> str | None:
    """The result a reference-calculator derivation states (its last sentence), else ``None``."""
    if _missing(text):
        return None
    last = str(text).strip().splitlines()[-1]
    if not last.startswith(RESULT_PREFIX):
        return None
    return last[len(RESULT_PREFIX):-1] if last.endswith(".") else last[len(RESULT_PREFIX):]
