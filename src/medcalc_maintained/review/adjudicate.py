"""Adjudicating a filled packet into ledger records, and writing them.

Each answered row becomes one record (``source: physician``, ``blinded: true``, the reviewer's
id/role/specialty, the answer as ``new_value``, the comment as rationale; ``old_value`` is the
maintained label at import time, ``label_status`` follows from the two by
:func:`medcalc_maintained.core.labels.status_of`). Adjudication (``triage.adjudication.agree_with``):
the answer is ``accepted`` when it agrees, by :func:`medcalc_maintained.core.answers.labels_agree`,
with one of the references listed there — ``relabel`` (the independent relabel label),
``physician`` (an earlier, deferred physician answer on the same row: two physicians agree) or
``current`` (the maintained label); an empty list accepts every answer. Otherwise the record is
written ``deferred`` with the physician's answer as ``new_value`` and the disagreeing relabel label
as ``second_opinion``, and the triage queue routes the row to a second reviewer.

The records are written with :func:`medcalc_maintained.ledger.write.write_checked` (checked with the
whole ledger against the instances first); a ledger problem of a new record is reported at its
packet row, and nothing is written when there is any problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from medcalc_maintained.calculators.policy import guideline_version
from medcalc_maintained.core.answers import Answer, format_answer, labels_agree, parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import row_style, status_of
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger import rules
from medcalc_maintained.ledger.apply import check_and_apply
from medcalc_maintained.ledger.error_types import classify_error, explain, gather
from medcalc_maintained.ledger.records import LedgerError, collect, dump, state_change_severity
from medcalc_maintained.ledger.write import ledger_lock, write_checked
from medcalc_maintained.planning.triage import Deferred, Reviewer, deferred_reviews
from medcalc_maintained.review.layout import META, REVIEW, PacketError, PacketProblem, row_id
from medcalc_maintained.review.packet import keyed, row_at
from medcalc_maintained.review.reader import Item, Packet, read_packet

REFERENCES = ("relabel", "physician", "current")
# review import writes new records for rows the triage queue routed to the reviewer: the triage
# stage is their proposer (``proposed_by``; the specialty is the one it routed the row to)
ROUTED_BY = {"id": "triage", "role": "pipeline"}


@dataclass
class Adjudication:
    """``triage.adjudication``: the references an answer must agree with, and the record id prefix."""

    agree_with: tuple[str, ...]
    id_prefix: str

    @classmethod
    def from_section(cls, section: dict[str, Any], where: str = "params.yaml") -> "Adjudication":
        """From the ``triage`` section (as the project merges it)."""
        adj = section["adjudication"]
        refs = tuple(adj["agree_with"] or ())
        bad = [r for r in refs if r not in REFERENCES]
        if bad:
            raise DataError(where, f"unknown adjudication reference(s) {bad}; known: {list(REFERENCES)}",
                            field="triage.adjudication.agree_with")
        return cls(refs, str(adj["id_prefix"]))


@dataclass
class _Relabel:
    text: str               # how the evidence names the relabel
    value: str | None       # its label, when it has one


def _relabel_of(rl: pd.DataFrame | None, key: tuple[str, int]) -> _Relabel:
    if rl is None or key not in rl.index:
        return _Relabel("relabel: no label for this row", None)
    r = row_at(rl, key)
    prov = "/".join(str(r[c]) for c in ("backend", "model") if c in r.index and str(r[c]) not in ("", "None", "nan"))
    if str(r["status"]) == "labeled":
        value = str(r["label"])
        return _Relabel(f"relabel ({prov}): {value}" if prov else f"relabel: {value}", value)
    return _Relabel(f"relabel ({prov}): deferred, no supermajority" if prov else "relabel: deferred", None)


def _agree(answer: Answer, reference: str, otype: str) -> bool:
    ref = parse_answer(reference, otype)
    if ref.kind == "invalid":
        return False
    return labels_agree(answer, ref, otype)


def _references(adjudication: Adjudication, relabel: _Relabel, earlier: list[dict[str, Any]],
                old: str) -> list[tuple[str, str]]:
    refs: list[tuple[str, str]] = []
    if "relabel" in adjudication.agree_with and relabel.value is not None:
        refs.append(("the relabel label", relabel.value))
    if "physician" in adjudication.agree_with:
        refs.extend((f"physician {p['reviewer']} ({p['id']})", str(p["value"])) for p in earlier)
    if "current" in adjudication.agree_with:
        refs.append(("the maintained label", old))
    return refs


def _record(it: Item, packet: Packet, reviewer: Reviewer, row: pd.Series, relabel: _Relabel, finding: str | None,
            earlier: list[dict[str, Any]], adjudication: Adjudication, decided_at: str) -> dict[str, Any]:
    otype = str(row["Output Type"])
    old = str(row["Ground Truth Answer"])
    new_value = format_answer(it.answer, otype, row_style(row))
    original = str(row.get("Original Ground Truth Answer", old))
    status = status_of(it.answer, original, otype)  # said of the row against its upstream label
    reconfirms = status == "corrected" and _agree(it.answer, old, otype)  # agrees with the corrected label
    if status == "confirmed":
        new_value = original  # a confirmation ships the upstream label value for value, never a recomputed number
    refs = _references(adjudication, relabel, earlier, old)
    agreeing = [name for name, value in refs if _agree(it.answer, value, otype)]
    accepted = bool(agreeing) or not adjudication.agree_with
    evidence = [f"review packet {packet.path.name}, sheet {REVIEW}, row {it.row} ({row_id(it.split, it.uid)})", relabel.text]
    if finding:
        evidence.append(f"recompute audit finding: {finding}")
    cid = int(row["calculator_id"])
    ev = gather(cid, entities_or_empty(row.get("entities")), original, new_value, otype, rationale=it.comment or "",
                finding=finding) if status == "corrected" and not reconfirms else None
    evidence.extend(explain(ev) if ev is not None else [])
    if reconfirms:
        evidence.append(f"re-confirms the corrected label {old} (upstream {original}); its error type is kept")
    evidence.extend(f"earlier deferred physician review {p['id']} by {p['reviewer']}: {p['value']}" for p in earlier)
    if accepted:
        evidence.append("accepted: agrees with " + (", ".join(agreeing) if agreeing else "no reference required"))
    else:
        names = ", ".join(n for n, _ in refs) or "no reference available"
        evidence.append(f"deferred: disagrees with {names}; a second reviewer is needed")
    rec: dict[str, Any] = {
        "id": f"{adjudication.id_prefix}-{reviewer.id}-{it.split}-{it.uid:05d}",
        "uid": it.uid,
        "split": it.split,
        "old_value": old,
        "new_value": new_value,
        "decision": "accepted" if accepted else "deferred",
        "label_status": status,
        # a re-confirmation keeps the error type the row already has
        "error_type": (reconfirms and str(row.get("Error Type") or "")) or classify_error(status, it.comment, finding, ev),
        "rationale": it.comment or f"Blinded recomputation by {reviewer.id} gave {new_value} (no comment).",
        "evidence": evidence,
        "source": "physician",
        "reviewer": reviewer.as_record(),
        "proposed_by": dict(ROUTED_BY, specialty=reviewer.specialty),
        "blinded": True,
        "decided_at": decided_at,
    }
    if it.timepoint:
        rec["scoring_timepoint"] = it.timepoint
    rec["guideline_version"] = it.guideline or guideline_version(cid)
    state_change_severity(rec, cid, otype, entities_or_empty(row.get("entities")))
    if not accepted:
        rec["second_opinion"] = relabel.value if relabel.value is not None else (
            str(earlier[-1]["value"]) if earlier else None)
    return rec


def build_records(packet: Packet, reviewer: Reviewer, instances: pd.DataFrame, maintained: pd.DataFrame,
                  relabel: pd.DataFrame | None, recompute: pd.DataFrame | None, prior: Deferred,
                  adjudication: Adjudication, *, decided_at: str) -> list[dict[str, Any]]:
    """One ledger record per answered packet row, adjudicated (see the module docstring)."""
    cur = keyed(maintained)
    rl = None
    if relabel is not None:
        rl = relabel.copy()
        if "split" not in rl.columns:
            rl["split"] = str(instances["split"].iloc[0])
        rl = keyed(rl)
    rc = keyed(recompute) if recompute is not None else None
    records = []
    for it in packet.items:
        key = (it.split, it.uid)
        finding = str(rc.loc[key, "finding"]) if rc is not None and key in rc.index else None
        records.append(_record(it, packet, reviewer, row_at(cur, key), _relabel_of(rl, key), finding, prior.get(key, []),
                               adjudication, decided_at))
    return records


def _at_packet_rows(exc: LedgerError, out: Path, packet: Packet, records: list[dict[str, Any]]) -> PacketError:
    """The ledger problems of the new file, each named by its packet row's cell; others as they are."""
    where = str(packet.path)
    rows = {rec["id"]: it.row for it, rec in zip(packet.items, records)}
    return PacketError([
        PacketProblem(where, REVIEW, f"A{rows[p.record]}", f"record {p.record}"
                      + (f", field {p.field!r}" if p.field else "") + f": {p.problem}")
        if p.path == str(out) and p.record in rows else p
        for p in exc.problems])


