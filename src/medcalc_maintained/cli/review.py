"""CLI of the triage stage and of physician review packets (registered on the main app by ``register``).

    medcalc-maintained triage
    medcalc-maintained review export --reviewer md-im-1 --out packet.xlsx
    medcalc-maintained review import packet.xlsx
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.core.errors import DataError

review_app = typer.Typer(
    help=("Single-blind physician review: export a reviewer's rows of the triage queue as an .xlsx "
          "packet (note and question only), and import the filled packet as ledger records."),
    no_args_is_help=True,
)


def triage(
    out: Optional[Path] = typer.Option(None, help="Output directory (default: params.triage.out, data/triage)."),
    budget: Optional[int] = typer.Option(None, min=0, help="Rows to route to physicians (default: params.triage.budget)."),
) -> None:
    """Rank every row by how likely its label is wrong and route the top to physician reviewers.

    Evidence per row: relabel disagreement (rel_err(original, relabel) above the threshold;
    abstention mismatches ranked highest), audit votes, recompute findings, relabel deferral, and
    physician reviews deferred in the ledger (routed to a second reviewer). Weights, budget, the
    category -> specialty map and the reviewers are in params.yaml `triage:`. Writes DIR/queue.csv
    (one row per instance, its priority and evidence, in_budget and reviewer), DIR/summary.json
    (precision@k against the maintained labels' adjudicated changes next to uniform sampling, errors
    found per review), DIR/metrics.json (its headline scalars: the DVC metric) and
    DIR/errors_found.csv/.png (the curve, for `dvc plots`).
    """
    from medcalc_maintained.stages import triage as stage

    try:
        run = stage.run(guarded(out), out_dir=out, budget=budget)
    except DataError as exc:
        fail(exc)
    _print_routing(run.queue, run.summary, run.config.budget)
    _print_metrics(run.summary)
    paths = run.paths
    console.print(f"wrote {paths['queue']}, {paths['summary']}, {paths['metrics']}, {paths['plot']}")


def _print_routing(queue: Any, summary: dict[str, Any], budget: int) -> None:
    routed = queue[queue["in_budget"]]
    t = Table(title=f"triage: {len(routed)} of {summary['eligible']} eligible rows routed (budget {budget})")
    for c in ("reviewer", "specialty", "rows", "second reviews", "top priority"):
        t.add_column(c, justify="left" if c in ("reviewer", "specialty") else "right")
    for rid, g in routed.groupby("reviewer", sort=True):
        t.add_row(rid, str(g["specialty"].iloc[0]), str(len(g)), str(int((g["routing"] == "second review").sum())),
                  f"{g['priority'].max():.2f}")
    console.print(t)
    unrouted = queue[queue["routing"].str.startswith(("no reviewer", "no specialty"))]
    if len(unrouted):
        console.print(f"[yellow]{len(unrouted)} eligible row(s) had no reviewer: "
                      f"{escape(str(unrouted['routing'].value_counts().to_dict()))}[/]")


def _print_metrics(summary: dict[str, Any]) -> None:
    p = Table(title=f"precision@k against {summary['truth']['errors']} adjudicated label changes "
                    f"(base rate {summary['base_rate']:.3f})")
    for c in ("k", "triage", "without relabel", "uniform (expected)", "uniform (simulated, 95% CI)", "unverified in top k"):
        p.add_column(c, justify="right")
    for k, v in summary["precision_at_k"].items():
        p.add_row(k, f"{v['triage']:.3f}", f"{v['triage_without_relabel']:.3f}", f"{v['uniform_expected']:.3f}",
                  f"{v['uniform_simulated']:.3f} [{v['uniform_ci95'][0]:.3f}, {v['uniform_ci95'][1]:.3f}]",
                  str(v["unverified_in_top_k"]))
    console.print(p)
    e = summary["errors_found_per_review"]
    if e["reviews"]:
        console.print(f"errors found per review inside the budget: {e['triage']:.3f} "
                      f"({e['errors_found']}/{e['reviews']}) vs {e['uniform']:.3f} for uniform sampling")


@review_app.command("export")
def export(
    reviewer: str = typer.Option(..., "--reviewer", help="Reviewer id (params.yaml triage.reviewers)."),
    out: Path = typer.Option(..., "--out", help="The .xlsx packet to write."),
    queue: Optional[Path] = typer.Option(None, help="Triage queue (default: DIR/queue.csv of params.triage.out)."),
    max_rows: Optional[int] = typer.Option(None, "--max-rows", min=1, help="At most this many rows (the first in queue order)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing --out file (it may hold a reviewer's answers)."),
) -> None:
    """Write a single-blind review packet with the rows the triage queue routed to REVIEWER.

    The packet holds, per row, only the row id, calculator name, answer format, patient note and
    question (listed by row id, not by priority) — never a label, a vote or the priority — plus an
    Instructions sheet. The answer, timepoint, guideline and comment cells are the only editable
    cells and carry data validation. An export record (reviewer, rows, digest of every protected
    cell) is written to params review.exports; `review import` refuses a packet that differs from it.
    An existing --out is refused unless --force.
    """
    from medcalc_maintained.review import workflow

    try:
        done = workflow.export(guarded(out), reviewer, out, queue=queue, max_rows=max_rows, force=force)
    except DataError as exc:
        fail(exc)
    who = done.reviewer
    console.print(f"wrote {done.path}: {len(done.rows)} row(s) for {who.id} ({who.specialty or 'no specialty'})")


@review_app.command("import")
def import_(
    packet: Path = typer.Argument(..., help="A filled review packet (.xlsx)."),
    out: Optional[Path] = typer.Option(None, help="Ledger file to write (default: data/corrections/review-<packet name>.yaml)."),
    decided_at: Optional[str] = typer.Option(None, help="Decision date YYYY-MM-DD (default: today)."),
    partial: bool = typer.Option(False, "--partial", help="Import the answered rows and skip empty answers (default: an empty answer is an error)."),
) -> None:
    """Read a filled packet into ledger records (source physician, blinded) and write them.

    An answer is accepted when it agrees (answers.labels_agree: ±5% for decimals, exact otherwise)
    with a reference of params.yaml triage.adjudication.agree_with (the relabel label, an earlier
    deferred physician answer, or the maintained label); otherwise it is written deferred, with the
    disagreeing relabel label as second_opinion, and the next `triage` routes the row to another
    reviewer. Every problem is reported with its sheet and cell and nothing is written; the records
    are checked against the schema and the whole ledger before the file is written.
    """
    from medcalc_maintained.review import workflow

    try:
        done = workflow.import_(guarded(out, ledger_file=True), packet, out=out, decided_at=decided_at, partial=partial)
    except DataError as exc:
        fail(exc)
    records, pk = done.records, done.packet
    t = Table(title=f"review import: {len(records)} record(s) by {pk.reviewer_id} -> {done.target}")
    for c in ("row", "answer", "decision", "status", "vs current label"):
        t.add_column(c)
    for r in records:
        t.add_row(f"{r['split']}-{r['uid']:05d}", escape(r["new_value"]), r["decision"], r["label_status"],
                  "changes it" if r["decision"] == "accepted" and r["new_value"] != r["old_value"] else "keeps it")
    console.print(t)
    acc = sum(r["decision"] == "accepted" for r in records)
    console.print(f"{acc} accepted, {len(records) - acc} deferred for a second reviewer"
                  + (f"; {len(pk.skipped)} empty row(s) skipped" if pk.skipped else "")
                  + ". Run `medcalc-maintained apply` (or `dvc repro`) to update the maintained labels.")


def register(app: typer.Typer) -> None:
    """Add ``triage`` and the ``review`` group to the main CLI."""
    from medcalc_maintained.cli.simulate import triage_group

    app.add_typer(triage_group(triage), name="triage")  # `triage` ranks; `triage simulate` replays
    app.add_typer(review_app, name="review")
