"""Commands that write the ledger: ``propose`` and the ``ledger`` group (``ledger rebase``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from medcalc_maintained.cli.common import console, fail_ledger, guarded
from medcalc_maintained.cli.common import fail as _fail
from medcalc_maintained.cli.upstream import resolve
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project


def propose_cmd(
    uid: int = typer.Option(..., "--uid", help="Row Number of the instance."),
    new_value: str = typer.Option(..., "--new-value", help="The proposed label (N/A when the note cannot answer)."),
    error_type: str = typer.Option(..., "--error-type", help="extraction | aggregation | unanswerable | underspecified | other, or none for a confirmation."),
    rationale: str = typer.Option(..., "--rationale", help="Why the current label is wrong: the values and the rule."),
    split: str = typer.Option("test", "--split", help="Split of the instance."),
    evidence: Optional[list[str]] = typer.Option(None, "--evidence", help="A pointer to the evidence (repeatable): note sentence, guideline, MDCalc page."),
    quote: Optional[list[str]] = typer.Option(None, "--quote", help="Text copied from the row's note (repeatable): its character offsets are found for you and it is recorded as evidence `note[START:END] 'TEXT'`; it must occur exactly once in the note (else quote a longer passage)."),
    reviewer_id: Optional[str] = typer.Option(None, "--reviewer-id", help="Who proposes (default: $USER)."),
    reviewer_role: str = typer.Option("contributor", "--reviewer-role", help="contributor, physician, pharmacist, ..."),
    specialty: Optional[str] = typer.Option(None, "--specialty", help="Clinical specialty of the proposer, if any."),
    source: str = typer.Option("contributor", "--source", help="contributor | physician | pipeline."),
    blinded: bool = typer.Option(False, "--blinded", help="The label was derived without looking at the current one."),
    file: Optional[Path] = typer.Option(None, "--file", help="Ledger file to append to (default: data/corrections/<yyyy-mm>-proposals.yaml)."),
    date: Optional[str] = typer.Option(None, "--date", help="Date of the proposal (default: today)."),
    definition: Optional[str] = typer.Option(None, "--definition", help="The published alternative definition the value follows (a name under the calculator's alternatives in calculators/definitions.yaml)."),
    override_reason: Optional[str] = typer.Option(None, "--override-reason", help="Make the record an override: a value no definition gives from the row's inputs, with this clinical reason (physician reviewers only)."),
    inputs: Optional[Path] = typer.Option(None, "--inputs", help="YAML file with `inputs:` (a list of {name, value, unit, evidence: {start, end, text}}, optionally source:, timepoint: {when, why} and unit_reading: {printed, why}): the inputs the new value derives from, each quote checked by the evidence verifier. An evidence given as text only (evidence: {text: ...} or evidence: \"...\") gets its offsets from the note: the text must occur there exactly once."),
) -> None:
    """Propose a label correction: append a deferred ledger record to data/corrections/.

    The record's old_value is the current maintained label, its label_status follows from the
    value against the upstream label (corrected, abstain for N/A, confirmed when they agree) and its id is the next unused
    C-NNNN. A value the row's declared definition cannot produce (e.g. a GCS total when a component
    is not testable) is refused unless --definition names the alternative it follows or
    --override-reason makes it an override. The whole ledger is checked with the new record before
    the file is written; a reviewer later sets `decision: accepted` (or rejected) in the pull request.
    With --inputs, every input's quote must state it (the evidence verifier: the quantity named in
    the same clause, not another quantity's number, a reference bound, a denominator or a date; a
    criterion asserted, not negated, planned or a relative's) and change the derivation; a refusal
    names the file, the record, the input and the rule. --quote (and an input's evidence given as
    text only) finds the text's character offsets in the row's note: it must occur there exactly once.
    The confirmation line echoes the value as typed and the current label it replaces.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.ledger.propose import propose

    try:
        prop = propose(Project.load(), uid=uid, new_value=new_value, error_type=error_type, rationale=rationale, split=split,
                       evidence=evidence, reviewer_id=reviewer_id, reviewer_role=reviewer_role,
                       specialty=specialty, source=source, blinded=blinded, file=file, today=date,
                       definition=definition, override_reason=override_reason, inputs_file=inputs, quotes=quote)
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    _print_proposal(prop.record, prop.path, new_value)