def _underivable(packet: Packet, records: list[dict[str, Any]], instances: pd.DataFrame, where: str) -> list[PacketProblem]:
    """One problem per answer the row's declared definition cannot produce (e.g. a GCS total with a
    component not testable under ``gcs-1974-not-testable-undefined``): such a value needs a named
    alternative definition or an override, which a packet answer cannot state (``propose`` can)."""
    rows = keyed(instances)  # looked up per packet row, not converted whole (notes and all)
    out = []
    for it, rec in zip(packet.items, records):
        key = (str(it.split), int(it.uid))
        if key not in rows.index:
            continue
        row = row_at(rows, key)
        p = rules.underivable_problem(rec, calculator_id=int(row["Calculator ID"]), output_type=str(row["Output Type"]),
                                      entities=row.get("entities"))
        if p:
            out.append(PacketProblem(where, REVIEW, f"A{it.row}", f"row {row_id(it.split, it.uid)}: {p} (with "
                                     "`medcalc-maintained propose --definition` or `--override-reason`)"))
    return out


def import_packet(path: Path, *, instances: pd.DataFrame, ledger_paths: list[Path], relabel: pd.DataFrame | None,
                  recompute: pd.DataFrame | None, reviewers: list[Reviewer], adjudication: Adjudication,
                  out: Path, decided_at: str, partial: bool = False,
                  next_free: bool = False, exports: Path | None = None,
                  frozen: Mapping[str, Any] | None = None) -> tuple[list[dict[str, Any]], Packet]:
    """Read, adjudicate, check and write a packet's records to ``out`` (``next_free``: or, when ``out``
    exists, to the first free ``<stem>-N<suffix>`` beside it; ``packet.written`` names the file),
    holding the ledger lock of ``out``'s directory; nothing is written on error. ``frozen``: the published
    releases' input verdicts (``ledger/published.py: frozen_verdicts``), which hold their records."""
    out = Path(out)
    packet = read_packet(path, instances, partial=partial, exports=exports)
    with ledger_lock(out.parent):
        return _import_locked(packet, instances=instances, ledger_paths=ledger_paths, relabel=relabel,
                              recompute=recompute, reviewers=reviewers, adjudication=adjudication, out=out,
                              decided_at=decided_at, next_free=next_free, frozen=frozen)


