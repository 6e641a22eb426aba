"""``propose``: append a contributor's label correction to the ledger as a deferred record."""

from __future__ import annotations

import datetime as dt
import functools
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import pandas as pd

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import row_style, status_of, write_label
from medcalc_maintained.core.ledger_files import ledger_files
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.core.yaml_text import load_yaml
from medcalc_maintained.ledger import rules
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.ledger.published import frozen_verdicts, load_published
from medcalc_maintained.ledger.quotes import QUOTE_RULE, QuoteError, evidence_line, locate_inputs
from medcalc_maintained.ledger.records import (
    ERROR_TYPES,
    SOURCES,
    LedgerError,
    LedgerProblem,
    append,
    collect,
    dump,
    load,
    read_derivation_file,
    state_change_severity,
)
from medcalc_maintained.ledger.write import ledger_lock, ledger_target, write_checked
from medcalc_maintained.project import Project

PROPOSAL_PREFIX = "C-"
NEW_FILE_HEADER = ("Label corrections proposed with `medcalc-maintained propose` (decision: deferred until a\n"
                   "reviewer adjudicates them; see CONTRIBUTING.md).")


def _history_ids(root: Path, paths: list[Path]) -> set[str]:
    """Ids that ever appeared in the git history of the ledger paths (ids are never reused)."""
    rels = []
    for p in paths:
        try:
            rels.append(p.resolve().relative_to(root).as_posix())
        except ValueError:
            continue
    if not rels or not (root / ".git").exists():
        return set()
    proc = subprocess.run(["git", "log", "--all", "--format=", "-p", "--", *rels], cwd=root, capture_output=True)
    if proc.returncode != 0:
        return set()
    return set(re.findall(r"\bid:\s*['\"]?([A-Za-z0-9][A-Za-z0-9._-]+)", proc.stdout.decode(errors="replace")))


def next_id(used: Iterable[str], prefix: str = PROPOSAL_PREFIX) -> str:
    pat = re.compile(rf"^{re.escape(prefix)}(\d+)$")
    n = max((int(m.group(1)) for u in used if (m := pat.match(u))), default=0)
    return f"{prefix}{n + 1:04d}"


@dataclass
class Proposal:
    record: dict[str, Any]
    path: Path


def _check_arguments(rationale: str, source: str, error_type: str | None) -> str | None:
    if not rationale or not rationale.strip():
        raise DataError("--rationale", "must say why the label is wrong (or right)")
    if source not in SOURCES:
        raise DataError("--source", f"{source!r} is not one of {', '.join(SOURCES)}")
    etype = None if error_type in ("none", "", None) else error_type
    if etype is not None and etype not in ERROR_TYPES:
        raise DataError("--error-type", f"{error_type!r} is not one of {', '.join(ERROR_TYPES)} or none")
    return etype


def _refuse(target: Path, rec: dict[str, Any], row: pd.Series, entities: Any = None) -> None:
    """Raise every record rule (:mod:`medcalc_maintained.ledger.rules`) the new record breaks, before
    anything is formatted: the value as given, never rounded or coerced. A value the row's declared
    definition cannot produce is refused unless the record names an alternative or is an override."""
    found = rules.record_problems(rec, calculator_id=row["Calculator ID"], output_type=str(row["Output Type"]),
                                  style=row_style(row), note=row.get("Patient Note"))
    found += rules.derivation_problems(rec, calculator_id=row["Calculator ID"], output_type=str(row["Output Type"]),
                                       style=row_style(row), note=row.get("Patient Note"), entities=entities)
    if (p := rules.underivable_problem(rec, calculator_id=row["Calculator ID"], output_type=str(row["Output Type"]),
                                       entities=entities)):
        found.append(("new_value", p))
    if (p := rules.population_problem(rec, calculator_id=row["Calculator ID"], output_type=str(row["Output Type"]),
                                      entities=entities)):
        found.append(("new_value", p))
    if found:
        raise LedgerError([LedgerProblem(str(target), problem, f"{rec['id']} (new)", field) for field, problem in found])


def current_row(project: Project, split: str, uid: int, instances: pd.DataFrame | None = None, *,
                collected: tuple[list[Any], list[Any]] | None = None) -> pd.Series:
    """The row ``split``/``uid`` with every ledger record applied (drafts included), with its
    upstream ``Relevant Entities``; ``collected``: the ledger's records already read."""
    if instances is None:
        instances = read_parquet(project.instances, "upstream instances", "ingest")
    current = build(instances, project.ledger_paths, upto=None, collected=collected,
                    history=load_published(project.published))
    hit = current[(current["split"].astype(str) == split) & (current["uid"] == int(uid))]
    if hit.empty:
        raise DataError(project.instances, f"uid {uid} does not exist in split {split!r}", row=uid, field="uid")
    return hit.iloc[0]


