"""What the ``audit`` and ``relabel`` stages share: plan the calls (settings, rows, backend, tasks),
estimate them (``--dry-run``), run them through the engine, assemble the two tables (one row per
run, one row per instance) and write them with ``run.json`` (the run record) and ``metrics.json``
(the DVC metric: scalars only). What differs between the two stages is a :class:`StageKind`.

The outputs are a function of the inputs, the parameters and the recorded replies: running a stage
twice on the same inputs writes byte-identical files. What one invocation did to obtain the replies
(calls made now or read from the cache, retries, cost, wall-clock time) is returned in
:attr:`LLMRun.execution` for the command's log and is never written to an output.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager

import pandas as pd

from medcalc_maintained.core.atomic import replace_files
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.out_dirs import check_replace
from medcalc_maintained.core.readers import read_parquet, sha256_file
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.project import Project
from medcalc_maintained.stages._metrics import METRICS
from medcalc_maintained.verifiers import prompts, runner
from medcalc_maintained.verifiers import settings as settings_mod
from medcalc_maintained.verifiers.base import Backend, Task
from medcalc_maintained.verifiers.cache import Entry
from medcalc_maintained.verifiers.engine import Outcome, ProgressHook, Stats, Validator
from medcalc_maintained.verifiers.gemini import api_key_present
from medcalc_maintained.verifiers.settings import Prices, StageSettings

#: ``(description, rows, prices) -> (context manager around the run, progress hook)``
ProgressFactory = Callable[[str, int, Prices], tuple[ContextManager, ProgressHook]]


class Refused(ValueError):
    """The options ask for something the stage cannot do (nothing was called or written): a bad
    option value, as the command line reports it."""


#: one row of a stage's table: a run's (:func:`run_rows`) or an instance's (``StageKind.instance_row``)
Row = dict[str, Any]


@dataclass(frozen=True)
class StageKind:
    """What differs between ``audit`` and ``relabel``: how tasks are built and replies checked, the
    stage's own fields of a run's row, how an instance's row follows from its runs, the two output
    tables and the stage's own ``run.json`` entries. :meth:`plan` and :meth:`run` are the stage's
    ``plan`` and ``run``."""

    stage: str
    tables: dict[str, list[str]]  # file stem -> columns of the two tables, in the order they are written
    runs_table: str  # the stem of the table with one row per run (the other has one row per instance)
    tasks: Callable[[pd.DataFrame, Backend, int], list[Task]]
    validator: Validator
    run_fields: Callable[[Task, Entry], Row]  # the stage's own fields of one run's row
    instance_row: Callable[[Row, list[Row], Backend, StageSettings], Row]  # (instance, its runs' rows, ...)
    summary: Callable[[dict[str, pd.DataFrame], Backend, StageSettings, int], dict[str, Any]]

    @property
    def outputs(self) -> tuple[str, ...]:
        """The file stems of the two tables, in the order they are written."""
        return tuple(self.tables)

    def plan(self, project: Project, **options: Any) -> Plan:
        """The planned calls (``--dry-run`` passes ``dry_run=True``); see :func:`plan`."""
        return plan(project, self, **options)

    def run(self, project: Project, *, progress: ProgressFactory | None = None, **options: Any) -> LLMRun:
        """The whole stage: select rows, make backend and engine, run, assemble, write the two tables,
        ``run.json`` and ``metrics.json`` (the options of :func:`plan`)."""
        return execute(plan(project, self, **options), progress)


@dataclass
class Plan:
    kind: StageKind
    settings: StageSettings
    backend: Backend
    rows: pd.DataFrame
    tasks: list[Task]
    runs: int  # runs requested per row
    split: str
    out_dir: Path
    cache_dir: Path
    concurrency: int | None
    batch: bool
    notes: list[str] = field(default_factory=list)

    def estimate(self) -> runner.Estimate:
        """:func:`estimate` of this plan (``--dry-run``)."""
        return estimate(self)

    def execute(self, progress: ProgressFactory | None = None) -> LLMRun:
        """:func:`execute` of this plan: the calls made and the outputs written."""
        return execute(self, progress)


@dataclass
class LLMRun:
    plan: Plan
    tables: dict[str, pd.DataFrame]  # by output stem (``verdicts``, ``flags`` / ``labels``, ``votes``)
    info: dict[str, Any]  # what run.json holds
    written: list[Path]
    execution: dict[str, Any]  # what this invocation did: calls, cache hits, retries, cost, time (log only)


def plan(project: Project, kind: StageKind, *, backend: str | None = None, runs: int | None = None,
         limit: int | None = None, concurrency: int | None = None, out: Path | None = None, batch: bool = False,
         instances: Path | None = None, replay_file: Path | None = None, cache_dir: Path | None = None,
         split: str | None = None, dry_run: bool = False) -> Plan:
    """Settings, rows, backend and tasks of one run of ``kind.stage``; raises on bad options."""
    stage = kind.stage
    settings = settings_mod.load(project, stage)
    out_dir = out or project.llm_out(stage)
    check_out(out_dir, kind)  # before any work
    name = backend or settings.backend
    n_runs = settings.runs if runs is None else runs
    if n_runs < 1:
        raise DataError("--runs", f"must be at least 1, got {n_runs}")
    if batch and name != "gemini":
        raise DataError("--batch", f"only the gemini backend has a batch mode (backend is {name!r})")
    inst_path = instances or project.instances
    inst = read_parquet(inst_path, "instances", "ingest")
    replay = replay_file or (project.path(settings.replay_file) if settings.replay_file else None)
    chosen_split = split or settings.split
    rows = runner.select_rows(inst, chosen_split, limit, inst_path)
    made = runner.make_backend(stage, name, settings, instances=inst, replay_file=replay,
                               campaign=project.campaign_workbooks)
    if name == "gemini" and not dry_run and not api_key_present():
        raise Refused("the gemini backend needs an API key: set GEMINI_API_KEY (or GOOGLE_API_KEY); "
                      "`--dry-run` shows the planned calls and their cost without one")
    if concurrency is not None and concurrency < 1:
        raise DataError("--concurrency", f"must be at least 1, got {concurrency}")
    notes = []
    if made.deterministic and n_runs != 1:
        notes.append(f"{name} is deterministic: one run per row is a complete record (runs=1)")
    return Plan(kind, settings, made, rows, kind.tasks(rows, made, n_runs), n_runs, chosen_split,
                out_dir, project.path(cache_dir) if cache_dir else project.llm_cache(stage),
                concurrency, batch, notes)


def estimate(p: Plan) -> runner.Estimate:
    """The planned calls and their estimated cost (``--dry-run``): nothing is called or written."""
    eng = runner.make_engine(p.backend, p.settings, cache_dir=p.cache_dir, concurrency=p.concurrency)
    return runner.estimate(eng, p.tasks, p.settings, len(p.rows))


def execute(p: Plan, progress: ProgressFactory | None = None) -> LLMRun:
    """Run the planned calls, assemble the tables and write them with ``run.json``.

    Raises :class:`~medcalc_maintained.verifiers.runner.CallsFailed` or
    :class:`~medcalc_maintained.verifiers.engine.FatalCallError` (nothing written; completed
    calls are cached)."""
    bar, hook = (progress(f"{p.kind.stage} {p.backend.name}", len(p.tasks), p.settings.prices) if progress
                 else (contextlib.nullcontext(), None))
    eng = runner.make_engine(p.backend, p.settings, cache_dir=p.cache_dir, concurrency=p.concurrency,
                             validator=p.kind.validator, on_progress=hook)
    t0 = time.monotonic()
    with bar:
        outcomes = runner.execute(eng, p.tasks, batch=p.batch)
    elapsed = time.monotonic() - t0
    tables = assemble(p, outcomes)
    info = run_info(p, outcomes)
    own = p.kind.summary(tables, p.backend, p.settings, p.runs)
    info.update(own)
    writers: dict[str, Callable[[Path], object]] = {
        **{f"{stem}.parquet": _parquet_writer(df) for stem, df in tables.items()},
        "run.json": lambda path: path.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8"),
        METRICS: lambda path: path.write_text(json.dumps(headline(info["rows"], own), indent=2) + "\n",
                                              encoding="utf-8")}
    # the tables and their run record replace the old set as a whole, re-checked at the moment of the swap
    written = replace_files(p.out_dir, writers, check=lambda out: check_out(out, p.kind))
    return LLMRun(p, tables, info, written, execution_log(eng.stats, p, elapsed))


def own_files(kind: StageKind) -> set[str]:
    """The files ``kind.stage`` writes into its directory."""
    return {*(f"{stem}.parquet" for stem in kind.outputs), "run.json", METRICS}


def check_out(out: Path, kind: StageKind) -> None:
    """Refuse (:class:`~medcalc_maintained.core.errors.OutRefused`) an ``--out`` that is neither missing,
    empty nor an earlier output of the stage: only its own files, and the ``.gitignore`` DVC writes
    beside its outputs (carried over). Never a folder (``.git``, ``src``, a user's)."""
    check_replace(out, command=kind.stage, writes=own_files(kind) | {".gitignore"}, required=(), force=True,
                  force_option=None)


def _parquet_writer(df: pd.DataFrame) -> Callable[[Path], object]:
    return lambda path: df.to_parquet(path, index=False)


def headline(rows: int, own: dict[str, Any]) -> dict[str, Any]:
    """The DVC metric of the stage (``metrics.json``, scalars only): the rows and the integer counts
    of the stage's own summary (audit: flagged; relabel: labeled, deferred, abstain_labels)."""
    return {"rows": rows, **{k: v for k, v in own.items() if isinstance(v, int) and not isinstance(v, bool)}}


def entry_of(o: Outcome) -> Entry:
    """The completed call of one outcome: :func:`runner.execute` stops with ``CallsFailed`` at a
    call that failed, so no outcome without one reaches the stage's tables."""
    if o.entry is None:
        raise ValueError(f"uid {o.task.uid} run {o.task.run}: the call failed, there is no reply to tabulate")
    return o.entry


def run_rows(outcomes: list[Outcome], backend: Backend, own: Callable[[Task, Entry], Row]) -> list[Row]:
    """One row per run, in (uid, run) order: the run, its prompt and what the call used, and the
    stage's ``own(task, entry)`` fields."""
    rows = []
    for o in sorted(outcomes, key=lambda o: (o.task.uid, o.task.run)):
        e = entry_of(o)
        rows.append({
            "uid": o.task.uid, "split": o.task.split, "run": o.task.run, "backend": backend.name,
            "model": backend.model, "prompt_sha256": o.task.prompt_sha256,
            "input_tokens": int(e.input_tokens), "output_tokens": int(e.output_tokens),
            "thoughts_tokens": int(e.thoughts_tokens), "search_queries": int(e.search_queries),
            "attempts": int(e.attempts), "model_version": e.model_version, **own(o.task, e),
        })
    return rows


def assemble(p: Plan, outcomes: list[Outcome]) -> dict[str, pd.DataFrame]:
    """The two tables of the stage (by file stem, in ``p.kind.tables``' order) from the engine's
    outcomes: one row per run, and one row per instance from its runs' rows."""
    runs = run_rows(outcomes, p.backend, p.kind.run_fields)
    by_uid: dict[int, list[Row]] = {}
    for r in runs:
        by_uid.setdefault(r["uid"], []).append(r)
    instances = [p.kind.instance_row(row, by_uid.get(int(row["uid"]), []), p.backend, p.settings)
                 for row in row_dicts(p.rows)]
    return {stem: pd.DataFrame(runs if stem == p.kind.runs_table else instances, columns=columns)
            for stem, columns in p.kind.tables.items()}


def run_info(p: Plan, outcomes: list[Outcome]) -> dict[str, Any]:
    """The part of ``run.json`` both stages share. Only what the outputs follow from: the same
    inputs and recorded replies give the same file (no clock, no cache-hit counts, no cost)."""
    entries = {o.key: o.entry for o in outcomes if o.entry is not None}
    b = p.backend
    info: dict[str, Any] = {
        "stage": p.kind.stage, "backend": b.name, "model": b.model, "split": p.split,
        "rows": int(len(p.rows)), "runs_requested": int(p.runs), "calls": len(p.tasks),
        "distinct_calls": len(entries), "unparseable_votes": sum(1 for e in entries.values() if not e.ok),
        "input_tokens": sum(int(e.input_tokens) for e in entries.values()),
        "output_tokens": sum(int(e.output_tokens) for e in entries.values()),
    }
    if b.uses_prompt and not b.consensus:
        info["prompts_sha256"] = prompts.template_hashes(p.kind.stage)
    if b.name == "gemini":
        info["gemini"] = p.settings.gemini.generation()
    if b.name == "replay":
        sources = getattr(b, "sources", None) or [getattr(b, "path", None)]
        info["replayed"] = {Path(s).name: sha256_file(s) for s in sources if s is not None}
    return info


def execution_log(stats: Stats, p: Plan, elapsed_s: float) -> dict[str, Any]:
    """What this invocation did, for the printed log only."""
    return {"made": stats.calls, "from_cache": stats.cached, "retries": stats.retries,
            "malformed_replies": stats.malformed, "unparseable_votes": stats.unparseable,
            "input_tokens": stats.input_tokens, "output_tokens": stats.output_tokens,
            "cost_usd": stats.cost(p.settings.prices), "batch": p.batch, "elapsed_s": elapsed_s,
            "latency_mean_s": stats.latency_total_s / stats.calls if stats.calls else 0.0,
            "latency_max_s": stats.latency_max_s}
