"""Commands of the first pipeline stages (``ingest``, ``recompute``, ``import-campaign``, ``apply``),
the ``report`` group, ``validate`` and ``summary``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, err, fail, fail_ledger, guarded
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project

report_app = typer.Typer(help="Reports computed from the pipeline's outputs.", no_args_is_help=True)


def ingest(
    input: Optional[Path] = typer.Option(None, "--input", help="One upstream CSV (default: every split in params.yaml)."),
    split: str = typer.Option("test", "--split", help="Split name of --input."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params.ingest.out, data/interim)."),
    max_quarantine: Optional[int] = typer.Option(None, help="Allowed quarantined rows (default: params.ingest.max_quarantine)."),
) -> None:
    """Read upstream MedCalc-Bench CSVs into a typed DIR/instances.parquet.

    Keeps every upstream column verbatim and adds uid, split, calculator_id, output_type, entities
    (JSON) and the parsed ground truth. Unparseable rows go to DIR/quarantine.csv; the command fails
    when there are more than max_quarantine of them, or on a structural problem (missing column,
    duplicate Row Number, empty file, non-UTF-8 bytes), and then writes no instances.parquet.
    """
    from medcalc_maintained.stages import ingest as stage

    try:
        run = stage.run(guarded(out), files=[(split, input)] if input is not None else None, out_dir=out,
                        max_quarantine=max_quarantine)
    except DataError as exc:
        fail(exc)
    for note in run.notes:
        console.print(f"[dim]{note}[/]")
    table = Table(title="ingest", show_header=True)
    for col in ("split", "file", "rows read", "ingested", "calculators", "quarantined"):
        table.add_column(col)
    inst, q = run.result.instances, run.result.quarantine
    for name, path, n in run.result.files:
        part = inst[inst["split"] == name]
        table.add_row(name, str(path), str(n), str(len(part)), str(part["calculator_id"].nunique()),
                      str(int((q["split"] == name).sum()) if len(q) else 0))
    console.print(table)
    if run.too_many:
        for rec in q.head(20).to_dict("records"):
            err.print(escape(f"  {rec['split']} row {rec['row_number']} [{rec['column']}]: {rec['reason']}"), highlight=False)
        fail(DataError(run.written[0], f"{len(q)} row problem(s) quarantined, more than max_quarantine={run.limit}; "
                                       "instances.parquet not written"))
    console.print(f"wrote {run.written[-1]} ({len(inst)} rows)")


def recompute(
    instances: Optional[Path] = typer.Option(None, help="Instances parquet (default: the ingest stage's output)."),
    out: Optional[Path] = typer.Option(None, help="Output directory (default: params.recompute.out, data/audit)."),
) -> None:
    """Re-derive every label from its own extracted features with the reference calculators.

    Writes DIR/recompute.parquet (one row per instance: recomputed value, missing and implausible
    inputs, agreement with the original label under MedCalc-Bench grading, rel_err, finding) and
    DIR/recompute_per_calculator.csv (agreement per calculator, for `dvc plots`). The metrics are
    written by `report recompute` once maintained labels exist.
    """
    from medcalc_maintained.stages import recompute as stage

    try:
        run = stage.run(guarded(out), instances=instances, out_dir=out, progress=console.is_terminal)
    except DataError as exc:
        fail(exc)
    rec = run.table
    n, ok = len(rec), int(rec["computable"].sum())
    console.print(f"recompute: {ok}/{n} computable ({100 * ok / n:.1f}%); findings "
                  f"{rec['finding'].value_counts().to_dict()}")


def import_campaign(
    out: Optional[Path] = typer.Option(None, help="Ledger YAML to write (default: params.campaign.out)."),
) -> None:
    """Turn the published phase-3 audit workbooks into one accepted ledger record per audited row.

    corrected when y_final differs from the v1.0 label (beyond ±5% for decimals, exactly otherwise),
    abstain when y_final is N/A, confirmed when they agree; physician-labelled rows are sourced
    `physician` (their notes become the rationale), the rest `pipeline`. Unreadable cells are
    written to unreadable.csv beside the output and fail the stage above params.campaign.max_unreadable.
    """
    import pandas as pd

    from medcalc_maintained.stages import import_campaign as stage

    try:
        run = stage.run(guarded(out), out=out)
    except DataError as exc:
        fail(exc)
    counts = pd.DataFrame(run.records).groupby(["label_status", "source"]).size()
    console.print(f"import-campaign: {len(run.records)} records -> {run.target}")
    console.print(counts.to_string())


def harmonize_cmd() -> None:
    """Decide the campaign's definition contradictions under the declared definition and restore
    confirmed labels to upstream's text, as policy records of params.harmonize.release.

    Writes the generated ledger file params.harmonize.out and summary.json beside it (counts by rule
    and status). A contradiction whose declared definition computes no value becomes N/A.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.stages import harmonize as stage

    try:
        run = stage.run(Project.load())
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        fail(exc)
    console.print(f"harmonize: {run.summary['records']} policy records {run.summary['by_rule']} -> {run.target}", highlight=False)


