"""Command line of medcalc-maintained: one command per pipeline stage (``medcalc-maintained --help``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.clikit import console, err, project_path as _path, fail
from medcalc_maintained import config
from medcalc_maintained.io import DataError

app = typer.Typer(
    help=(
        "Maintain MedCalc-Bench labels like code: ingest the upstream split, apply the ledger of "
        "adjudicated corrections, audit, triage for physicians, validate and release."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


@app.callback()
def _root() -> None:
    """Maintain MedCalc-Bench labels like code (see the README for the pipeline)."""




@app.command()
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
    from medcalc_maintained import ingest as stage

    root = config.project_root()
    params = config.load_params(root)
    section = params.get("ingest") or {}
    out_dir = out or root / section.get("out", "data/interim")
    limit = section.get("max_quarantine", 0) if max_quarantine is None else max_quarantine
    if input is not None:
        sources, notes = [(split, input)], []
    else:
        sources, notes = stage.sources_from_params(params, root)
    for note in notes:
        console.print(f"[dim]{note}[/]")
    try:
        result = stage.ingest(sources)
    except DataError as exc:
        fail(exc)
    too_many = len(result.quarantine) > limit
    stage.write_outputs(result, out_dir, write_instances=not too_many)
    table = Table(title="ingest", show_header=True)
    for col in ("split", "file", "rows read", "ingested", "calculators", "quarantined"):
        table.add_column(col)
    inst, q = result.instances, result.quarantine
    for name, path, n in result.files:
        part = inst[inst["split"] == name]
        table.add_row(name, str(path), str(n), str(len(part)), str(part["calculator_id"].nunique()),
                      str(int((q["split"] == name).sum()) if len(q) else 0))
    console.print(table)
    if too_many:
        for rec in result.quarantine.head(20).to_dict("records"):
            err.print(escape(f"  {rec['split']} row {rec['row_number']} [{rec['column']}]: {rec['reason']}"), highlight=False)
        fail(DataError(out_dir / "quarantine.csv",
                       f"{len(q)} row problem(s) quarantined, more than max_quarantine={limit}; "
                       "instances.parquet not written"))
    console.print(f"wrote {out_dir / 'instances.parquet'} ({len(inst)} rows)")




def _read_parquet(path: Path, what: str):
    import pandas as pd

    if not path.is_file():
        fail(DataError(path, f"{what} not found (run the stage that makes it, or `dvc repro`)"))
    return pd.read_parquet(path)


@app.command()
def recompute(
    instances: Optional[Path] = typer.Option(None, help="Instances parquet (default: data/interim/instances.parquet)."),
    out: Optional[Path] = typer.Option(None, help="Output directory (default: params.recompute.out, data/audit)."),
) -> None:
    """Re-derive every label from its own extracted features with the reference calculators.

    Writes DIR/recompute.parquet (one row per instance: recomputed value, missing and implausible
    inputs, agreement with the original label under MedCalc-Bench grading, rel_err, finding) and
    DIR/recompute_per_calculator.csv (agreement per calculator, for `dvc plots`). The metrics are
    written by `report recompute` once maintained labels exist.
    """
    from medcalc_maintained import recompute as stage
    from medcalc_maintained.io import write_atomic

    root = config.project_root()
    section = config.section("recompute", root)
    out_dir = out or _path(root, section.get("out", "data/audit"))
    inst = _read_parquet(instances or root / "data/interim/instances.parquet", "instances")
    rec = stage.recompute(inst, progress=console.is_terminal)
    write_atomic(out_dir / "recompute.parquet", lambda p: rec.to_parquet(p, index=False))
    per = stage.per_calculator_agreement(rec, inst)
    write_atomic(out_dir / "recompute_per_calculator.csv", lambda p: per.to_csv(p, index=False))
    n, ok = len(rec), int(rec["computable"].sum())
    console.print(f"recompute: {ok}/{n} computable ({100 * ok / n:.1f}%); findings "
                  f"{rec['finding'].value_counts().to_dict()}")


@app.command("import-campaign")
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

    from medcalc_maintained import campaign as stage
    from medcalc_maintained import ledger
    from medcalc_maintained.io import write_atomic, write_text_atomic

    root = config.project_root()
    p = config.section("campaign", root)
    target = out or _path(root, p["out"])
    sampled, final = _path(root, p["sampled"]), _path(root, p["final"])
    inst = _read_parquet(root / "data/interim/instances.parquet", "instances")
    rec_path = _path(root, config.section("recompute", root).get("out", "data/audit")) / "recompute.parquet"
    findings = pd.read_parquet(rec_path) if rec_path.is_file() else None
    try:
        camp = stage.read_workbooks(sampled, final)
    except DataError as exc:
        fail(exc)
    decided_at = p.get("decided_at") or stage.workbook_date(final) or "unknown"
    records, unreadable = stage.build_records(
        camp, inst, findings, decided_at=str(decided_at), release=str(p.get("release", "2.0.0")),
        id_prefix=p.get("id_prefix", "audit"), workbook_names=(sampled.name, final.name))
    bad = pd.DataFrame(unreadable, columns=["uid", "column", "value", "reason"])
    write_atomic(target.parent / "unreadable.csv", lambda q: bad.to_csv(q, index=False))
    if len(bad) > int(p.get("max_unreadable", 0)):
        for r in unreadable[:20]:
            err.print(escape(f"  {final}: uid {r['uid']} [{r['column']}] {r['value']!r}: {r['reason']}"), highlight=False)
        fail(DataError(final, f"{len(bad)} cell(s) could not be read (max_unreadable={p.get('max_unreadable', 0)})"))
    header = ("Generated by `medcalc-maintained import-campaign` from the published phase-3 workbooks of\n"
              f"{stage.UPSTREAM_REPO}. Do not edit: this file is a DVC output.")
    batch = {"name": "audit-2025", "description": "Physician-in-the-loop audit of MedCalc-Bench v1.0 (phase 3)",
             "source_files": [sampled.name, final.name]}
    write_text_atomic(target, ledger.dump(records, target, batch=batch, header=header))
    counts = pd.DataFrame(records).groupby(["label_status", "source"]).size()
    console.print(f"import-campaign: {len(records)} records -> {target}")
    console.print(counts.to_string())


@app.command("apply")
def apply_cmd(
    ledger_paths: Optional[list[Path]] = typer.Option(None, "--ledger", help="Ledger file or directory (repeatable; default: params.apply.ledger)."),
    instances: Optional[Path] = typer.Option(None, help="Upstream instances parquet (default: data/interim/instances.parquet)."),
    out: Optional[Path] = typer.Option(None, help="Output directory (default: params.apply.out, data/maintained)."),
    upto: Optional[str] = typer.Option(None, help="Apply only records of releases up to this version (default: all)."),
) -> None:
    """Apply every accepted ledger record to the upstream instances -> DIR/instances.parquet.

    Each record is checked first (schema, uid exists in its split, old_value is the current label,
    values valid for the output type, status consistent, at most one accepted record per row and
    release); any problem is printed with its file, record and field, and nothing is written.
    """
    from medcalc_maintained import apply as stage
    from medcalc_maintained.ledger import LedgerError

    root = config.project_root()
    p = config.section("apply", root)
    paths = ledger_paths or [_path(root, x) for x in p.get("ledger", ["data/corrections"])]
    inst = _read_parquet(instances or root / "data/interim/instances.parquet", "instances")
    try:
        maintained = stage.build(inst, paths, upto=upto)
    except LedgerError as exc:
        for prob in exc.problems[:50]:
            err.print(escape(f"  {prob}"), highlight=False, soft_wrap=True)
        fail(DataError(exc.problems[0].path, f"{len(exc.problems)} ledger problem(s); nothing written"))
    except DataError as exc:
        fail(exc)
    target = stage.write(maintained, out or _path(root, p.get("out", "data/maintained")))
    console.print(f"apply: {len(maintained)} rows -> {target}")
    console.print(maintained["Label Status"].value_counts().to_string())


report_app = typer.Typer(help="Reports computed from the pipeline's outputs.", no_args_is_help=True)
app.add_typer(report_app, name="report")


@report_app.command("physician-agreement")
def physician_agreement(
    out: Optional[Path] = typer.Option(None, help="JSON output (default: params.report.physician_agreement.out)."),
    bootstrap: Optional[int] = typer.Option(None, help="Bootstrap resamples for the 95% CIs."),
    seed: Optional[int] = typer.Option(None, help="Bootstrap seed."),
) -> None:
    """Agreement and sMAPE of the original, recomputed and maintained labels against the 50
    blinded physician labels of the phase-3 workbook, with seeded bootstrap 95% CIs."""
    import json

    from medcalc_maintained import campaign, report
    from medcalc_maintained.io import write_text_atomic
    from rich.table import Table

    root = config.project_root()
    p = (config.section("report", root).get("physician_agreement") or {})
    c = config.section("campaign", root)
    inst = _read_parquet(root / "data/interim/instances.parquet", "instances")
    mpath = _path(root, config.section("apply", root).get("out", "data/maintained")) / "instances.parquet"
    maintained = _read_parquet(mpath, "maintained instances")
    try:
        camp = campaign.read_workbooks(_path(root, c["sampled"]), _path(root, c["final"]))
    except DataError as exc:
        fail(exc)
    rep = report.agreement_report(camp, inst, maintained, n_boot=bootstrap or int(p.get("bootstrap", 2000)),
                                  seed=seed if seed is not None else int(p.get("seed", 0)))
    target = out or _path(root, p.get("out", "data/reports/physician_agreement.json"))
    write_text_atomic(target, json.dumps(rep, indent=2) + "\n")
    table = Table(title=f"agreement with {rep['rows']} blinded physician labels")
    for col in ("labels", "agree", "95% CI", "sMAPE %", "95% CI", "sMAPE rows"):
        table.add_column(col, justify="right" if col != "labels" else "left")
    for name, s in rep["label_sets"].items():
        table.add_row(name, f"{s['agree']}/{s['rows']}", f"[{s['agree_ci95'][0]:.0f}, {s['agree_ci95'][1]:.0f}]",
                      f"{s['smape']:.1f}", f"[{s['smape_ci95'][0]:.1f}, {s['smape_ci95'][1]:.1f}]", str(s["smape_rows"]))
    console.print(table)


@report_app.command("recompute")
def report_recompute(
    out: Optional[Path] = typer.Option(None, help="JSON output (default: DIR/recompute_summary.json of params.recompute.out)."),
) -> None:
    """Metrics of the recompute audit: per-calculator computable and agreement rates, and the
    precision/recall of its flags (aggregation_mismatch, implausible_input) as a detector of
    "the original label diverges from the maintained label"."""
    import json

    from medcalc_maintained import recompute as stage
    from medcalc_maintained.io import write_text_atomic

    root = config.project_root()
    audit_dir = _path(root, config.section("recompute", root).get("out", "data/audit"))
    rec = _read_parquet(audit_dir / "recompute.parquet", "recompute output")
    inst = _read_parquet(root / "data/interim/instances.parquet", "instances")
    mpath = _path(root, config.section("apply", root).get("out", "data/maintained")) / "instances.parquet"
    maintained = _read_parquet(mpath, "maintained instances")
    summary = stage.summarise(rec, inst, maintained)
    target = out or audit_dir / "recompute_summary.json"
    write_text_atomic(target, json.dumps(summary, indent=2) + "\n")
    d = summary["detector"]
    console.print(f"recompute detector: flagged {d['flagged']} of {d['rows']} verified rows, "
                  f"{d['diverging']} diverge; precision {d['precision']}, recall {d['recall']}")


@app.command()
def validate(
    target: Optional[Path] = typer.Argument(None, help="A built release directory (with manifest.json); default: the pipeline's outputs."),
    docs: Optional[Path] = typer.Option(None, help="Where to write GX Data Docs HTML (default: params.validate.data_docs, build/data-docs)."),
    no_docs: bool = typer.Option(False, "--no-docs", help="Skip rendering Data Docs (faster)."),
) -> None:
    """Evaluate the data contracts (GX suites in expectations/) on the pipeline outputs or a release.

    Suites: schema, label_invariants, ledger, qc_gates (blocking or warning per params.yaml), and
    manifest (release directories only). Prints every failed expectation with its suite and the
    offending uids, writes Data Docs, and exits 1 when a blocking expectation fails.
    """
    from medcalc_maintained import validate as stage

    root = config.project_root()
    docs_dir = None if no_docs else (docs or _path(root, config.section("validate", root).get("data_docs", "build/data-docs")))
    try:
        rep = stage.validate(target, root=root, docs_dir=docs_dir)
    except DataError as exc:
        fail(exc)
    for f in rep.failures:
        (err if f.severity == "blocking" else console).print(str(f), highlight=False, soft_wrap=True, markup=False)
    verdict = "[green]passed[/]" if rep.success else "[bold red]FAILED[/]"
    console.print(f"validate {rep.target}: {verdict} - {rep.evaluated} expectations, {len(rep.blocking)} blocking "
                  f"failure(s), {len(rep.warnings)} warning(s)" + (f"; Data Docs in {docs_dir}/index.html" if docs_dir else ""))
    if not rep.success:
        raise typer.Exit(1)


@app.command()
def summary() -> None:
    """Print what the pipeline produced (counts per stage, metrics, release), read from disk."""
    from medcalc_maintained.summary import print_summary

    if print_summary(config.project_root(), console) == 0:
        fail(RuntimeError("nothing to summarise: run `make run` (or `dvc repro`) first"), code=1)


from medcalc_maintained.compare_cli import app as _compare_app, evaluate_command as _evaluate  # noqa: E402

app.add_typer(_compare_app, name="compare")
app.command("evaluate")(_evaluate)


from medcalc_maintained.review_cli import register as _r_review; _r_review(app)  # noqa: E402,E702
from medcalc_maintained.release_cli import register as _r_release; _r_release(app)  # noqa: E402,E702
from medcalc_maintained.llm_cli import register as _r_llm; _r_llm(app)  # noqa: E402,E702


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
