"""What the ``audit`` and ``relabel`` stages share: choosing rows, building the backend and the
tasks, the ``--dry-run`` cost estimate, and running the engine."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.redact import redact
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.verifiers.base import Backend, Task, canonical_json
from medcalc_maintained.verifiers.cache import Cache
from medcalc_maintained.verifiers.engine import Engine, Outcome, ProgressHook, Validator
from medcalc_maintained.verifiers.prompts import prompt_sha256
from medcalc_maintained.verifiers.settings import StageSettings


class CallsFailed(RuntimeError):
    """Some calls still failed after their retries; nothing was written."""

    def __init__(self, failed: list[Outcome]):
        self.failed = failed
        first = failed[0]
        super().__init__(redact(f"{len(failed)} call(s) failed after retries (first: uid {first.task.uid} run "
                                f"{first.task.run}: {first.error}); completed calls are cached, rerun to retry the rest"))


def select_rows(instances: pd.DataFrame, split: str, limit: int | None, source: Path | str = "instances") -> pd.DataFrame:
    """The instances of ``split`` in uid order, the first ``limit`` of them when given."""
    needed = ["uid", "split", "calculator_id", "Output Type", "Patient Note", "Question"]
    missing = [c for c in needed if c not in instances.columns]
    if missing:
        raise DataError(source, f"missing column(s) {', '.join(missing)}")
    rows = instances[instances["split"] == split].sort_values("uid", kind="stable")
    if rows.empty:
        raise DataError(source, f"no rows of split {split!r}", field="split")
    if limit is not None:
        if limit < 1:
            raise DataError(source, f"--limit must be at least 1, got {limit}")
        rows = rows.head(limit)
    return rows.reset_index(drop=True)


def make_backend(stage: str, name: str, settings: StageSettings, *, instances: pd.DataFrame,
                 replay_file: Path | None = None, campaign: tuple[Path, Path] | None = None) -> Backend:
    """The backend ``name`` for ``stage`` (``rules`` only audits; ``replay`` without a file replays
    the published consensus labels for ``relabel``)."""
    if name == "rules":
        if stage != "audit":
            raise DataError("params.yaml", "the rules backend is an audit (it checks a label, it cannot produce one)",
                            field=f"{stage}.backend")
        from medcalc_maintained.verifiers.rules import RulesBackend

        return RulesBackend()
    if name == "replay":
        from medcalc_maintained.verifiers.replay import PublishedConsensus, RecordedReplay

        if replay_file is not None:
            return RecordedReplay(replay_file)
        if stage == "relabel":
            if not campaign:
                raise DataError("params.yaml", "campaign.sampled and campaign.final are needed to replay the "
                                "published consensus labels", field="campaign")
            return PublishedConsensus(campaign[0], campaign[1], instances)
        raise DataError("params.yaml", "audit --backend replay needs a file of recorded replies (--replay-file or "
                        "audit.replay_file): the per-run audit verdicts were not published", field="audit.replay_file")
    if name == "gemini":
        from medcalc_maintained.verifiers.gemini import GeminiBackend

        return GeminiBackend(settings.gemini, settings.batch, stage=stage)
    raise DataError("params.yaml", f"unknown backend {name!r}", field=f"{stage}.backend")


Renderer = Callable[[Mapping[str, Any]], tuple[str, str]]
Payload = Callable[[Mapping[str, Any]], dict[str, Any]]


def build_tasks(rows: pd.DataFrame, backend: Backend, runs: int, kind: str, render: Renderer,
                payload: Payload | None = None) -> list[Task]:
    """One task per (row, run) the backend makes. A backend that reads structured inputs
    (``rules``) gets them as ``payload``; its "prompt" is their canonical JSON."""
    tasks = []
    for row in row_dicts(rows):
        uid = int(row["uid"])
        indices = backend.run_indices(uid, runs)
        if not indices:
            continue
        if getattr(backend, "uses_prompt", True):
            system, user = render(row)
            data: dict[str, Any] = {}
        else:
            data = payload(row) if payload else {}
            system, user = "", canonical_json(data)
        sha = prompt_sha256(system, user)
        for run in indices:
            tasks.append(Task(uid=uid, split=str(row["split"]), run=int(run), kind=kind,
                              output_type=str(row["Output Type"]), system=system, user=user,
                              prompt_sha256=sha, payload=data))
    return tasks


def make_engine(backend: Backend, settings: StageSettings, *, cache_dir: Path, concurrency: int | None = None,
                validator: Validator | None = None, on_progress: ProgressHook | None = None) -> Engine:
    """The engine of a stage: ``settings.engine`` (``concurrency`` overridden when given) and the
    call cache in ``cache_dir`` (an absolute path)."""
    eng = settings.engine
    if concurrency is not None:
        if concurrency < 1:
            raise DataError("--concurrency", f"must be at least 1, got {concurrency}")
        eng = replace(eng, concurrency=concurrency)
    return Engine(backend, eng, cache=Cache(cache_dir), timeout_s=settings.gemini.timeout_s, validator=validator,
                  on_progress=on_progress)


@dataclass
class Estimate:
    rows: int
    tasks: int
    distinct_calls: int
    cached: int
    to_call: int
    input_tokens: int = 0
    output_tokens: int = 0
    grounded: int = 0
    cost_online: float = 0.0
    cost_batch: float = 0.0
    notes: list[str] = field(default_factory=list)


def estimate(engine: Engine, tasks: list[Task], settings: StageSettings, rows: int) -> Estimate:
    """Planned calls and their cost, without calling (token counts estimated from characters)."""
    groups, cached = engine.plan(tasks)
    todo = [g[0] for k, g in groups.items() if k not in cached]
    est = Estimate(rows=rows, tasks=len(tasks), distinct_calls=len(groups), cached=len(cached), to_call=len(todo))
    if not engine.backend.cacheable:
        est.notes.append(f"offline backend {engine.backend.name!r}: no API calls, no cost")
        return est
    e, p = settings.estimate, settings.prices
    grounded = "google_search" in settings.gemini.tools
    est.input_tokens = sum(math.ceil((len(t.system) + len(t.user)) / e.chars_per_token) + (e.tool_input_tokens if grounded else 0)
                           for t in todo)
    est.output_tokens = len(todo) * e.output_tokens
    est.grounded = len(todo) if grounded else 0
    tokens = (est.input_tokens * p.input_per_1m + est.output_tokens * p.output_per_1m) / 1e6
    search = est.grounded * p.grounding_per_1k / 1000
    est.cost_online = tokens + search
    est.cost_batch = tokens * (1 - p.batch_discount) + search
    est.notes += [
        f"input tokens = characters / {e.chars_per_token:g}" + (f" + {e.tool_input_tokens} search-result tokens per call" if grounded else ""),
        f"output tokens = {e.output_tokens} per call (thinking + reply; thinking budget {settings.gemini.thinking_budget})",
        f"prices per 1M tokens: input ${p.input_per_1m:g}, output ${p.output_per_1m:g}; batch discount {100 * p.batch_discount:g}%",
    ]
    if grounded:
        est.notes.append(f"every call counted as one grounded prompt at ${p.grounding_per_1k:g}/1,000 "
                         "(the free daily grounding quota is not subtracted)")
    return est


def execute(engine: Engine, tasks: list[Task], *, batch: bool = False) -> list[Outcome]:
    """Run the tasks; raise :class:`CallsFailed` when any call failed after its retries."""
    outcomes = engine.run(tasks, batch=batch)
    failed = [o for o in outcomes if o.entry is None]
    if failed:
        raise CallsFailed(failed)
    return outcomes
