"""What ``ledger derive`` checks before a pull request: a row's label against the derivation of
recorded inputs.

:func:`check_row` reads the row as the ledger leaves it (every record applied, drafts included), takes
the inputs, definition and justification of a derivation file (``--inputs``) or, without one, of the
row's applied ledger record, and returns a :class:`DerivationCheck`: each input with the evidence
verifier's verdict, the problems of the quotes (the quoted text must be the note's own text at its
offsets), and the label's derivation status under the evidence rules of the releases from 2.2.0 on
(:func:`medcalc_maintained.ledger.derivation.label_derivation` with ``evidence=True``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from medcalc_maintained.calculators.evidence import Verdict, verify
from medcalc_maintained.core.answers import limits
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.core.versions import UNRELEASED, rules
from medcalc_maintained.ledger import derivation as D
from medcalc_maintained.ledger.propose import current_row
from medcalc_maintained.ledger.quotes import locate_inputs
from medcalc_maintained.ledger.records import DERIVATION_FIELDS, Record, collect, read_derivation_file
from medcalc_maintained.ledger.rules import fix_hint
from medcalc_maintained.project import Project


@dataclass(frozen=True)
class DerivationCheck:
    """One row's label against the derivation of its recorded inputs (what ``ledger derive`` prints)."""

    split: str
    uid: int
    row: Mapping[str, Any]          # the row with every ledger record applied (its columns as the release has them)
    from_record: bool               # the inputs are those of the row's applied ledger record (no file given)
    inputs: list[dict[str, Any]]    # the recorded inputs, as given
    verdicts: list[Verdict]         # the evidence verifier's verdict on each input, in order
    problems: list[str]             # why a quote is not the note's own text at its offsets (empty: none)
    label: str                      # the label checked: --label, else the row's current label
    result: D.LabelDerivation       # the label's derivation status and reason
    hints: tuple[str, ...] = ()     # per input, how to fix a refused quote where the verdict does not say ("": none)

    @property
    def derives(self) -> bool:
        """Whether the label is its derivation (a status of :data:`~medcalc_maintained.ledger.derivation.DERIVED`)."""
        return self.result.status in D.DERIVED

    @property
    def holds(self) -> bool:
        """The label derives and every quote is the note's own text (``ledger derive`` exits 0)."""
        return self.derives and not self.problems


def applied_derivation(records: list[Record], correction_ids: str) -> dict[str, Any]:
    """``inputs``, ``definition`` and ``justification`` of the last record applied to a row's label
    (``{}`` when none): a ``disputed`` record leaves the label, so the one before it.
    ``correction_ids``: the row's ``Correction IDs`` cell (ids joined by ``;``)."""
    rec = D.label_record({r.id: r.data for r in records if r.valid},
                         [i for i in correction_ids.split(";") if i.strip()])
    return {k: rec.get(k) for k in DERIVATION_FIELDS} if rec else {}


def check_row(project: Project, split: str, uid: int, *, inputs_file: Path | None = None,
              definition: str | None = None, label: str | None = None) -> DerivationCheck:
    """Check the row ``split``/``uid``: the definition (``definition``, else the file's or the record's,
    else the declared version) applied to its upstream entities patched by the inputs of
    ``inputs_file`` (a derivation file, read by
    :func:`~medcalc_maintained.ledger.records.read_derivation_file`; default: the row's applied
    record) against ``label`` (default: the row's current label, with its limits; a given label gets
    the limits of its output type). An input of the file may give its evidence as text only: its
    offsets are located in the row's note (``ledger/quotes.py``).

    Raises :class:`DataError` for bad input (a malformed or oversized file, a uid not in the split,
    a definition the calculator does not have), naming the file or option and field."""
    @functools.cache
    def row_read() -> tuple[Any, Any, Any]:  # the instances, the ledger's records and the row, read once when first needed
        instances = read_parquet(project.instances, "upstream instances", "ingest")
        collected = collect(project.ledger_paths)  # read once: the row's labels and its applied record
        return instances, collected, current_row(project, split, uid, instances, collected=collected)

    def note_of() -> str | None:
        note = row_read()[2].get("Patient Note")
        return note if isinstance(note, str) else None

    doc: dict[str, Any] = {}
    if inputs_file is not None:
        doc = read_derivation_file(inputs_file, lambda found: locate_inputs(found, note_of, inputs_file))
    instances, collected, row = row_read()
    ents = instances.loc[(instances["split"].astype(str) == split) & (instances["uid"] == uid), "entities"].iloc[0]
    cid = int(row["Calculator ID"])
    if inputs_file is None:
        doc = applied_derivation(collected[0], str(row["Correction IDs"] or ""))
    chosen = definition or doc.get("definition")
    if (problem := D.definition_problem(cid, chosen)):
        raise DataError(inputs_file or "--definition", problem, field="definition")
    recorded = doc.get("inputs") or []
    note = row.get("Patient Note")
    shown = label if label is not None else str(row["Ground Truth Answer"])
    otype = str(row["Output Type"])
    lo, hi = (row["Lower Limit"], row["Upper Limit"]) if label is None else limits(label, otype, None)
    result = D.label_derivation(cid, entities_or_empty(ents), shown, lo, hi, otype,
                                {"inputs": recorded, "definition": chosen, "justification": doc.get("justification")},
                                note=note, rules=rules(UNRELEASED))
    verdicts = [verify(cid, inp, note) for inp in recorded]
    return DerivationCheck(split, int(uid), {str(k): v for k, v in row.items()}, inputs_file is None, list(recorded),
                           verdicts, D.input_problems(cid, recorded, note), shown, result,
                           tuple("" if v.supports else fix_hint(v.rule, inp) for v, inp in zip(verdicts, recorded)))


__all__ = ["DerivationCheck", "applied_derivation", "check_row"]
