"""Policy records: labels brought back to what their status and their declared definition say.

The campaign records of release 2.0.0 carry two kinds of label that contradict the project's own
rules. This module decides them under the declared policy, as ledger records of the next maintained
release (``source: policy``, reviewer role ``policy``), so that the earlier release stays as it was
published and every change is a record with its reason:

``harmonize``
    a *definition contradiction* (the campaign's reconstruction class ``definition-contradiction``):
    the adjudicated label follows a definition other than the row's declared one (e.g. CDC-2016
    opioid factors on a row declaring ``cdc-2022-mme``), or is ``N/A`` although the declared
    definition's own convention computes a value (Child-Pugh's unmentioned ascites). The label
    becomes the declared definition's value from the adjudicated inputs (the upstream entities
    patched by the record's inputs); the record keeps the adjudicated value and the definition it
    followed under ``adjudicated``. A harmonized value that agrees with the upstream label is the
    upstream label, text for text (``confirmed``).
``restore``
    a ``confirmed`` row whose label text is not the upstream one (2.0.0 shipped the audit's
    recomputed number, e.g. ``25.24`` for upstream's ``25.238``, inside the tolerance): a confirmed
    label is upstream's, value for value, so the record sets the upstream text back.

A contradiction whose declared definition computes no value from the adjudicated inputs becomes
``N/A`` with that reason as its justification.

From release 2.2.0 on (``core/versions.py: EVIDENCE_FROM``) harmonization never turns a justified
``N/A`` into a number unless every input the declared definition reads from the row (each entity
value that changes the result) is stated by a quote the evidence verifier accepts
(:func:`unevidenced_inputs`; ``calculators/evidence.py``); otherwise the N/A stands with its reason.
:func:`revert_records` are the records of such a release that set back the earlier releases'
harmonizations that broke this rule (MDRD 146 and 152: upstream's "creatinine" is another lab).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

import pandas as pd

from medcalc_maintained.calculators.evidence import find_evidence
from medcalc_maintained.calculators.inputs import declared_inputs
from medcalc_maintained.core.answers import format_answer, labels_agree, parse_answer
from medcalc_maintained.core.labels import label_style
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.core.versions import rules
from medcalc_maintained.ledger.derivation import Derivation, derive, patch

POLICY_REVIEWER = {"id": "definition-policy", "role": "policy", "specialty": None}
POLICY_FILE = "src/medcalc_maintained/calculators/definitions.yaml"


def _row_index(instances: pd.DataFrame) -> dict[tuple[str, int], dict[Any, Any]]:
    return {(str(r["split"]), int(r["uid"])): r for r in instances.to_dict("records")}


def _base(rec: Mapping[str, Any], rid: str, release: str, decided_at: str) -> dict[str, Any]:
    return {"id": rid, "uid": int(rec["uid"]), "split": str(rec["split"]), "release": release,
            "old_value": str(rec["new_value"]), "decision": "accepted", "source": "policy",
            "reviewer": dict(POLICY_REVIEWER), "blinded": False, "decided_at": decided_at}


def harmonized(rec: Mapping[str, Any], row: Mapping[str, Any]) -> tuple[str, str, Derivation]:
    """(new label, label status, the declared definition's derivation) of a definition
    contradiction: ``N/A`` (abstain) when the declared definition computes no value from the
    adjudicated inputs (e.g. a GCS with a component not testable under
    ``gcs-1974-not-testable-undefined``); the upstream text when the value agrees with it."""
    cid, otype, upstream = int(row["Calculator ID"]), str(row["Output Type"]), str(row["Ground Truth Answer"])
    d = derive(cid, entities_or_empty(row.get("entities")), rec.get("inputs"), None)
    if d.value is None:
        return "N/A", "abstain", d
    if parse_answer(upstream, otype).is_valid and labels_agree(d.value, upstream, otype):
        return upstream, "confirmed", d
    return format_answer(d.value, otype, label_style(upstream, otype)), "corrected", d


def _harmonize_record(rec: Mapping[str, Any], row: Mapping[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    new, status, d = harmonized(rec, row)
    cid, was = int(row["Calculator ID"]), str(rec["new_value"])
    declared = f"{d.definition} ({POLICY_FILE}, calculator {cid})"
    alternative = rec.get("definition") or "the reviewer's reading (N/A)"
    followed = f"the adjudicated label {was} follows {alternative}"
    if status == "abstain":
        why = f"{followed}, but the row declares {declared}, under which the adjudicated inputs give {d.shown}: N/A."
    elif was.strip().upper() == "N/A":
        why = (f"the adjudicated label is N/A, but the declared {declared} decides the missing criterion by its own "
               f"convention and gives {new} from the adjudicated inputs.")
    else:
        why = f"{followed}, but the row declares {declared}, which gives {new} from the adjudicated inputs."
    return {**base, "new_value": new, "label_status": status,
            "error_type": {"confirmed": None, "abstain": "unanswerable"}.get(status, rec.get("error_type") or "other"),
            "rationale": f"Definition harmonization: {why}",
            "evidence": [f"{POLICY_FILE}: calculator {cid} declares {d.definition}",
                         f"adjudicated by ledger record {rec['id']}: {was}"],
            "guideline_version": d.definition, "definition": d.definition,
            **({"inputs": rec["inputs"]} if rec.get("inputs") else {}),
            "adjudicated": {"value": was, "definition": rec.get("definition")},
            "reconstruction": "definition-contradiction",
            **({"justification": f"the declared {d.definition} gives {d.shown}"} if status == "abstain" else {})}


def _restore_record(rec: Mapping[str, Any], row: Mapping[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    upstream = str(row["Ground Truth Answer"])
    return {**base, "new_value": upstream, "label_status": "confirmed", "error_type": None,
            "rationale": (f"A confirmed label is the upstream label, value for value: the audit confirmed upstream's "
                          f"{upstream} and {rec['new_value']} was its recomputation inside the tolerance."),
            "evidence": [f"confirmed by ledger record {rec['id']}: {rec['new_value']} agrees with upstream {upstream}"],
            **({"inputs": rec["inputs"]} if rec.get("inputs") else {}),
            **({"guideline_version": rec["guideline_version"]} if rec.get("guideline_version") else {}),
            "reconstruction": rec.get("reconstruction")}


def unevidenced_inputs(calculator_id: int, entities: Mapping[str, Any], inputs: Any, note: str
                       ) -> list[tuple[str, Any, str]]:
    """``(input, value, why)`` of each value the declared definition reads from the row (the upstream
    entities patched by ``inputs``) that no sentence of ``note`` states (the evidence verifier
    rejects every candidate quote). Values that change nothing are not needed; an absent criterion
    is decided by the definition's convention; a recorded input stands on its own quote."""
    ents = patch(entities, inputs)
    recorded = {str(i.get("name")).lower() for i in inputs or () if isinstance(i, Mapping)}
    full = derive(calculator_id, ents).value
    out: list[tuple[str, Any, str]] = []
    lowered = {str(k).strip().lower(): k for k in ents}
    for spec in declared_inputs(int(calculator_id)):
        key = lowered.get(spec.name.lower()) or next((lowered[a.lower()] for a in spec.aliases if a.lower() in lowered), None)
        if key is None or str(key).lower() in recorded:
            continue
        raw = ents[key]
        if raw is None or raw is False or spec.accessor in ("date", "text", "steroid_dose", "opioid_list"):
            continue
        without = {k: v for k, v in ents.items() if k != key}
        if derive(calculator_id, without).value == full:
            continue
        value, unit = (raw[0], raw[1]) if isinstance(raw, (list, tuple)) and len(raw) == 2 else (raw, None)
        if find_evidence(calculator_id, spec.name, value, unit, note or "") is None:
            shown = f"{value} {unit}" if unit else f"{value}"
            out.append((spec.name, value, f"upstream's {spec.name} = {shown} is stated by no sentence of the note "
                                          "that the evidence verifier accepts"))
    return out


def revert_records(policy: Iterable[Mapping[str, Any]], instances: pd.DataFrame, *, release: str, id_prefix: str,
                   decided_at: str) -> list[dict[str, Any]]:
    """Records of ``release`` that set a harmonized number back to the adjudicated ``N/A`` where the
    declared definition's inputs are not evidenced in the note (:func:`unevidenced_inputs`)."""
    rows = _row_index(instances)
    out: list[dict[str, Any]] = []
    for rec in policy:
        adj = rec.get("adjudicated") or {}
        if rec.get("decision") != "accepted" or str(adj.get("value", "")).strip().upper() != "N/A" \
                or str(rec.get("new_value", "")).strip().upper() == "N/A":
            continue
        row = rows.get((str(rec["split"]), int(rec["uid"])))
        if row is None:
            continue
        cid = int(row["Calculator ID"])
        missing = unevidenced_inputs(cid, entities_or_empty(row.get("entities")), rec.get("inputs"),
                                     str(row.get("Patient Note") or ""))
        if not missing:
            continue
        why = "; ".join(m[2] for m in missing)
        base = _base(rec, f"{id_prefix}-{len(out) + 1:05d}", release, decided_at)
        out.append({**base, "new_value": "N/A", "label_status": "abstain", "error_type": "unanswerable",
                    "rationale": (f"Evidence rule ({release}): {rec['id']} turned the adjudicated N/A into "
                                  f"{rec['new_value']} under the declared definition's convention, but the definition "
                                  f"also needs inputs the note does not state: {why}. The N/A stands."),
                    "evidence": [f"harmonized by ledger record {rec['id']}: N/A -> {rec['new_value']}",
                                 *[f"calculators/evidence.py: {m[2]}" for m in missing]],
                    "justification": why, "reconstruction": "na-justified",
                    "adjudicated": {"value": "N/A", "definition": None}})
    return out


def policy_records(records: Iterable[Mapping[str, Any]], instances: pd.DataFrame, *, release: str, id_prefix: str,
                   decided_at: str) -> list[dict[str, Any]]:
    """The ``harmonize`` and ``restore`` records for the accepted ``records`` (the campaign's), in
    record order. From ``EVIDENCE_FROM`` on, an N/A whose declared definition needs an input the
    note does not state (:func:`unevidenced_inputs`) is not harmonized: it stands."""
    rows = _row_index(instances)
    out: list[dict[str, Any]] = []
    for rec in records:
        if rec.get("decision") != "accepted":
            continue
        row = rows.get((str(rec["split"]), int(rec["uid"])))
        if row is None:
            continue
        base = _base(rec, f"{id_prefix}-{len(out) + 1:05d}", release, decided_at)
        if rec.get("reconstruction") == "definition-contradiction":
            if rules(release).evidence_gate and str(rec.get("new_value", "")).strip().upper() == "N/A" and \
                    unevidenced_inputs(int(row["Calculator ID"]), entities_or_empty(row.get("entities")),
                                       rec.get("inputs"), str(row.get("Patient Note") or "")):
                continue
            out.append(_harmonize_record(rec, row, base))
        elif rec.get("label_status") == "confirmed" and str(rec["new_value"]) != str(row["Ground Truth Answer"]):
            out.append(_restore_record(rec, row, base))
    return out


def summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of the policy records by rule and status."""
    by_rule: dict[str, Counter[str]] = {}
    for r in records:
        by_rule.setdefault("harmonize" if r.get("adjudicated") else "restore", Counter())[r["label_status"]] += 1
    return {"records": len(records),
            "by_rule": {rule: dict(sorted(c.items())) for rule, c in sorted(by_rule.items())}}
