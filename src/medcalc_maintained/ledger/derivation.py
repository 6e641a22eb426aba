"""Derivations: a verified label is the declared definition applied to recorded, evidenced inputs.

The one home of "what does this row's label derive from". A ledger record may carry

``inputs``
    corrected values of the calculator's inputs, each ``{name, value, unit, evidence, reconstructed}``:
    ``name`` an entity key of ``Relevant Entities`` (or a declared input of the calculator),
    ``value`` a number, a boolean, a category or ``null`` (the input is absent from the note),
    ``unit`` the unit of a number (``null`` for unitless values), ``evidence`` the note text it was
    read from (``{start, end, text}``: character offsets into the patient note and the quoted
    text, which must be the note's own characters; ``{start: null, end: null, text: ""}`` only for
    an input absent from the note);
``definition``
    the definition the record assumes: the declared ``version`` of ``calculators/definitions.yaml``
    (the default) or the name of one of its published ``alternatives``;
``override``
    ``{reason}``: a value no derivation gives (clinical judgement), allowed only with a physician
    reviewer; it is counted and listed, never derived;
``justification``
    for an ``N/A`` label: why the note cannot answer (a required input absent, the calculator not
    applicable), from the check registry or the reviewer's stated reason.

:func:`derive` applies the definition to the upstream entities patched by the inputs, and
:func:`reproduces` says whether a label (with its limits) grades the derived value correct
(MedCalc-Bench grading: integers exact, decimals inside the row's limits, dates the same day).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.calculators.alternatives import compute_alternative
from medcalc_maintained.calculators.base import Result
from medcalc_maintained.calculators.policy import known_version, load_policy
from medcalc_maintained.core.answers import is_correct, parse_answer
from medcalc_maintained.core.labels import DISPUTED
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.core.versions import ReleaseRules


@dataclass(frozen=True)
class Derivation:
    """The definition applied to the (patched) entities of one row."""

    definition: str                       # the declared version or an alternative's name
    result: Result

    @property
    def value(self) -> str | None:
        return self.result.value

    @property
    def shown(self) -> str:
        """The value, or why there is none (the inputs it misses or cannot read)."""
        if self.value is not None:
            return self.value
        return "no value (" + (", ".join(self.result.missing + self.result.invalid) or "an input") + ")"


def entity_value(value: Any, unit: Any) -> Any:
    """An input's value as a ``Relevant Entities`` value: ``[number, unit]`` when it has a unit."""
    if unit is None or (isinstance(unit, str) and not unit.strip()) or isinstance(value, bool) or value is None:
        return value
    return [value, str(unit)]


def parse_document(cell: Any) -> dict[str, Any] | None:
    """The derivation document of a release table's ``Derivation`` cell (JSON text), or ``None``: a
    missing or empty cell, text that is not JSON, JSON that is not an object."""
    if not isinstance(cell, str) or not cell:
        return None
    try:
        doc = json.loads(cell)
    except json.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


def input_text(inp: Mapping[str, Any]) -> str:
    """A recorded input as people read it: ``name = value unit`` (no unit when it has none); each
    output adds its quote in its own format (release card, CHANGELOG, ``reconstruction.csv``)."""
    unit = f" {inp['unit']}" if inp.get("unit") else ""
    return f"{inp.get('name')} = {inp.get('value')}{unit}"


def input_entity_text(inp: Mapping[str, Any]) -> str:
    """A recorded input as the entity it sets: ``name = <its Relevant Entities value>`` (``repr``:
    ``[7.2, 'mg/dL']``), how a ledger problem or a reconstruction names a patch."""
    return f"{inp.get('name')} = {entity_value(inp.get('value'), inp.get('unit'))!r}"


def patch(entities: Mapping[str, Any], inputs: Iterable[Mapping[str, Any]] | None) -> dict[str, Any]:
    """``entities`` with each input set (an input whose value is ``null`` is removed: absent)."""
    out = dict(entities or {})
    for inp in inputs or ():
        name = str(inp.get("name"))
        value = entity_value(inp.get("value"), inp.get("unit"))
        if value is None:
            out.pop(name, None)
        else:
            out[name] = value
    return out


