"""Commands that write the ledger: ``propose``."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from medcalc_maintained.cli.common import console, fail as _fail, fail_ledger
from medcalc_maintained.core.io import DataError
from medcalc_maintained.project import Project


def propose_cmd(
    uid: int = typer.Option(..., "--uid", help="Row Number of the instance."),
    new_value: str = typer.Option(..., "--new-value", help="The proposed label (N/A when the note cannot answer)."),
    error_type: str = typer.Option(..., "--error-type", help="extraction | aggregation | unanswerable | underspecified | other, or none for a confirmation."),
    rationale: str = typer.Option(..., "--rationale", help="Why the current label is wrong: the values and the rule."),
    split: str = typer.Option("test", "--split", help="Split of the instance."),
    evidence: Optional[list[str]] = typer.Option(None, "--evidence", help="A pointer to the evidence (repeatable): note sentence, guideline, MDCalc page."),
    reviewer_id: Optional[str] = typer.Option(None, "--reviewer-id", help="Who proposes (default: $USER)."),
    reviewer_role: str = typer.Option("contributor", "--reviewer-role", help="contributor, physician, pharmacist, ..."),
    specialty: Optional[str] = typer.Option(None, "--specialty", help="Clinical specialty of the proposer, if any."),
    source: str = typer.Option("contributor", "--source", help="contributor | physician | pipeline."),
    blinded: bool = typer.Option(False, "--blinded", help="The label was derived without looking at the current one."),
    file: Optional[Path] = typer.Option(None, "--file", help="Ledger file to append to (default: data/corrections/<yyyy-mm>-proposals.yaml)."),
    date: Optional[str] = typer.Option(None, "--date", help="Date of the proposal (default: today)."),
) -> None:
    """Propose a label correction: append a deferred ledger record to data/corrections/.

    The record's old_value is the current maintained label, its label_status follows from the
    values (corrected, abstain for N/A, confirmed when they agree) and its id is the next unused
    C-NNNN. The whole ledger is checked with the new record before the file is written; a reviewer
    later sets `decision: accepted` (or rejected) in the pull request.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.ledger.propose import propose

    try:
        prop = propose(Project.load(), uid=uid, new_value=new_value, error_type=error_type, rationale=rationale, split=split,
                       evidence=evidence, reviewer_id=reviewer_id, reviewer_role=reviewer_role,
                       specialty=specialty, source=source, blinded=blinded, file=file, today=date)
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    r = prop.record
    console.print(f"{r['id']}: {r['split']} uid {r['uid']} {r['old_value']} -> {r['new_value']} "
                  f"({r['label_status']}, {r['error_type'] or 'no error type'}), decision deferred -> {prop.path}",
                  highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``propose`` to the main CLI."""
    app.command("propose")(propose_cmd)