def apply_cmd(
    ledger_paths: Optional[list[Path]] = typer.Option(None, "--ledger", help="Ledger file or directory (repeatable; default: params.apply.ledger)."),
    instances: Optional[Path] = typer.Option(None, help="Upstream instances parquet (default: the ingest stage's output)."),
    out: Optional[Path] = typer.Option(None, help="Output directory (default: params.apply.out, data/maintained)."),
    upto: Optional[str] = typer.Option(None, help="Apply only records of releases up to this version (default: all)."),
) -> None:
    """Apply every accepted ledger record to the upstream instances -> DIR/instances.parquet.

    Each record is checked first (schema, uid exists in its split, old_value is the current label,
    values valid for the output type, status consistent, at most one accepted record per row and
    release, definition and input evidence); every problem of every record, schema and rules alike,
    is printed on its own line with its file, record and field, and nothing is written.
    """
    from medcalc_maintained.ledger import LedgerError
    from medcalc_maintained.stages import apply as stage

    try:
        maintained, target = stage.run(guarded(out), ledger=ledger_paths, instances=instances, out_dir=out, upto=upto)
    except LedgerError as exc:
        fail_ledger(exc)
    except DataError as exc:
        fail(exc)
    console.print(f"apply: {len(maintained)} rows -> {target}")
    console.print(maintained["Label Status"].value_counts().to_string())


def certify_cmd(
    workers: Optional[int] = typer.Option(None, "--workers", help="Processes (default: params.certify.workers)."),
) -> None:
    """Read every input of every verified label against its note (stage `certify`).

    Each declared input of a verified row's calculator (upstream's extraction patched by the inputs its
    ledger record recorded) gets a verdict: supports (a quote the evidence verifier accepts, or the
    definition's convention for an unmentioned criterion), contradicts (the note states another value:
    that value and its quote) or not addressed. Writes data/evidence/inputs.parquet (one row per input)
    and summary.json (the rows every input of which is certified, with an input contradicted, with an
    input not addressed); prints the shares. Stage `triage` routes the contradicted rows.
    """
    from medcalc_maintained.stages import certify as stage

    try:
        frame, summary, seconds = stage.run(Project.load(), workers=workers, progress=True)
    except DataError as exc:
        fail(exc)
    v = summary["verified"]
    console.print(f"certify: {summary['inputs']['total']} inputs of {v['rows']} verified rows in {seconds:.1f} s: "
                  + ", ".join(f"{k} {v[k]['rows']} ({v[k]['share']:.1%})" for k in stage.ROW_VERDICTS), highlight=False)


@report_app.command("physician-agreement")
def physician_agreement(
    out: Optional[Path] = typer.Option(None, help="JSON output (default: params.report.physician_agreement.out); "
                                     "metrics.json, its headline scalars, is written beside it."),
    bootstrap: Optional[int] = typer.Option(None, help="Bootstrap resamples for the 95% CIs."),
    seed: Optional[int] = typer.Option(None, help="Bootstrap seed."),
) -> None:
    """Agreement and sMAPE of the original, recomputed and maintained labels against the 50
    blinded physician labels of the phase-3 workbook, with seeded bootstrap 95% CIs."""
    from medcalc_maintained.stages import physician_agreement as stage

    try:
        rep, _ = stage.run(guarded(out), out=out, bootstrap=bootstrap, seed=seed)
    except DataError as exc:
        fail(exc)
    table = Table(title=f"agreement with {rep['rows']} blinded physician labels")
    for col in ("labels", "agree", "95% CI", "sMAPE %", "95% CI", "sMAPE rows"):
        table.add_column(col, justify="right" if col != "labels" else "left")
    for name, s in rep["label_sets"].items():
        table.add_row(name, f"{s['agree']}/{s['rows']}", f"[{s['agree_ci95'][0]:.0f}, {s['agree_ci95'][1]:.0f}]",
                      f"{s['smape']:.1f}", f"[{s['smape_ci95'][0]:.1f}, {s['smape_ci95'][1]:.1f}]", str(s["smape_rows"]))
    console.print(table)