def definition_problem(calculator_id: int, definition: Any) -> str | None:
    """Why ``definition`` is not the calculator's declared version or one of its alternatives."""
    if definition is None or known_version(calculator_id, definition):
        return None
    entry = load_policy().get(int(calculator_id))
    if entry is None:
        return f"calculator {calculator_id} has no entry in calculators/definitions.yaml"
    named = ", ".join([entry["version"], *entry["alternatives"]])
    return f"definition {definition!r} is not one of calculators/definitions.yaml for calculator {calculator_id} ({named})"


def alternatives(calculator_id: int) -> dict[str, str]:
    """The published alternative definitions of a calculator in ``calculators/definitions.yaml``, each
    name with what it computes (``{}`` when it has none or no entry)."""
    entry = load_policy().get(int(calculator_id)) or {}
    return {str(name): str((alt or {}).get("definition") or "") if isinstance(alt, Mapping) else ""
            for name, alt in (entry.get("alternatives") or {}).items()}


def alternative_of(calculator_id: int, definition: Any) -> str | None:
    """The alternative ``definition`` names (``None`` for the declared version or no definition)."""
    entry = load_policy().get(int(calculator_id))
    if entry is None or definition is None or str(definition) == entry["version"]:
        return None
    return str(definition) if str(definition) in entry["alternatives"] else None


def derive(calculator_id: int, entities: Mapping[str, Any], inputs: Iterable[Mapping[str, Any]] | None = None,
           definition: Any = None) -> Derivation:
    """The value of the definition (declared unless ``definition`` names an alternative) on
    ``entities`` patched by ``inputs``."""
    load_all()
    cid = int(calculator_id)
    alt = alternative_of(cid, definition)
    ents = patch(entities, inputs)
    result = compute_alternative(cid, alt, ents) if alt else compute(cid, ents)
    entry = load_policy().get(cid) or {}
    return Derivation(alt or str(entry.get("version", "")), result)


def reproduces(derived: str | None, label: Any, lower: Any, upper: Any, output_type: str) -> bool:
    """Whether ``label`` (with its limits) grades ``derived`` correct: MedCalc-Bench grading."""
    if derived is None:
        return False
    lab = parse_answer(label, output_type)
    if not lab.is_valid or lab.is_abstain:
        return False
    return is_correct(derived, label, lower, upper, output_type)


def input_problems(calculator_id: int, inputs: Any, note: str | None) -> list[str]:
    """Why the recorded ``inputs`` are not well-formed evidence of the note (empty when they are):
    each has a name, and evidence whose quoted text is the note's text at its offsets (an absent
    input may quote nothing)."""
    out: list[str] = []
    if inputs is None:
        return out
    if not isinstance(inputs, list):
        return ["inputs must be a list"]
    text = note if isinstance(note, str) else None
    for n, inp in enumerate(inputs):
        where = f"inputs[{n}]"
        if not isinstance(inp, Mapping) or not str(inp.get("name") or "").strip():
            out.append(f"{where} has no name")
            continue
        ev = inp.get("evidence")
        name = inp["name"]
        if not isinstance(ev, Mapping):
            out.append(f"{where} ({name}) has no evidence")
            continue
        start, end, quoted = ev.get("start"), ev.get("end"), str(ev.get("text") or "")
        if start is None and end is None:
            if inp.get("value") is not None and inp.get("value") is not False:
                out.append(f"{where} ({name}) gives a value {inp.get('value')!r} without quoting the note")
            continue
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
            out.append(f"{where} ({name}) evidence offsets {start!r}..{end!r} are not a character range")
            continue
        if text is not None and text[start:end] != quoted:
            out.append(f"{where} ({name}) evidence text {quoted[:60]!r} is not the note's text at {start}..{end}")
    return out