def _print_proposal(r: dict, path: Path, typed: str) -> None:
    """``propose``'s line: the value as typed, the current label it replaces, and the value recorded
    where it is written otherwise (a confirmation records the upstream label value for value)."""
    recorded = str(r["new_value"])
    kept = "" if recorded == typed.strip() else (
        f" (recorded as the upstream label {recorded!r}, value for value)" if r["label_status"] == "confirmed"
        else f" (recorded as {recorded!r})")
    console.print(f"{r['id']}: {r['split']} uid {r['uid']}: {typed.strip()} replaces the current label {r['old_value']}"
                  f"{kept} ({r['label_status']}, {r['error_type'] or 'no error type'}), decision deferred -> {path}",
                  highlight=False)


ledger_app = typer.Typer(help="Operations on the whole corrections ledger.", no_args_is_help=True,
                         rich_markup_mode="markdown")


@ledger_app.command("rebase")
def rebase_cmd(
    onto: Optional[str] = typer.Option(None, "--onto", help="The new upstream CSV or version to carry the ledger to (omit for stage ledger-rebase)."),
    base: Optional[str] = typer.Option(None, "--from", help="The upstream CSV the ledger was written against (default: the project's test split)."),
    ledger: Optional[list[Path]] = typer.Option(None, "--ledger", help="Ledger file or directory (repeatable; default: the project's ledger)."),
    out: Optional[Path] = typer.Option(None, "--out", help="New directory for the rebased ledger, the held records and the report (required with --onto)."),
    split: str = typer.Option("test", "--split", help="The split the two files hold."),
) -> None:
    """Carry every ledger record to a new upstream release (the existing ledger is not changed).

    Each record is `carried` (uid renumbered), `upstreamed` (upstream now has our value: kept as
    history), `conflict` (upstream changed the label to a third value, or the note or question;
    both values in the report) or `orphaned` (row removed). The rebased ledger is applied to the
    new upstream before anything is written. Exit 2 for bad input, 1 when the rebased ledger does
    not apply.

    Without --onto this is the pipeline stage `ledger-rebase`: the ledger carried from `upstream.base`
    to `upstream.version` into `upstream.rebase_out` (a no-op when they are the same), with the row
    map of stage `upstream-diff`.
    """
    from medcalc_maintained.ledger import LedgerError

    if onto is None:
        _stage_rebase()
        return
    if out is None:
        _fail(DataError("ledger rebase", "--out is required with --onto"))
    from medcalc_maintained.stages import ledger_rebase as stage

    try:
        project = guarded(out)
        new_path = resolve(onto, split)
        with console.status("matching rows") as status:
            result = stage.rebase_files(project, resolve(base, split) if base else None, new_path, out,
                                        ledger=ledger, split=split, progress=status.update)
    except LedgerError as exc:
        if any(p.path.startswith(str(out)) for p in exc.problems):  # the rebased ledger does not apply
            fail_ledger(exc, path=out, what="problem(s): the rebased ledger does not apply", code=1)
        fail_ledger(exc)
    except DataError as exc:
        _fail(exc)
    _print_rebase(result, new_path)


def _print_rebase(result, onto: Path) -> None:
    """`ledger rebase --onto`'s lines: the records per class, the first conflicts, the files written."""
    s = result.summary
    console.print(f"ledger rebase onto {onto}: {s['records']} records: carried {s['carried']}, upstreamed "
                  f"{s['upstreamed']}, conflict {s['conflict']}, orphaned {s['orphaned']}; the rebased ledger applies",
                  highlight=False)
    for line in result.report[result.report["class"] == "conflict"].head(20).itertuples():
        console.print(f"  conflict {line.id}: uid {line.old_uid} -> {line.new_uid}: {line.reason}", highlight=False)
    for p in result.written:
        console.print(f"wrote {p}", highlight=False)