def _import_locked(packet: Packet, *, instances: pd.DataFrame, ledger_paths: list[Path], relabel: pd.DataFrame | None,
                   recompute: pd.DataFrame | None, reviewers: list[Reviewer], adjudication: Adjudication,
                   out: Path, decided_at: str, next_free: bool,
                   frozen: Mapping[str, Any] | None = None) -> tuple[list[dict[str, Any]], Packet]:
    """The ledger read, check and write of :func:`import_packet`, under the ledger lock."""
    path = packet.path
    base, n = out, 2
    while next_free and out.exists():
        out, n = base.with_name(f"{base.stem}-{n}{base.suffix}"), n + 1
    if out.exists():
        raise DataError(out, "already exists; choose another --out (ledger files are never overwritten)")
    where = str(path)
    by_id = {r.id: r for r in reviewers}
    if packet.reviewer_id not in by_id:
        raise PacketError([PacketProblem(where, META, "B2", f"reviewer {packet.reviewer_id!r} is not in params.yaml "
                                         f"triage.reviewers ({', '.join(by_id) or 'none'})")])
    reviewer = by_id[packet.reviewer_id]
    existing, problems = collect(ledger_paths)
    if problems:
        raise LedgerError(problems)
    maintained = check_and_apply(instances, existing, frozen=frozen)
    records = build_records(packet, reviewer, instances, maintained, relabel, recompute, deferred_reviews(existing),
                            adjudication, decided_at=decided_at)
    taken = {r.id: r.path for r in existing}
    clash = [PacketProblem(where, REVIEW, f"A{it.row}", f"row {row_id(it.split, it.uid)} was already imported "
                           f"for reviewer {reviewer.id} (record {rec['id']} in {taken[rec['id']]})")
             for it, rec in zip(packet.items, records) if rec["id"] in taken]
    if clash:
        raise PacketError(clash)
    underivable = _underivable(packet, records, instances, where)
    if underivable:
        raise PacketError(underivable)
    batch = {"name": out.stem, "description": f"Single-blind physician review by {reviewer.id}"
             + (f" ({reviewer.specialty})" if reviewer.specialty else ""), "source_files": [packet.path.name]}
    header = (f"Imported by `medcalc-maintained review import {packet.path.name}`.\n"
              "Physician answers from a single-blind review packet; accepted records change the maintained label,\n"
              "deferred ones wait for a second reviewer.")
    try:
        write_checked(out, dump(records, out, batch=batch, header=header), others=existing, instances=instances,
                      frozen=frozen)
    except LedgerError as exc:
        raise _at_packet_rows(exc, out, packet, records) from None
    packet.written = out
    return records, packet
