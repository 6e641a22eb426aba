"""Contract view ``evidence``: the verdicts a release records for the inputs of its verified labels,
checked again against the row's own note (releases from ``core/versions.py: EVIDENCE_ROWS_FROM`` on).

One row per verified row of ``full``:

``evidence_recorded``        ``Evidence`` is a JSON document ``{status, inputs}`` whose status is the row's
                             ``Evidence Status``
``status_follows_verdicts``  that status is what the inputs' verdicts give (``certified``: every input
                             supported; ``contradicted``: one contradicted; else ``not_addressed``)
``inputs_complete``          every input is a declared input of the calculator, once; every value the
                             label's derivation uses is listed with that value (each upstream entity of a
                             declared input, each input the ledger record recorded)
``quotes_are_note``          every quote is the note's text at its offsets (the question's, for an input the
                             question states: ``quote_in``)
``verdicts_reverify``        the evidence verifier (``calculators/evidence.py``), run again, accepts every
                             ``supports`` (its quote, or the note's silence by convention) and the note's
                             other value of every ``contradicts``; for a published release, the row's cell is
                             the one it published (``data/released/published.json``), which a later verifier
                             does not re-read

``evidence_problem`` says what failed (input, quote, rule). Reading every input again is the costly
part of validating a release (about 10 ms a row), so the rows are read in worker processes, one per core
(:mod:`medcalc_maintained.core.parallel`), from :data:`ROWS_PER_WORKER` rows per worker on.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.core.parallel import map_chunks
from medcalc_maintained.core.rows import entities_or_empty, row_dicts
from medcalc_maintained.ledger.published import evidence_key

COLUMNS = ["split", "uid", "evidence_recorded", "status_follows_verdicts", "inputs_complete", "quotes_are_note",
           "verdicts_reverify", "evidence_problem"]
ROWS_PER_WORKER = 200  # rows that repay forking one more worker (a worker starts in well under a second)
CHUNK_ROWS = 50  # rows per task: enough tasks to keep two workers busy to the end


def _text(v: Any) -> str | None:
    return None if v is None or (isinstance(v, float) and v != v) or v is pd.NA else str(v)


def _parse(raw: str | None) -> dict[str, Any] | None:
    try:
        doc = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return None
    ok = isinstance(doc, dict) and set(doc) == {"status", "inputs"} and isinstance(doc["inputs"], list) \
        and all(isinstance(i, dict) and {"name", "value", "verdict"} <= set(i) for i in doc["inputs"])
    return doc if ok else None


def _note_entity(value: Any) -> tuple[Any, Any]:
    """(value, unit) of a ``note_value`` as :func:`calculators.certify.certify_input` shows it ("362 µmol/L")."""
    if isinstance(value, str):
        head, _, unit = value.partition(" ")
        try:
            return float(head), (unit or None)
        except ValueError:
            return value, None
    return value, None


def _source_text(item: Mapping[str, Any], note: str, question: str) -> str:
    """What an input's quote indexes: the row's question for an input the question states (``quote_in``), else
    its note."""
    return question if item.get("quote_in") == "question" else note


def _reverify(cid: int, item: Mapping[str, Any], note: str, question: str = "") -> str | None:
    from medcalc_maintained.calculators.evidence import verify

    quote = item.get("quote") or {"start": None, "end": None, "text": ""}
    if item["verdict"] == "supports":
        value, unit = item.get("value"), item.get("unit")
    elif item["verdict"] == "contradicts":
        value, unit = _note_entity(item.get("note_value"))
        unit = unit if unit is not None else item.get("unit")
    else:
        return None
    declared = {k: item[k] for k in ("timepoint", "unit_reading") if item.get(k)} if item["verdict"] == "supports" else {}
    v = verify(cid, {"name": item["name"], "value": value, "unit": unit, "evidence": quote, **declared},
               _source_text(item, note, question))
    return None if v.supports else f"{item['name']} {item['verdict']} {value!r}: {v.rule} ({v.reason[:160]})"


def _recorded(r: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The inputs the row's ``Derivation`` records ({name: value}) and the names of the recorded inputs it sets
    aside as changing nothing (``inert_inputs``), lower-cased."""
    from medcalc_maintained.ledger.derivation import parse_document

    doc = parse_document(_text(r.get("Derivation"))) or {}
    values = {str(i.get("name")).strip().lower(): i.get("value") for i in doc.get("inputs") or [] if isinstance(i, dict)}
    return values, {str(n).strip().lower() for n in doc.get("inert_inputs") or []}