SOURCES = ("search", "hand", "physician", "upstream")


def input_source(record: Mapping[str, Any] | None, inp: Mapping[str, Any]) -> str:
    """Where a recorded input comes from (``source``: search | hand | physician | upstream). A record
    of release 2.1.0 or earlier may carry only the old flag ``reconstructed``: read as ``hand`` in a
    contributor's record (read from the note by the maintainers) and ``search`` otherwise (the
    campaign import's reconstruction search, copied by the policy records)."""
    src = inp.get("source")
    if src in SOURCES:
        return str(src)
    if str((record or {}).get("source")) == "contributor":
        return "hand"
    if str((record or {}).get("source")) == "physician" and not inp.get("reconstructed"):
        return "physician"
    return "search"


def inert_inputs(calculator_id: int, entities: Mapping[str, Any], inputs: list[dict[str, Any]],
                 definition: Any = None) -> list[int]:
    """Positions of the inputs that change nothing: without each (one at a time, keeping the others
    that matter) the definition gives the same value."""
    keep = list(range(len(inputs)))
    full = derive(calculator_id, entities, inputs, definition).value
    out = []
    for n in range(len(inputs)):
        trial = [inputs[k] for k in keep if k != n]
        if derive(calculator_id, entities, trial, definition).value == full:
            keep.remove(n)
            out.append(n)
    return out


# How a shipped verified label derives (``Derivation Status`` of releases from 2.1.0 on).
DERIVED = ("reproduced", "inputs-recorded", "alternative", "na-justified")  # the label is its derivation
UNDERIVED = ("override", "unexplained", DISPUTED)                           # listed, never derived


@dataclass(frozen=True)
class LabelDerivation:
    """A shipped label against the derivation its applied record states."""

    status: str                       # one of DERIVED + UNDERIVED
    definition: str                   # the declared version or the alternative applied
    inputs: list[dict[str, Any]]      # the applied record's inputs (empty: the upstream entities as they are)
    value: str | None                 # what the definition gives (None: no value)
    reason: str                       # one sentence: why the status

    extra: dict[str, Any] | None = None  # from EVIDENCE_FROM on: what the evidence gate set aside

    def document(self) -> dict[str, Any]:
        """The ``Derivation`` column: everything needed to recompute the label."""
        return {"status": self.status, "definition": self.definition, "inputs": self.inputs, "value": self.value,
                "reason": self.reason, **(self.extra or {})}


def label_derivation(calculator_id: int, entities: Mapping[str, Any], label: Any, lower: Any, upper: Any,
                     output_type: str, record: Mapping[str, Any] | None, *, note: str | None = None,
                     rules: ReleaseRules = ReleaseRules(), frozen: Mapping[str, Mapping[str, Any]] | None = None
                     ) -> LabelDerivation:
    """How ``label`` (with its limits) derives from the row's upstream ``entities`` and its applied
    ledger ``record`` (its inputs, definition, override, justification): the definition the record
    names (else the declared one) applied to the entities patched by the inputs must grade the label
    correct; an ``N/A`` derives when the definition gives no value or the record states why the note
    cannot answer. ``rules``: the release's (:func:`medcalc_maintained.core.versions.rules`); under its evidence
    gate the recorded inputs are held to the verifier (:func:`evidenced_derivation`)."""
    if rules.evidence_gate:
        return evidenced_derivation(calculator_id, entities, label, lower, upper, output_type, record, note, frozen)
    rec = record or {}
    inputs = [dict(i) for i in rec.get("inputs") or []]
    d = derive(calculator_id, entities, inputs, rec.get("definition"))
    if rec.get("override") is not None:
        return LabelDerivation("override", d.definition, inputs, d.value,
                               f"physician override: {rec['override'].get('reason')}")
    if parse_answer(label, output_type).is_abstain:
        why = str(rec.get("justification") or "").strip()
        if d.value is None:
            return LabelDerivation("na-justified", d.definition, inputs, None, why or f"{d.definition} gives {d.shown}")
        if why:
            return LabelDerivation("na-justified", d.definition, inputs, d.value, why)
        return LabelDerivation("unexplained", d.definition, inputs, d.value,
                               f"N/A, but {d.definition} gives {d.value} and no justification is recorded")
    if reproduces(d.value, label, lower, upper, output_type):
        status = "alternative" if alternative_of(calculator_id, rec.get("definition")) else (
            "inputs-recorded" if inputs else "reproduced")
        return LabelDerivation(status, d.definition, inputs, d.value, f"{d.definition} gives {d.value}")
    return LabelDerivation("unexplained", d.definition, inputs, d.value,
                           f"{d.definition} gives {d.shown} from the recorded inputs, not {label}")


