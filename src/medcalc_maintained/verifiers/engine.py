"""The asyncio engine that runs verifier calls: bounded concurrency, a rate limit, retries with
exponential backoff and jitter, an on-disk cache, the Batch API path, and a progress bar.

Every call of a *cacheable* backend goes through the same steps:

1. tasks with the same cache key (same backend, model, prompt, run and settings) are merged: one
   call serves them all;
2. a key already in the cache is not called again (a rerun, or a run resumed after the process
   was killed, pays for nothing twice);
3. the call waits for a concurrency slot and for the rate limiter, then runs with a timeout;
4. 429, 5xx, timeouts and dropped connections are retried up to ``retries`` times, sleeping
   ``min(backoff_max, backoff_initial * 2**(n-1))`` scaled by a random factor in [0.5, 1]
   (or longer when the service says how long to wait);
5. a reply that cannot be read is retried up to ``malformed_retries`` times and then recorded as
   one ``unparseable`` vote;
6. the completed call is written to the cache at once (atomically).

Any other error (a bad API key, an unknown model) stops the run. Calls that still fail after their
retries are reported; the stage then writes nothing and a rerun retries only them.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Column

from medcalc_maintained.core.redact import redact
from medcalc_maintained.verifiers.base import FATAL, MALFORMED, Backend, Completion, MalformedReply, Task
from medcalc_maintained.verifiers.cache import Cache, Entry, cache_key
from medcalc_maintained.verifiers.settings import EngineSettings, Prices

Validator = Callable[[Task, str], "str | None"]  # (task, reply text) -> problem (None when readable)


class FatalCallError(RuntimeError):
    """A call failed in a way retrying cannot fix (stops the whole run)."""


@dataclass
class Outcome:
    task: Task
    key: str
    entry: Entry | None  # None: the call failed after its retries
    source: str  # "cache" (earlier run), "call", "batch", "local" (offline backend), "failed"
    error: str = ""


@dataclass
class Stats:
    planned: int = 0  # distinct calls needed
    cached: int = 0
    calls: int = 0  # completed this run (online or batch)
    http_attempts: int = 0
    retries: int = 0
    malformed: int = 0
    unparseable: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    search_queries: int = 0
    grounded_calls: int = 0
    batch: bool = False
    latency_total_s: float = 0.0  # wall-clock seconds of the calls made this run (for the log only)
    latency_max_s: float = 0.0

    def cost(self, prices: Prices) -> float:
        """USD spent by this run's calls (cached replies cost nothing now)."""
        factor = (1 - prices.batch_discount) if self.batch else 1.0
        tokens = (self.input_tokens * prices.input_per_1m + self.output_tokens * prices.output_per_1m) / 1e6
        return tokens * factor + self.grounded_calls * prices.grounding_per_1k / 1000

    def add(self, entry: Entry) -> None:
        self.input_tokens += entry.input_tokens
        self.output_tokens += entry.output_tokens
        self.search_queries += entry.search_queries
        self.grounded_calls += 1 if entry.search_queries else 0
        self.latency_total_s += entry.latency_s
        self.latency_max_s = max(self.latency_max_s, entry.latency_s)


class RateLimiter:
    """Spaces call starts at least ``60 / rpm`` seconds apart (no limit when rpm is falsy)."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


def backoff_delay(n: int, settings: EngineSettings, hint: float | None = None, rng: random.Random | None = None) -> float:
    """Sleep before retry ``n`` (1-based): exponential, capped, scaled by a random factor in
    [0.5, 1]; at least the service's own ``hint`` (itself capped at ``backoff_max_s``)."""
    u = rng.random() if rng is not None else random.random()
    base = min(settings.backoff_max_s, settings.backoff_initial_s * (2 ** (n - 1)))
    delay = base * (0.5 + 0.5 * u)
    if hint:
        delay = max(delay, min(hint, settings.backoff_max_s))
    return delay


