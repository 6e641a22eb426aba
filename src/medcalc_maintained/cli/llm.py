"""Commands ``audit`` and ``relabel`` of the CLI (registered on the main app by :func:`register`)."""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from medcalc_maintained.cli.common import console, err, project_path as _path, fail as _fail
from medcalc_maintained import config
from medcalc_maintained.core.io import DataError, write_atomic, write_text_atomic



class BackendName(str, Enum):
    rules = "rules"
    replay = "replay"
    gemini = "gemini"






def _file_sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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


def _run_stage(stage: str, *, backend_name: Optional[BackendName], runs: Optional[int], limit: Optional[int],
               concurrency: Optional[int], out: Optional[Path], dry_run: bool, batch: bool,
               instances: Optional[Path], replay_file: Optional[Path], cache_dir: Optional[Path],
               split: Optional[str]) -> None:
    import pandas as pd

    from medcalc_maintained import audit as audit_stage
    from medcalc_maintained import relabel as relabel_stage
    from medcalc_maintained.verifiers import prompts, runner
    from medcalc_maintained.verifiers import settings as settings_mod
    from medcalc_maintained.verifiers.engine import FatalCallError, progress_bar
    from medcalc_maintained.verifiers.gemini import api_key_present

    mod = audit_stage if stage == "audit" else relabel_stage
    root = config.project_root()
    params = config.load_params(root)
    try:
        settings = settings_mod.load(stage, params.get(stage), root / "params.yaml")
    except DataError as exc:
        _fail(exc)
    name = backend_name.value if backend_name else settings.backend
    n_runs = settings.runs if runs is None else runs
    if n_runs < 1:
        _fail(DataError("--runs", f"must be at least 1, got {n_runs}"))
    if batch and name != "gemini":
        _fail(DataError("--batch", f"only the gemini backend has a batch mode (backend is {name!r})"))
    inst_path = instances or root / "data/interim/instances.parquet"
    if not inst_path.is_file():
        _fail(DataError(inst_path, "instances not found (run `medcalc-maintained ingest` or `dvc repro ingest`)"))
    inst = pd.read_parquet(inst_path)
    replay = replay_file or (_path(root, settings.replay_file) if settings.replay_file else None)
    campaign = params.get("campaign") or {}
    camp_paths = {k: _path(root, campaign[k]) for k in ("sampled", "final") if campaign.get(k)}
    try:
        rows = runner.select_rows(inst, split or settings.split, limit, inst_path)
        backend = runner.make_backend(stage, name, settings, instances=inst, replay_file=replay, campaign=camp_paths)
    except DataError as exc:
        _fail(exc)
    if name == "gemini" and not dry_run and not api_key_present():
        _fail("the gemini backend needs an API key: set GEMINI_API_KEY (or GOOGLE_API_KEY); "
              "`--dry-run` shows the planned calls and their cost without one")
    tasks = mod.tasks(rows, backend, n_runs)
    if backend.deterministic and n_runs != 1:
        console.print(f"[dim]{name} is deterministic: one run per row is a complete record (runs=1)[/]")
    total = len(tasks)
    out_dir = out or _path(root, settings.out)
    if dry_run:
        try:
            eng = runner.make_engine(backend, settings, root=root, cache_dir=cache_dir, concurrency=concurrency)
        except DataError as exc:
            _fail(exc)
        _print_estimate(stage, backend, runner.estimate(eng, tasks, settings, len(rows)), batch)
        return
    progress, hook = progress_bar(console, f"{stage} {name}", total, settings.prices)
    try:
        eng = runner.make_engine(backend, settings, root=root, cache_dir=cache_dir, concurrency=concurrency,
                                 validator=mod.validator, on_progress=hook)
        with progress:
            outcomes = runner.execute(eng, tasks, batch=batch)
    except runner.CallsFailed as exc:
        for o in exc.failed[:20]:
            err.print(f"  uid {o.task.uid} run {o.task.run}: {o.error}", highlight=False, soft_wrap=True)
        _fail(f"{exc}; nothing written", code=1)
    except (FatalCallError, DataError) as exc:
        _fail(f"{exc}; completed calls are cached; nothing written", code=1)
    except KeyboardInterrupt:
        _fail("interrupted; completed calls are cached, rerun to resume; nothing written", code=130)

    stats = eng.stats
    info: dict[str, Any] = {
        "stage": stage, "backend": backend.name, "model": backend.model, "split": split or settings.split,
        "rows": int(len(rows)), "runs_requested": int(n_runs), "calls": int(total),
        "distinct_calls": stats.planned, "from_cache": stats.cached, "made": stats.calls,
        "retries": stats.retries, "malformed_replies": stats.malformed, "unparseable_votes": stats.unparseable,
        "input_tokens": stats.input_tokens, "output_tokens": stats.output_tokens,
        "cost_usd_this_run": round(stats.cost(settings.prices), 4), "batch": bool(batch),
    }
    if backend.uses_prompt and not getattr(backend, "consensus", False):
        info["prompts_sha256"] = prompts.template_hashes(stage)
    if name == "gemini":
        info["gemini"] = dict(settings.gemini.__dict__)
    if name == "replay":
        src = getattr(backend, "sources", None) or [getattr(backend, "path", None)]
        info["replayed"] = {Path(p).name: _file_sha(p) for p in src if p is not None}

    if stage == "audit":
        verdicts, flags = audit_stage.assemble(rows, outcomes, backend, settings)
        info.update({"flagged": int(flags["flagged"].sum()), "rule": audit_stage.rule_text(backend, settings, 1 if backend.deterministic else n_runs),
                     "verdicts": {k: int(v) for k, v in verdicts["verdict"].value_counts().items()}})
        write_atomic(out_dir / "verdicts.parquet", lambda p: verdicts.to_parquet(p, index=False))
        write_atomic(out_dir / "flags.parquet", lambda p: flags.to_parquet(p, index=False))
        write_text_atomic(out_dir / "run.json", json.dumps(info, indent=2) + "\n")
        console.print(f"audit ({backend.name}, {backend.model}): {info['flagged']} of {len(flags)} rows flagged "
                      f"likely error; verdicts {info['verdicts']}")
        console.print(f"  rule: {info['rule']}")
        console.print(f"wrote {out_dir / 'verdicts.parquet'} ({len(verdicts)} votes) and {out_dir / 'flags.parquet'}")
    else:
        labels, votes = relabel_stage.assemble(rows, outcomes, backend, settings)
        st = labels["status"].value_counts()
        info.update({"labeled": int(st.get("labeled", 0)), "deferred": int(st.get("deferred", 0)),
                     "abstain_labels": int((labels["label_kind"] == "abstain").sum())})
        write_atomic(out_dir / "labels.parquet", lambda p: labels.to_parquet(p, index=False))
        write_atomic(out_dir / "votes.parquet", lambda p: votes.to_parquet(p, index=False))
        write_text_atomic(out_dir / "run.json", json.dumps(info, indent=2) + "\n")
        console.print(f"relabel ({backend.name}, {backend.model}): {info['labeled']} labeled "
                      f"({info['abstain_labels']} of them N/A), {info['deferred']} deferred of {len(labels)} rows")
        console.print(f"wrote {out_dir / 'labels.parquet'} and {out_dir / 'votes.parquet'} ({len(votes)} votes)")
    if backend.cacheable:
        console.print(f"  calls: {stats.calls} made, {stats.cached} from the cache, {stats.retries} retries, "
                      f"{stats.unparseable} unparseable; tokens in {stats.input_tokens:,} out {stats.output_tokens:,}; "
                      f"cost this run ${stats.cost(settings.prices):,.2f}")


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
        instances: Optional[Path] = typer.Option(None, "--instances", help="Instances parquet (default data/interim/instances.parquet)."),
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
        _run_stage("audit", backend_name=backend, runs=runs, limit=limit, concurrency=concurrency, out=out,
                   dry_run=dry_run, batch=batch, instances=instances, replay_file=replay_file,
                   cache_dir=cache_dir, split=split)

    @app.command("relabel")
    def relabel(
        backend: Optional[BackendName] = typer.Option(None, "--backend", help=_BACKEND_HELP),
        runs: Optional[int] = typer.Option(None, "--runs", help="Runs per row (default params.relabel.runs, 5)."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Only the first N rows (by uid)."),
        concurrency: Optional[int] = typer.Option(None, "--concurrency", help="Calls in flight (default params.relabel.engine.concurrency)."),
        out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default params.relabel.out, data/relabel)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the planned calls and their estimated cost; call nothing, write nothing."),
        batch: bool = typer.Option(False, "--batch", help="Submit the uncached calls through the Gemini Batch API (half price; hours)."),
        instances: Optional[Path] = typer.Option(None, "--instances", help="Instances parquet (default data/interim/instances.parquet)."),
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
        _run_stage("relabel", backend_name=backend, runs=runs, limit=limit, concurrency=concurrency, out=out,
                   dry_run=dry_run, batch=batch, instances=instances, replay_file=replay_file,
                   cache_dir=cache_dir, split=split)