@report_app.command("errata")
def errata(
    out: Optional[Path] = typer.Option(None, help="Output folder (default: params.report.errata.out): errata.json, "
                                       "errata.md and vectors.json."),
) -> None:
    """Hold every implementation of report.errata.implementations (the PyPI medcalc-bench 1.7.0,
    MedCalc-Bench-Verified's recorded answers) to the conformance vectors and compare it with the
    declared definitions on the v1.0 entities of all rows; each difference is an erratum with its
    failing cases, its consequence on v1.0 labels and its adjudicated status (docs/conformance.md).
    Refuses, writing nothing, while an erratum is not adjudicated in conformance/errata.yaml."""
    from medcalc_maintained.stages import errata as stage

    try:
        reports, target = stage.run(guarded(out), out=out)
    except (DataError, ValueError) as exc:
        fail(exc)
    for rep in reports:
        statuses = Counter(e.status for e in rep.errata)
        console.print(f"{rep.implementation}: {rep.vector_cases_passed}/{rep.vector_cases} vector cases pass; "
                      f"{len(rep.errata)} errata (" + ", ".join(f"{n} {s}" for s, n in statuses.most_common())
                      + f"); {sum(e.rows_differ for e in rep.errata)} v1.0 rows differ, "
                      f"{sum(e.rows_label_follows_implementation for e in rep.errata)} of whose labels are its answer",
                      highlight=False, soft_wrap=True)
    console.print(f"errata: {target}", highlight=False, soft_wrap=True)


@report_app.command("grader-check")
def grader_check(
    out: Optional[Path] = typer.Option(None, help="JSON report (default: report.json in "
                                       "params.report.grader_check.out); rates.csv, verdicts.csv, rates.png and "
                                       "metrics.json are written beside it."),
) -> None:
    """How often each grader is wrong: every grader of `evaluate --grader` (ours, upstream, helm,
    opencompass, inspect, lm-eval) on the real model outputs of report.grader_check.outputs,
    against the grade two readers gave each by reading it (disagreements adjudicated;
    docs/grader-check.md). Prints each grader's false-positive and false-negative rate with its
    Wilson 95% interval; writes rates.csv (per answer type and model too), verdicts.csv, rates.png
    and report.json to report.grader_check.out."""
    from medcalc_maintained.stages import grader_check as stage

    try:
        rep, where = stage.run(guarded(out), out=out)
    except (DataError, ValueError) as exc:
        fail(exc)
    r = rep["readers"]
    console.print(f"grader-check: {rep['outputs']} outputs of {len(rep['models'])} models read against release "
                  f"{rep['release']}: {rep['reference']['correct']} correct, {rep['reference']['incorrect']} incorrect; "
                  f"readers agreed on {r['grades_agreed']} grades (kappa {r['kappa']}), {r['adjudicated']} adjudicated",
                  highlight=False, soft_wrap=True)
    table = Table(title="grader errors against the readers (Wilson 95%)")
    for col in ("grader", "false pos.", "95% CI", "false neg.", "95% CI", "gold"):
        table.add_column(col, justify="left" if col == "grader" else "right")

    def ci(r: dict, key: str) -> tuple[str, str]:
        if r[f"{key}_rate"] is None:
            return "-", "-"
        n = r["reference_incorrect" if key == "fp" else "reference_correct"]
        k = r["false_positives" if key == "fp" else "false_negatives"]
        return f"{k}/{n} {r[f'{key}_rate']:.1%}", f"{r[f'{key}_low']:.1%}-{r[f'{key}_high']:.1%}"

    for r in (x for x in rep["rates"] if x["stratum"] == "all"):
        g = rep["gold"][r["grader"]]
        table.add_row(r["grader"], *ci(r, "fp"), *ci(r, "fn"), f"{g['correct']}/{g['rows']}")
    console.print(table)
    console.print(f"per answer type: {where.parent / 'rates.csv'}", highlight=False, soft_wrap=True)


