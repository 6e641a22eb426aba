"""Commands ``audit`` and ``relabel`` of the CLI (registered on the main app by :func:`register`)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from medcalc_maintained.cli.common import console, err, fail, guarded
from medcalc_maintained.core.errors import DataError, OutRefused
from medcalc_maintained.core.redact import redact


class BackendName(str, Enum):
    rules = "rules"
    replay = "replay"
    gemini = "gemini"


def _print_estimate(stage: str, backend: Any, est: Any, batch: bool) -> None:
    t = Table(title=f"{stage} --dry-run: {backend.name} ({backend.model})", show_header=False)
    t.add_column("", style="bold")
    t.add_column("", justify="right")
    t.add_row("rows", f"{est.rows:,}")
    t.add_row("planned calls (rows x runs)", f"{est.tasks:,}")
    t.add_row("distinct calls (identical prompts share one)", f"{est.distinct_calls:,}")
    t.add_row("already in the cache (free)", f"{est.cached:,}")
    t.add_row("calls to make", f"{est.to_call:,}")
    if backend.cacheable:
        t.add_row("estimated input tokens", f"{est.input_tokens:,}")
        t.add_row("estimated output tokens", f"{est.output_tokens:,}")
        t.add_row("estimated cost, online", f"${est.cost_online:,.2f}")
        t.add_row("estimated cost, --batch", f"${est.cost_batch:,.2f}")
    console.print(t)
    for note in est.notes:
        console.print(f"[dim]- {note}[/]", highlight=False)
    if batch:
        console.print("[dim]- --batch: the calls would be submitted through the Gemini Batch API[/]")
    console.print("dry run: no call made, nothing written")


def _print_result(result: Any) -> None:
    p, info, ex, b = result.plan, result.info, result.execution, result.plan.backend
    out_dir = p.out_dir
    if p.kind.stage == "audit":
        verdicts, flags = result.tables["verdicts"], result.tables["flags"]
        console.print(f"audit ({b.name}, {b.model}): {info['flagged']} of {len(flags)} rows flagged "
                      f"likely error; verdicts {info['verdicts']}")
        console.print(f"  rule: {info['rule']}")
        console.print(f"wrote {out_dir / 'verdicts.parquet'} ({len(verdicts)} votes) and {out_dir / 'flags.parquet'}")
    else:
        labels, votes = result.tables["labels"], result.tables["votes"]
        console.print(f"relabel ({b.name}, {b.model}): {info['labeled']} labeled "
                      f"({info['abstain_labels']} of them N/A), {info['deferred']} deferred of {len(labels)} rows")
        console.print(f"wrote {out_dir / 'labels.parquet'} and {out_dir / 'votes.parquet'} ({len(votes)} votes)")
    if b.cacheable:
        console.print(f"  calls: {ex['made']} made, {ex['from_cache']} from the cache, {ex['retries']} retries, "
                      f"{ex['malformed_replies']} malformed replies, {ex['unparseable_votes']} unparseable"
                      f"{' (batch)' if ex['batch'] else ''}; tokens in {ex['input_tokens']:,} out "
                      f"{ex['output_tokens']:,}; cost this run ${ex['cost_usd']:,.2f}")
    timing = f"  time: {ex['elapsed_s']:.1f} s"
    if ex["made"]:
        timing += f"; call latency mean {ex['latency_mean_s']:.2f} s, max {ex['latency_max_s']:.2f} s"
    console.print(timing, highlight=False)


def _run_stage(stage: str, *, dry_run: bool, **options: Any) -> None:
    from functools import partial

    from medcalc_maintained.stages import audit as audit_stage
    from medcalc_maintained.stages import relabel as relabel_stage
    from medcalc_maintained.verifiers.engine import FatalCallError, progress_bar
    from medcalc_maintained.verifiers.runner import CallsFailed

    mod = audit_stage if stage == "audit" else relabel_stage
    backend = options.pop("backend")
    try:
        plan = mod.plan(guarded(options.get("out")), backend=backend.value if backend else None, dry_run=dry_run, **options)
    except (DataError, ValueError) as exc:  # a bad option value (the stage's Refused)
        fail(exc)
    for note in plan.notes:
        console.print(f"[dim]{note}[/]")
    if dry_run:
        _print_estimate(stage, plan.backend, plan.estimate(), plan.batch)
        return
    try:
        result = plan.execute(partial(progress_bar, console))
    except CallsFailed as exc:
        for o in exc.failed[:20]:
            err.print(f"  uid {o.task.uid} run {o.task.run}: {redact(o.error)}", highlight=False, soft_wrap=True)
        fail(f"{exc}; nothing written", code=1)
    except OutRefused as exc:  # --out changed while the calls ran: kept as it is
        fail(f"{exc}; completed calls are cached")
    except (FatalCallError, DataError) as exc:
        fail(f"{exc}; completed calls are cached; nothing written", code=1)
    except KeyboardInterrupt:
        fail("interrupted; completed calls are cached, rerun to resume; nothing written", code=130)
    _print_result(result)


_BACKEND_HELP = ("rules: the deterministic recompute audit (offline); replay: recorded replies (--replay-file), "
                 "for relabel by default the published consensus labels; gemini: Gemini via google-genai "
                 "(needs GEMINI_API_KEY). Default: the backend in params.yaml (audit: rules, relabel: replay).")


def register(app: typer.Typer) -> None:
    """Add ``audit`` and ``relabel`` to the main CLI."""

    @app.command("audit")
    def audit(
        backend: Optional[BackendName] = typer.Option(None, "--backend", help=_BACKEND_HELP),
        runs: Optional[int] = typer.Option(None, "--runs", help="Runs per row (default params.audit.runs, 5; rules makes 1)."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Only the first N rows (by uid)."),
        concurrency: Optional[int] = typer.Option(None, "--concurrency", help="Calls in flight (default params.audit.engine.concurrency)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default params.audit.out, data/audit_llm)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the planned calls and their estimated cost; call nothing, write nothing."),
        batch: bool = typer.Option(False, "--batch", help="Submit the uncached calls through the Gemini Batch API (half price; hours)."),
        instances: Optional[Path] = typer.Option(None, "--instances", help="Instances parquet (default: the ingest stage's output)."),
        replay_file: Optional[Path] = typer.Option(None, "--replay-file", help="Recorded replies keyed by uid and run (.jsonl/.json/.csv/.parquet with uid, run, text)."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Call cache (default params.audit.cache_dir, .cache/llm)."),
        split: Optional[str] = typer.Option(None, "--split", help="Split to audit (default params.audit.split, test)."),
    ) -> None:
        """Audit the v1.0 labels: is each label clinically correct? -> DIR/verdicts.parquet, DIR/flags.parquet.

        The verifier sees the note, the question, the label with its accepted range and how it was
        derived (Relevant Entities, Ground Truth Explanation), and answers yes (correct) or no. With
        gemini each row runs 5 times and is flagged "likely error" when at least 4 runs say no; the
        rules backend (offline default) runs once per row and flags it when the recompute audit finds
        an aggregation mismatch or an implausible input. Paid calls are cached under .cache/llm, so a
        rerun or a resumed run pays for nothing twice; retries cover 429, 5xx, timeouts and dropped
        connections. If calls still fail, nothing is written and the command exits 1.
        """
        _run_stage("audit", dry_run=dry_run, backend=backend, runs=runs, limit=limit, concurrency=concurrency,
                   out=out, batch=batch, instances=instances, replay_file=replay_file, cache_dir=cache_dir,
                   split=split)

    @app.command("relabel")
    def relabel(
        backend: Optional[BackendName] = typer.Option(None, "--backend", help=_BACKEND_HELP),
        runs: Optional[int] = typer.Option(None, "--runs", help="Runs per row (default params.relabel.runs, 5)."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Only the first N rows (by uid)."),
        concurrency: Optional[int] = typer.Option(None, "--concurrency", help="Calls in flight (default params.relabel.engine.concurrency)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default params.relabel.out, data/relabel)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the planned calls and their estimated cost; call nothing, write nothing."),
        batch: bool = typer.Option(False, "--batch", help="Submit the uncached calls through the Gemini Batch API (half price; hours)."),
        instances: Optional[Path] = typer.Option(None, "--instances", help="Instances parquet (default: the ingest stage's output)."),
        replay_file: Optional[Path] = typer.Option(None, "--replay-file", help="Recorded replies keyed by uid and run (.jsonl/.json/.csv/.parquet with uid, run, text)."),
        cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Call cache (default params.relabel.cache_dir, .cache/llm)."),
        split: Optional[str] = typer.Option(None, "--split", help="Split to relabel (default params.relabel.split, test)."),
    ) -> None:
        """Relabel independently from the note and question only -> DIR/labels.parquet, DIR/votes.parquet.

        The labeller never sees the original label, its entities or its explanation; it answers
        inside <answer></answer> (a number, a date, a gestational age, or N/A when the note lacks
        what is needed). With gemini each row runs 5 times and is labeled only when at least 4 runs
        agree in type and value (reals to 2 decimals, dates exactly, or all N/A); otherwise it is
        deferred. The offline default (replay) replays the campaign's published consensus labels
        y_new as one consensus vote per row; rows the campaign did not label are deferred.
        """
        _run_stage("relabel", dry_run=dry_run, backend=backend, runs=runs, limit=limit, concurrency=concurrency,
                   out=out, batch=batch, instances=instances, replay_file=replay_file, cache_dir=cache_dir,
                   split=split)