def _row_of(project: Project, split: str, uid: int) -> tuple[pd.DataFrame, pd.Series]:
    """The upstream instances and the row ``split``/``uid`` as the ledger leaves it (a
    :class:`DataError` when the instances are missing or the row does not exist)."""
    if not project.instances.is_file():
        raise DataError(project.instances, "upstream instances not found (run `dvc repro ingest`)")
    instances = read_parquet(project.instances, "upstream instances", "ingest")
    return instances, current_row(project, split, uid, instances)


def _quote_lines(quotes: list[str], note_of: Callable[[], str | None]) -> list[str]:
    """The ``evidence`` entries of ``propose --quote``: each text located in the row's note
    (:func:`medcalc_maintained.ledger.quotes.evidence_line`); a :class:`DataError` naming the text
    and :data:`~medcalc_maintained.ledger.quotes.QUOTE_RULE` when it is absent or occurs more than once."""
    out = []
    for text in quotes:
        note = note_of()
        if note is None:
            raise DataError("--quote", f"the row has no note to locate {text!r} in")
        try:
            out.append(evidence_line(note, text))
        except QuoteError as exc:
            raise DataError("--quote", f"{exc}; rule: {QUOTE_RULE}") from None
    return out


def _target_file(project: Project, file: Path | None, today: str) -> Path:
    """The file to append to: ``*.yaml``/``*.yml`` directly in the hand-written ledger directory."""
    target = Path(file) if file else project.ledger_dir / f"{today[:7]}-proposals.yaml"
    target = target if target.is_absolute() else project.root / target
    return ledger_target(target, project.ledger_dir, generated=project.generated_ledgers)


def _new_text(target: Path, rec: dict[str, Any]) -> tuple[str | None, str]:
    """(the text read from ``target`` or None, the text with ``rec`` appended, comments kept)."""
    if not target.is_file():
        return None, dump([rec], target, header=NEW_FILE_HEADER)
    text = target.read_text(encoding="utf-8")
    doc = load_yaml(text, where=str(target)) or {}
    if not isinstance(doc, dict):
        raise DataError(target, "expected a mapping with a 'corrections' list", field="corrections")
    if not doc.get("corrections") and "#" not in text:
        return text, dump([rec], target, batch=doc.get("batch"), header="")
    return text, append(text, [rec], target)


def propose(project: Project, *, uid: int, new_value: str, error_type: str, rationale: str, split: str = "test",
            evidence: list[str] | None = None, reviewer_id: str | None = None, reviewer_role: str = "contributor",
            specialty: str | None = None, source: str = "contributor", blinded: bool = False,
            file: Path | None = None, today: str | None = None, definition: str | None = None,
            override_reason: str | None = None, inputs: list[dict[str, Any]] | None = None,
            inputs_file: Path | None = None, quotes: list[str] | None = None) -> Proposal:
    """Append a deferred ledger record to ``file`` (default ``<ledger dir>/<yyyy-mm>-proposals.yaml``).

    ``old_value`` is the current maintained label (every accepted record, released or not, applied),
    ``label_status`` follows from the values, and the id is the next unused ``C-NNNN`` (also
    unused in the git history of the ledger). The whole ledger is checked with the new record
    before the file is replaced atomically. ``definition`` names the alternative definition of
    ``calculators/definitions.yaml`` the value follows; ``override_reason`` makes the record an
    override (a value no derivation gives; it needs a physician reviewer). ``inputs`` are the
    record's inputs (``{name, value, unit, evidence: {start, end, text}, source}``): each quote must
    be accepted by the evidence verifier (``calculators/evidence.py``) and each input must change the
    derivation, or the record is refused naming file, record, input and rule. ``inputs_file``: a
    derivation file (``propose --inputs``) whose ``inputs`` are the record's, read first (a
    :class:`DataError` naming the file and field when it is malformed or over its size limit); an
    input whose evidence is text only gets its offsets in the row's note (``ledger/quotes.py``).
    ``quotes`` (``propose --quote``): texts of the note, each located (it must occur exactly once)
    and added to ``evidence`` with its offsets, ``note[START:END] 'TEXT'``.
    """
    @functools.cache
    def row_read() -> tuple[pd.DataFrame, pd.Series]:  # the instances and the row, read once when first needed
        return _row_of(project, split, uid)

    def note_of() -> str | None:
        note = row_read()[1].get("Patient Note")
        return note if isinstance(note, str) else None

    if inputs_file is not None:
        inputs = read_derivation_file(inputs_file, lambda found: locate_inputs(found, note_of, inputs_file)).get("inputs")
    today = today or dt.date.today().isoformat()
    etype = _check_arguments(rationale, source, error_type)
    instances = row_read()[0]  # bad input fails before waiting for the lock
    evidence = list(evidence or []) + _quote_lines(quotes or [], note_of)
    target = _target_file(project, file, str(today))
    with ledger_lock(project.ledger_dir):
        return _propose_locked(project, instances, target, new_value=new_value, etype=etype,
                               rationale=rationale, split=split, uid=uid, evidence=evidence, reviewer_id=reviewer_id,
                               reviewer_role=reviewer_role, specialty=specialty, source=source, blinded=blinded,
                               today=str(today), definition=definition, override_reason=override_reason,
                               inputs=inputs)