@ledger_app.command("derive")
def derive_cmd(
    uid: int = typer.Option(..., "--uid", help="Row Number of the instance."),
    split: str = typer.Option("test", "--split", help="Split of the instance."),
    inputs: Optional[Path] = typer.Option(None, "--inputs", help="YAML file with `inputs:` (a list of {name, value, unit, evidence: {start, end, text}}; an evidence given as text only gets its offsets from the note, where it must occur exactly once) and optionally `definition:` and, for N/A, `justification:` (default: those of the row's applied ledger record)."),
    definition: Optional[str] = typer.Option(None, "--definition", help="The declared version or a published alternative of calculators/definitions.yaml (overrides the file's)."),
    label: Optional[str] = typer.Option(None, "--label", help="The label to check against the derivation (default: the row's current maintained label)."),
) -> None:
    """Show what a row's declared definition (or an alternative) computes from the upstream
    entities patched by recorded inputs, and whether a label reproduces it.

    Prints each input with its evidence check (the quoted text must be the note's own text at the
    offsets) and the evidence verifier's verdict (does the quote state the input? the rule that
    decided), and the label's derivation status under the evidence rules of the releases from
    2.2.0 on (an input the verifier rejects leaves the label unexplained), as `Derivation Status` states it
    (integers exact, decimals inside the label's limits, dates the same day; an N/A derives when the
    definition gives no value or a justification is recorded). Exit 0 when the label derives and the
    evidence holds, 1 when it does not, 2 for bad input.
    """
    from medcalc_maintained.ledger.derivation_check import check_row

    project = Project.load()
    try:
        check = check_row(project, split, uid, inputs_file=inputs, definition=definition, label=label)
    except DataError as exc:
        _fail(exc)
    _print_derivation(check)
    if not check.holds:
        raise typer.Exit(1)


def _print_derivation(check) -> None:
    """``ledger derive``'s lines: the row, each input with the verifier's verdict, the evidence problems
    and the label's derivation status."""
    row, result = check.row, check.result
    console.print(f"{check.split} uid {check.uid}: {row['Calculator Name']} (calculator {int(row['Calculator ID'])}), "
                  f"{row['Label Status']} label {row['Ground Truth Answer']!s}, upstream "
                  f"{row['Original Ground Truth Answer']!s}", highlight=False)
    if check.from_record and check.inputs:
        console.print("  (the inputs of the row's applied ledger record)", highlight=False)
    for n, (inp, verdict) in enumerate(zip(check.inputs, check.verdicts)):
        ev = inp.get("evidence") or {}
        hint = check.hints[n] if n < len(check.hints) else ""
        console.print(f"  input {inp.get('name')} = {inp.get('value')!r} {inp.get('unit') or ''} "
                      f"<- note[{ev.get('start')}:{ev.get('end')}] {str(ev.get('text') or '')[:80]!r}\n"
                      f"    verifier: {verdict.rule} ({verdict.reason})" + (f"\n    fix: {hint}" if hint else ""),
                      highlight=False)
    for p in check.problems:
        console.print(f"  evidence problem: {p}", highlight=False)
    console.print(f"label {check.label}: {result.status} ({result.reason})"
                  + ("" if check.derives else "; it does NOT derive"), highlight=False)


def _stage_rebase() -> None:
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.stages import ledger_rebase as stage

    project = Project.load()
    try:
        with console.status("rebasing the ledger onto the followed upstream version"):
            s = stage.run(project)
    except LedgerError as exc:
        fail_ledger(exc, path=project.rebase_dir, what="problem(s): the rebased ledger does not apply", code=1)
    except DataError as exc:
        _fail(exc)
    if s["noop"]:
        console.print(f"ledger-rebase: upstream {s['onto']} is the base: nothing to rebase ({s['records']} records)",
                      highlight=False)
        return
    console.print(f"ledger-rebase {s['base']} -> {s['onto']}: {s['records']} records: carried {s['carried']}, upstreamed "
                  f"{s['upstreamed']}, conflict {s['conflict']}, orphaned {s['orphaned']} -> {project.rebase_dir}",
                  highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``propose`` and the ``ledger`` group to the main CLI."""
    app.command("propose")(propose_cmd)
    app.add_typer(ledger_app, name="ledger")