def evidenced_derivation(calculator_id: int, entities: Mapping[str, Any], label: Any, lower: Any, upper: Any,
                         output_type: str, record: Mapping[str, Any] | None, note: str | None,
                         frozen: Mapping[str, Mapping[str, Any]] | None = None) -> LabelDerivation:
    """:func:`label_derivation` under the evidence gate (releases from ``EVIDENCE_FROM`` on):

    * every input states its ``source`` (:func:`input_source`) and the verifier's ``verdict``
      (:func:`medcalc_maintained.calculators.evidence.verify`); the old flag ``reconstructed`` is gone;
    * inputs that change nothing (:func:`inert_inputs`) are set aside under ``inert_inputs``;
    * a label derives from recorded inputs only where the verifier accepts every one of them: an
      input it rejects makes the label ``unexplained`` (kept, listed, never derived), the reason
      naming input, quote and rule; ``frozen`` holds the verdicts a published release published
      (:func:`medcalc_maintained.ledger.published.verdict_key`), which a later verifier never changes;
    * an N/A label carries no numeric ``value``: what the definition would compute from upstream's
      entities sits under ``value_from_upstream_entities``.
    """
    from medcalc_maintained.calculators.evidence import describe

    rec = dict(record or {})
    inputs = [{**{k: v for k, v in i.items() if k != "reconstructed"}, "source": input_source(record, i)}
              for i in rec.get("inputs") or []]
    definition = rec.get("definition")
    inert = inert_inputs(calculator_id, entities, inputs, definition) if inputs else []
    kept = [i for n, i in enumerate(inputs) if n not in inert]
    extra: dict[str, Any] = {}
    if inert:
        extra["inert_inputs"] = [inputs[n]["name"] for n in inert]
    verdicts = [input_verdict(calculator_id, i, note, frozen) for i in kept]
    for i, v in zip(kept, verdicts):
        i["verdict"] = v.document()
    base = label_derivation(calculator_id, entities, label, lower, upper, output_type,
                            {**rec, "inputs": kept})
    abstain = parse_answer(label, output_type).is_abstain
    value = None if abstain else base.value  # an N/A ships no number
    if abstain and base.value is not None:
        extra["value_from_upstream_entities"] = base.value
    bad = [(i, v) for i, v in zip(kept, verdicts) if not v.supports]
    if bad and base.status in DERIVED:
        why = "; ".join(describe(i, v) for i, v in bad)
        return LabelDerivation("unexplained", base.definition, kept, value,
                               f"the evidence verifier rejects {len(bad)} recorded input(s): {why}", extra or None)
    reason = base.reason + (f"; inputs that change nothing set aside: {', '.join(extra['inert_inputs'])}"
                            if inert and not abstain else "")
    return LabelDerivation(base.status, base.definition, kept, value, reason, extra or None)