def _propose_locked(project: Project, instances: pd.DataFrame, target: Path, *, new_value: str,
                    etype: str | None, rationale: str, split: str, uid: int, evidence: list[str] | None,
                    reviewer_id: str | None, reviewer_role: str, specialty: str | None, source: str,
                    blinded: bool, today: str, definition: str | None = None,
                    override_reason: str | None = None, inputs: list[dict[str, Any]] | None = None) -> Proposal:
    """The read, check and write of :func:`propose`, under the ledger lock."""
    row = current_row(project, split, uid, instances)
    otype, old = str(row["Output Type"]), str(row["Ground Truth Answer"])
    files = ledger_files([p for p in project.ledger_paths if p.exists()])
    records, problems = collect(files)
    if problems:
        raise LedgerError(problems)
    used = {r.id for r in records} | _history_ids(project.root, project.ledger_paths)
    person = {"id": reviewer_id or os.environ.get("USER") or "anonymous", "role": reviewer_role, "specialty": specialty}
    rec: dict[str, Any] = {
        "id": next_id(used), "uid": int(uid), "split": split, "old_value": old, "new_value": new_value,
        "decision": "deferred", "label_status": None, "error_type": etype,
        "rationale": " ".join(rationale.split()), "evidence": list(evidence or []), "source": source,
        "reviewer": dict(person), "proposed_by": dict(person), "blinded": bool(blinded), "decided_at": today,
    }
    if definition:
        rec["definition"] = definition
    if inputs:
        rec["inputs"] = [{**i, "source": i.get("source") or "hand"} for i in inputs]
    if override_reason is not None:
        rec["override"] = {"reason": " ".join(override_reason.split())}
    key = instances[(instances["split"].astype(str) == split) & (instances["uid"] == int(uid))]
    entities = key["entities"].iloc[0] if len(key) and "entities" in key.columns else None
    _refuse(target, rec, row, entities)
    parsed = parse_answer(new_value, otype)
    new = rec["new_value"] = write_label(new_value, otype, row["Original Ground Truth Answer"])
    original = str(row["Original Ground Truth Answer"])
    orig_answer = parse_answer(original, otype)
    if parsed.is_abstain or (orig_answer.is_valid and not orig_answer.is_abstain):
        status = status_of(parsed, original, otype)  # said of the row against its upstream label
    else:
        status = "corrected"  # the upstream label is N/A or unreadable: any value corrects it
    rec["label_status"] = status
    if status == "confirmed":
        new = rec["new_value"] = original  # a confirmation ships the upstream label value for value
    state_change_severity(rec, row["Calculator ID"], otype, entities_or_empty(row.get("entities")))
    if status == "confirmed" and etype is not None:
        raise DataError("--error-type", f"the new value {new!r} agrees with the upstream label {original!r}: that is a "
                                        "confirmation, pass --error-type none")
    if status != "confirmed" and etype is None:
        raise DataError("--error-type", f"a {status} label needs an error type ({', '.join(ERROR_TYPES)})")
    before, text = _new_text(target, rec)
    others = load([f for f in files if f.resolve() != target.resolve()])
    write_checked(target, text, others=others, instances=instances, expected=before,
                  frozen=frozen_verdicts(project.published))
    return Proposal(rec, target)