@report_app.command("grader-outputs")
def grader_outputs(
    out: Path = typer.Option(..., "--out", help="The JSON-lines file to write (the committed set is "
                             "report.grader_check.outputs; write elsewhere and compare)."),
    release: Optional[str] = typer.Option(None, help="The release whose default config the rows come from "
                                          "(default report.grader_check.release)."),
    per_type: Optional[int] = typer.Option(None, "--per-type", min=1, help="At most this many rows of each answer "
                                           "type, for a quick try (the committed set: 40 N/A, 30 dates, 20 "
                                           "gestational ages, 50 integers, 50 decimals)."),
) -> None:
    """Make the grader check's real model outputs again: SmolLM2-135M-Instruct as shipped
    (models/smollm2, `make model`) and after the declared format warm-up (compare.warmup, made
    into models/smollm2-warmup on CPU), greedy, 256 new tokens, on 190 rows of the release's
    default config stratified by answer type. Needs the train extra; about 22 minutes on 2 CPU
    cores. The outputs then need reading again (docs/grader-check.md) before stage grader-check
    can use them."""
    from medcalc_maintained.scoring.grader_outputs import make
    from medcalc_maintained.stages import compare_report

    try:
        project = guarded(out)
        recs = make(project, release or str(project.param("report.grader_check.release")),
                    compare_report.plan(project).train, out, per_type=per_type,
                    say=lambda m: console.print(m, highlight=False))
    except (DataError, ValueError, ImportError) as exc:
        fail(exc)
    console.print(f"{len(recs)} outputs: {out}", highlight=False, soft_wrap=True)


@report_app.command("recompute")
def report_recompute(
    out: Optional[Path] = typer.Option(None, help="JSON output (default: DIR/recompute_summary.json of "
                                     "params.recompute.out); metrics.json, its headline scalars, is written beside it."),
) -> None:
    """Metrics of the recompute audit: per-calculator computable and agreement rates, and the
    precision/recall of its flags (aggregation_mismatch, implausible_input) as a detector of
    "the original label diverges from the maintained label"."""
    from medcalc_maintained.stages import recompute_report as stage

    try:
        summary, _ = stage.run(guarded(out), out=out)
    except DataError as exc:
        fail(exc)
    d = summary["detector"]
    console.print(f"recompute detector: flagged {d['flagged']} of {d['rows']} verified rows, "
                  f"{d['diverging']} diverge; precision {d['precision']}, recall {d['recall']}")


def validate(
    target: Optional[Path] = typer.Argument(None, help="A built release directory (with manifest.json); default: the pipeline's outputs."),
    docs: Optional[Path] = typer.Option(None, help="Where to write GX Data Docs HTML (default: params.validate.data_docs, build/data-docs)."),
    no_docs: bool = typer.Option(False, "--no-docs", help="Skip rendering Data Docs (faster)."),
) -> None:
    """Evaluate the data contracts (GX suites in expectations/) on the pipeline outputs or a release.

    Suites: schema, label_invariants, ledger, qc_gates (blocking or warning per params.yaml), history
    (no ledger record rewrites a published release, data/released/published.json; a release's every
    config equals, row for row, what the pipeline builds for its version from upstream and the ledger),
    and manifest and release (release directories only). Prints every failed expectation with its suite and the
    offending uids, writes Data Docs, and exits 1 when a blocking expectation fails.
    """
    from medcalc_maintained.contracts import validate as stage
    from medcalc_maintained.release.build import pipeline_tables

    project = Project.load()
    docs_dir = None if no_docs else (docs or project.data_docs)
    try:
        # a release is compared with what the pipeline builds for its version (built here when not current)
        expected = pipeline_tables(project, target) if target is not None and (Path(target) / "manifest.json").is_file() else None
        rep = stage.validate(target, project=project, docs_dir=docs_dir, expected=expected)
    except DataError as exc:
        fail(exc)
    for f in rep.failures:
        (err if f.severity == "blocking" else console).print(str(f), highlight=False, soft_wrap=True, markup=False)
    verdict = "[green]passed[/]" if rep.success else "[bold red]FAILED[/]"
    console.print(f"validate {rep.target}: {verdict} - {rep.evaluated} expectations, {len(rep.blocking)} blocking "
                  f"failure(s), {len(rep.warnings)} warning(s)" + (f"; Data Docs in {docs_dir}/index.html" if docs_dir else ""))
    if not rep.success:
        raise typer.Exit(1)


def summary() -> None:
    """Print what the pipeline produced (counts per stage, metrics, release), read from disk."""
    from medcalc_maintained.cli.summary import print_summary

    if print_summary(Project.load(), console) == 0:
        fail(RuntimeError("nothing to summarise: run `make run` (or `dvc repro`) first"), code=1)


def register(app: typer.Typer) -> None:
    """Add the pipeline stage commands and the ``report`` group to the main CLI."""
    app.command("ingest")(ingest)
    app.command("recompute")(recompute)
    app.command("import-campaign")(import_campaign)
    app.command("harmonize")(harmonize_cmd)
    app.command("apply")(apply_cmd)
    app.command("certify")(certify_cmd)
    app.command("validate")(validate)
    app.command("summary")(summary)
    app.add_typer(report_app, name="report")