ProgressHook = Callable[[Stats, int], None]  # (stats, rows completed now) -> None


class Engine:
    def __init__(self, backend: Backend, settings: EngineSettings, *, timeout_s: float, cache: Cache | None = None,
                 validator: Validator | None = None,
                 on_progress: ProgressHook | None = None, seed: int | None = None):
        self.backend = backend
        self.settings = settings
        self.cache = cache if backend.cacheable else None
        self.timeout_s = timeout_s
        self.validator = validator or (lambda task, text: None)
        self.on_progress = on_progress or (lambda stats, n: None)
        self.stats = Stats()
        self.rng = random.Random(seed)

    # -- planning ---------------------------------------------------------------------------
    def key(self, task: Task) -> str:
        """Cache key of a paid call; offline backends answer per row (a replayed vote belongs to its
        uid even when two rows share a prompt), so their key includes the row."""
        settings = self.backend.settings_digest()
        if not self.backend.cacheable:
            settings += f"|{task.split}:{task.uid}"
        return cache_key(self.backend.name, self.backend.model, task.prompt_sha256, task.run, settings)

    def plan(self, tasks: list[Task]) -> tuple[dict[str, list[Task]], dict[str, Entry]]:
        """Tasks grouped by key, and the entries already cached."""
        groups: dict[str, list[Task]] = {}
        for t in tasks:
            groups.setdefault(self.key(t), []).append(t)
        cached: dict[str, Entry] = {}
        if self.cache is not None:
            for k in groups:
                e = self.cache.get(self.backend.name, self.backend.model, k)
                if e is not None:
                    cached[k] = e
        return groups, cached

    # -- running ----------------------------------------------------------------------------
    def run(self, tasks: list[Task], *, batch: bool = False) -> list[Outcome]:
        return asyncio.run(self.arun(tasks, batch=batch))

    async def arun(self, tasks: list[Task], *, batch: bool = False) -> list[Outcome]:
        groups, cached = self.plan(tasks)
        self.stats = Stats(planned=len(groups), cached=len(cached), batch=batch)
        results: dict[str, tuple[Entry | None, str, str]] = {k: (e, "cache", "") for k, e in cached.items()}
        self.on_progress(self.stats, sum(len(groups[k]) for k in cached))
        pending = {k: g for k, g in groups.items() if k not in cached}
        if pending:
            try:
                await self.backend.open()
            except Exception as exc:
                raise FatalCallError(redact(f"cannot start the {self.backend.name} backend: {type(exc).__name__}: {exc}")) from None
            try:
                if batch:
                    runner = getattr(self.backend, "run_batch", None)
                    if runner is None:
                        raise FatalCallError(f"backend {self.backend.name!r} has no batch mode")
                    results.update(await runner(pending, self))
                else:
                    results.update(await self._online(pending))
            finally:
                await self.backend.close()
        out = []
        for k, group in groups.items():
            entry, source, error = results[k]
            for t in group:
                out.append(Outcome(t, k, entry, source if entry is not None else "failed", error))
        return out

    async def _online(self, pending: dict[str, list[Task]]) -> dict[str, tuple[Entry | None, str, str]]:
        sem = asyncio.Semaphore(self.settings.concurrency)
        limiter = RateLimiter(self.settings.rate_limit_rpm if self.backend.cacheable else None)
        results: dict[str, tuple[Entry | None, str, str]] = {}
        source = "call" if self.backend.cacheable else "local"

        async def one(key: str, group: list[Task]) -> None:
            async with sem:
                entry, error = await self._call_with_retries(key, group[0], limiter)
            results[key] = (entry, source, error)
            if entry is None:
                self.stats.failed += 1
            self.on_progress(self.stats, len(group))

        try:
            async with asyncio.TaskGroup() as tg:
                for k, g in pending.items():
                    tg.create_task(one(k, g))
        except* FatalCallError as eg:
            raise eg.exceptions[0] from None
        return results

    def entry_from(self, key: str, task: Task, comp: Completion, *, attempts: int, ok: bool = True,
                   problem: str = "", batch: bool = False) -> Entry:
        return Entry(key=key, backend=self.backend.name, model=self.backend.model, prompt_sha256=task.prompt_sha256,
                     run=task.run, settings=self.backend.settings_digest(), text=comp.text, ok=ok, problem=problem,
                     input_tokens=comp.input_tokens, output_tokens=comp.output_tokens,
                     thoughts_tokens=comp.thoughts_tokens, search_queries=comp.search_queries,
                     latency_s=round(comp.latency_s, 4), attempts=attempts, batch=batch,
                     model_version=comp.model_version, finish_reason=comp.finish_reason)

    def record(self, entry: Entry) -> None:
        """Count a completed call and persist it (cacheable backends) before anything else."""
        if self.cache is not None:
            self.cache.put(entry)
        self.stats.calls += 1
        self.stats.add(entry)
        if not entry.ok:
            self.stats.unparseable += 1

    async def _call_with_retries(self, key: str, task: Task, limiter: RateLimiter) -> tuple[Entry | None, str]:
        transient = malformed = attempts = 0
        last_text = ""
        while True:
            await limiter.wait()
            attempts += 1
            self.stats.http_attempts += 1
            t0 = time.monotonic()
            try:
                comp = await asyncio.wait_for(self.backend.generate(task), self.timeout_s)
                comp.latency_s = comp.latency_s or (time.monotonic() - t0)
                problem = self.validator(task, comp.text)
                if problem:
                    last_text = comp.text
                    raise MalformedReply(problem)
                entry = self.entry_from(key, task, comp, attempts=attempts)
                self.record(entry)
                return entry, ""
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # classified below; anything unknown is fatal
                kind = self.backend.classify(exc)
                if kind == FATAL:
                    raise FatalCallError(redact(f"{self.backend.name} call for uid {task.uid} run {task.run} failed: "
                                                f"{type(exc).__name__}: {exc}")) from None
                if kind == MALFORMED:
                    malformed += 1
                    self.stats.malformed += 1
                    if malformed > self.settings.malformed_retries:
                        comp = Completion(text=last_text, latency_s=time.monotonic() - t0)
                        entry = self.entry_from(key, task, comp, attempts=attempts, ok=False,
                                                problem=f"malformed reply after {malformed} attempts: {exc}")
                        self.record(entry)
                        return entry, ""
                    delay = backoff_delay(malformed, self.settings, None, self.rng)
                else:
                    transient += 1
                    if transient > self.settings.retries:
                        return None, redact(f"{type(exc).__name__}: {exc}")[:500]
                    self.stats.retries += 1
                    delay = backoff_delay(transient, self.settings, self.backend.retry_after(exc), self.rng)
                await asyncio.sleep(delay)


# -- progress bar ---------------------------------------------------------------------------
def progress_bar(console: Console, description: str, total_rows: int, prices: Prices
                 ) -> tuple[Progress, ProgressHook]:
    """A rich progress bar over rows (with ETA) showing calls, retries, tokens and cost so far."""
    progress = Progress(
        TextColumn("[bold]{task.description}"), BarColumn(bar_width=20), MofNCompleteColumn(),
        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
        TextColumn("{task.fields[info]}", table_column=Column(overflow="fold")),  # wraps; the bar keeps its width
        console=console, disable=not console.is_terminal, transient=False,
    )
    tid = progress.add_task(description, total=total_rows, info="")

    def hook(stats: Stats, done: int) -> None:
        info = (f"{stats.calls} calls {stats.cached} cached {stats.retries} retries "
                f"{stats.input_tokens / 1e3:,.0f}k/{stats.output_tokens / 1e3:,.0f}k tok ${stats.cost(prices):,.2f}")
        progress.update(tid, advance=done, info=info)

    return progress, hook