def completeness(cid: int, r: Mapping[str, Any], inputs: list[dict[str, Any]]) -> str | None:
    from medcalc_maintained.calculators.certify import entity_of
    from medcalc_maintained.calculators.inputs import declared_inputs

    specs = {s.name: s for s in declared_inputs(cid)}
    names = [i["name"] for i in inputs]
    if any(n not in specs for n in names) or len(set(names)) != len(names):
        return f"inputs {names} are not the calculator's declared inputs, once each"
    listed = {i["name"]: i for i in inputs}
    recorded, inert = _recorded(r)
    entities = entities_or_empty(r.get("Relevant Entities"))
    for name, spec in specs.items():
        keys = (name.lower(), *(a.lower() for a in spec.aliases))
        if any(k in inert for k in keys):  # the record's reading, which changes nothing: listed as recorded
            if (listed.get(name) or {}).get("source") != "recorded":
                return f"{name}: an input the ledger record recorded is not listed as recorded"
            continue
        rec = next((k for k in keys if k in recorded), None)
        found, value, _ = entity_of(spec, entities)
        if rec is None and not found:
            continue
        want = recorded[rec] if rec is not None else value
        got = listed.get(name)
        if got is None or got.get("value") != want:
            return f"{name}: the derivation uses {want!r}, the evidence lists {None if got is None else got.get('value')!r}"
    return _use_problem(cid, r, inputs, bool(recorded), entities)


def _use_problem(cid: int, r: Mapping[str, Any], inputs: list[dict[str, Any]], records: bool,
                 entities: Mapping[str, Any]) -> str | None:
    """Whether each input says rightly if the label's derivation uses it (calculators/certify.py): every input of a
    number; of an N/A, the recorded ones where the record records any, else upstream's where the definition gives
    no value from them, else none."""
    from medcalc_maintained.calculators.certify import uses_upstream
    from medcalc_maintained.core.answers import parse_answer

    abstains = parse_answer(r.get("Ground Truth Answer"), str(r.get("Output Type") or "decimal")).kind == "abstain"
    upstream_used = uses_upstream(cid, entities, records, abstains)
    for i in inputs:
        want = i.get("source") == "recorded" or upstream_used
        if bool(i.get("used", True)) != want:
            return f"{i['name']}: listed as {'used' if i.get('used', True) else 'unused'} by the derivation, which " \
                   f"{'uses' if want else 'does not use'} it"
    return None


def _row(r: Mapping[str, Any], frozen: Mapping[str, str] | None = None) -> dict[str, Any]:
    from medcalc_maintained.calculators.certify import row_verdict

    out = {"split": str(r["split"]), "uid": int(r["uid"]), "evidence_recorded": False, "status_follows_verdicts": False,
           "inputs_complete": False, "quotes_are_note": False, "verdicts_reverify": False, "evidence_problem": None}
    doc = _parse(_text(r.get("Evidence")))
    if doc is None or doc["status"] != _text(r.get("Evidence Status")):
        out["evidence_problem"] = "`Evidence` is not a {status, inputs} document whose status is `Evidence Status`"
        return out
    note, cid, inputs = _text(r.get("Patient Note")) or "", int(r["Calculator ID"]), doc["inputs"]
    question = _text(r.get("Question")) or ""
    problems = []
    out["evidence_recorded"] = True
    out["status_follows_verdicts"] = row_verdict(inputs) == doc["status"]
    if not out["status_follows_verdicts"]:
        problems.append(f"status {doc['status']} is not what the verdicts give ({row_verdict(inputs)})")
    missing = completeness(cid, r, inputs)
    out["inputs_complete"] = missing is None
    problems += [missing] if missing else []
    bad_quotes = [i["name"] for i in inputs if isinstance(i.get("quote"), dict) and _source_text(i, note, question)[
        i["quote"].get("start") or 0:i["quote"].get("end") or 0] != i["quote"].get("text")]
    out["quotes_are_note"] = not bad_quotes
    problems += [f"quote of {n} is not the note's text at its offsets" for n in bad_quotes]
    published = (frozen or {}).get(evidence_key(r["split"], r["uid"]))
    if published is not None:
        failed = [] if published == _text(r.get("Evidence")) else ["`Evidence` differs from the cell the release published"]
    else:
        failed = [p for p in (_reverify(cid, i, note, question) for i in inputs) if p]
    out["verdicts_reverify"] = not failed
    problems += failed
    out["evidence_problem"] = "; ".join(problems) or None
    return out


def evidence_view(full: pd.DataFrame, version: Any, frozen: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The ``evidence`` view of a release's ``full`` config (empty before ``EVIDENCE_ROWS_FROM``); ``frozen``:
    the ``Evidence`` cells the release published (``ledger/published.py: frozen_evidence``), if it was."""
    from medcalc_maintained.core.versions import rules

    if full.empty or not rules(version).evidence_rows:
        return pd.DataFrame(columns=COLUMNS)
    verified = [r for r in row_dicts(full) if str(r.get("Label Status")) != "unverified"]
    rows = map_chunks(lambda chunk: [_row(r, frozen) for r in chunk], verified, chunk=CHUNK_ROWS,
                      rows_per_worker=ROWS_PER_WORKER)
    return pd.DataFrame(rows, columns=COLUMNS)


__all__ = ["COLUMNS", "completeness", "evidence_view"]