def input_verdict(calculator_id: int, inp: Mapping[str, Any], note: str | None,
                  frozen: Mapping[str, Mapping[str, Any]] | None, carried: bool = False) -> Any:
    """The verdict on one input: as its published release published it, else the verifier's. ``frozen`` is the
    verdicts of the input's published release (``None``: not published); an input of a published release
    that they do not name is one a ledger rebase carried onto another upstream note (its record is the one
    the release published: ``ledger/published.py: published_problems``), and keeps the decision."""
    from medcalc_maintained.calculators.evidence import Verdict, verify
    from medcalc_maintained.ledger.published import verdict_key

    if frozen is not None:
        doc = frozen.get(verdict_key(calculator_id, note, inp))
        if doc is None and carried:  # a ledger record, never a shipped file (a tampered input is re-verified)
            return Verdict(True, "published", "the record's release published this input; a rebase carried it")
        if doc is None:
            return verify(calculator_id, inp, note)
        return Verdict(bool(doc["supports"]), str(doc["rule"]), str(doc["reason"]))
    return verify(calculator_id, inp, note)


def label_record(by_id: Mapping[str, Mapping[str, Any]], correction_ids: Iterable[str]) -> Mapping[str, Any] | None:
    """The record a row's label derives from: the last of its ``Correction IDs`` that set the label
    (a ``disputed`` record leaves the label as it was, so the one before it); ``None`` for none."""
    applied = [by_id[i] for i in correction_ids if i in by_id]
    return next((r for r in reversed(applied) if r.get("decision") != DISPUTED), None)


def disputed_document(doc: dict[str, Any], record: Mapping[str, Any], label: Any) -> dict[str, Any]:
    """The ``Derivation`` of a ``disputed`` row: status ``disputed``, the value the disputing record's
    reading gives and why, and the label's own derivation status (``label_status``) beside it."""
    return {**doc, "status": DISPUTED, "label_status": doc["status"],
            "disputed": {"value": record.get("new_value"), "record": record.get("id"),
                         "reason": record.get("rationale")},
            "reason": f"disputed: a reading of the note gives {record.get('new_value')}, not the label {label} "
                      f"({record.get('id')}); the label stays until a record decides it"}


def row_derivations(maintained: Any, instances: Any, records: Iterable[Any], *, rules: ReleaseRules = ReleaseRules(),
                    frozen: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any] | None]:
    """The ``Derivation`` document (:meth:`LabelDerivation.document`) of every verified row of a
    maintained frame (``None`` for an unverified row): its label against the derivation its last
    applied record states. ``instances`` gives each row's upstream ``entities``; ``records`` are
    the ledger's records (:class:`~medcalc_maintained.ledger.records.Record`)."""
    ents = {(str(s), int(u)): e for s, u, e in zip(instances["split"], instances["uid"], instances["entities"])}
    notes = {(str(s), int(u)): n for s, u, n in zip(instances["split"], instances["uid"], instances["Patient Note"])} \
        if rules.evidence_gate else {}
    by_id = {r.id: r.data for r in records if r.valid}
    out: list[dict[str, Any] | None] = []
    for r in maintained.to_dict("records"):
        if str(r["Label Status"]) == "unverified":
            out.append(None)
            continue
        ids = [i for i in str(r.get("Correction IDs") or "").split(";") if i]
        dispute = by_id.get(ids[-1]) if ids and str(r["Label Status"]) == DISPUTED else None
        d = label_derivation(int(r["Calculator ID"]), entities_or_empty(ents.get((str(r["split"]), int(r["uid"])))),
                             r["Ground Truth Answer"], r["Lower Limit"], r["Upper Limit"], str(r["Output Type"]),
                             label_record(by_id, ids), rules=rules,
                             note=notes.get((str(r["split"]), int(r["uid"]))), frozen=frozen)
        out.append(d.document() if dispute is None else disputed_document(d.document(), dispute, r["Ground Truth Answer"]))
    return out


__all__ = ["DERIVED", "SOURCES", "UNDERIVED", "Derivation", "LabelDerivation", "alternative_of", "definition_problem",
           "alternatives", "derive", "entity_value", "evidenced_derivation", "inert_inputs", "input_entity_text", "input_problems",
           "input_verdict", "input_source", "input_text", "label_record", "label_derivation", "parse_document", "patch", "reproduces",
           "row_derivations"]
