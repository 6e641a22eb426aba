"""Backend ``gemini``: Gemini through the google-genai client, online or through the Batch API.

Model, thinking budget, temperature, seed and tools (Google Search grounding; code execution for
``relabel``) come from the stage's ``params.yaml`` section. The API key is read by the client from
``GEMINI_API_KEY`` (or ``GOOGLE_API_KEY``). The endpoint is Google's unless ``gemini.base_url``
is set in the params or ``GOOGLE_GEMINI_BASE_URL`` in the environment (the client honours the
variable itself; the tests point it at a local server that speaks the same REST protocol).

Run ``i`` of a row sends ``seed + i``: the runs are distinct samples, and a repeated run asks the
same question the same way. The client's own retries are off; the engine retries.

Batch mode (:meth:`GeminiBackend.run_batch`) submits the uncached calls as inline batch jobs
(``client.batches``), at most ``max_requests_per_job`` requests and ``max_bytes_per_job`` bytes
each, records every submitted job under ``<cache>/_batch_jobs`` at once (a killed run resumes
polling its jobs instead of paying for them again), polls until they end, and writes each result
to the same cache as the online path. Results that failed or were malformed are resubmitted in
the next round (at most ``rounds``); a reply still malformed then is one ``unparseable`` vote.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import re
import time
from typing import TYPE_CHECKING, Any

from medcalc_maintained.core.redact import redact
from medcalc_maintained.verifiers.base import (
    FATAL,
    MALFORMED,
    RETRY,
    Backend,
    Completion,
    MalformedReply,
    Task,
    canonical_json,
    sha256_text,
)
from medcalc_maintained.verifiers.settings import BatchSettings, GeminiSettings

if TYPE_CHECKING:  # pragma: no cover
    from medcalc_maintained.verifiers.cache import Cache
    from medcalc_maintained.verifiers.engine import Engine

API_KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
DONE_STATES = {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED", "JOB_STATE_EXPIRED"}


def api_key_present() -> bool:
    return any(os.environ.get(v) for v in API_KEY_VARS)


def _state(job: Any) -> str:
    s = getattr(job, "state", None)
    return str(getattr(s, "value", s) or "")


def transport_errors() -> tuple[type[BaseException], ...]:
    """The connection errors of the HTTP clients google-genai may call through: aiohttp (a dependency
    of ours: google-genai makes its async calls, ours, through it when it is installed), httpx2 (its
    own dependency, used without aiohttp or with a custom transport) and httpx, where installed."""
    import aiohttp
    import httpx2

    found: list[type[BaseException]] = [aiohttp.ClientError, httpx2.TransportError]
    try:
        import httpx
    except ImportError:  # neither a dependency of ours nor of google-genai's default install
        return tuple(found)
    return (*found, httpx.TransportError)


class GeminiBackend(Backend):
    name = "gemini"
    cacheable = True

    def __init__(self, settings: GeminiSettings, batch: BatchSettings, stage: str):
        self.settings = settings
        self.batch = batch
        self.model = settings.model
        self.stage = stage
        self.client: Any = None

    # -- configuration --------------------------------------------------------------------
    def settings_digest(self) -> str:
        s = self.settings
        return sha256_text(canonical_json({"temperature": s.temperature, "thinking_budget": s.thinking_budget,
                                           "tools": sorted(s.tools), "seed": s.seed}))

    def config(self, task: Task) -> Any:
        from google.genai import types

        s = self.settings
        tools: types.ToolListUnion = []
        if "google_search" in s.tools:
            tools.append(types.Tool(google_search=types.GoogleSearch()))
        if "code_execution" in s.tools:
            tools.append(types.Tool(code_execution=types.ToolCodeExecution()))
        return types.GenerateContentConfig(
            system_instruction=task.system or None,
            temperature=s.temperature,
            seed=None if s.seed is None else int(s.seed) + int(task.run),
            thinking_config=None if s.thinking_budget is None else types.ThinkingConfig(thinking_budget=s.thinking_budget),
            tools=tools or None,
        )

    def http_options(self) -> Any:
        from google.genai import types

        # One attempt per request: the engine owns retries (the client would otherwise retry a
        # dropped connection once by itself, after sleeping 1-10 s).
        opts: dict[str, Any] = {"timeout": int(self.settings.timeout_s * 1000),
                                "retry_options": types.HttpRetryOptions(attempts=1)}
        if self.settings.base_url:
            opts["base_url"] = self.settings.base_url
        return types.HttpOptions(**opts)

    async def open(self) -> None:
        from google import genai

        if self.client is None:
            self.client = genai.Client(http_options=self.http_options())

    async def close(self) -> None:
        if self.client is not None:
            try:
                await self.client.aio.aclose()
            finally:
                self.client = None

    # -- one call -------------------------------------------------------------------------
    async def generate(self, task: Task) -> Completion:
        t0 = time.monotonic()
        resp = await self.client.aio.models.generate_content(model=self.model, contents=task.user,
                                                             config=self.config(task))
        comp = completion_from_response(resp)
        comp.latency_s = time.monotonic() - t0
        return comp

    def classify(self, exc: BaseException) -> str:
        import pydantic
        from google.genai import errors


        if isinstance(exc, MalformedReply):
            return MALFORMED
        if isinstance(exc, errors.APIError):
            code = int(exc.code or 0)
            return RETRY if code in (408, 429) or code >= 500 else FATAL
        if isinstance(exc, (errors.UnknownApiResponseError, json.JSONDecodeError, pydantic.ValidationError,
                            UnicodeDecodeError)):
            return MALFORMED
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError, ConnectionError, OSError, *transport_errors())):
            return RETRY
        return FATAL

    def retry_after(self, exc: BaseException) -> float | None:
        from google.genai import errors

        if not isinstance(exc, errors.APIError):
            return None
        headers = getattr(getattr(exc, "response", None), "headers", None) or {}
        try:
            value = headers.get("Retry-After") or headers.get("retry-after")
            if value:
                return float(value)
        except (TypeError, ValueError, AttributeError):
            pass
        details = (exc.details or {}).get("error", {}).get("details", []) if isinstance(exc.details, dict) else []
        for d in details or []:
            if isinstance(d, dict) and str(d.get("@type", "")).endswith("RetryInfo"):
                m = re.match(r"^\s*([\d.]+)s\s*$", str(d.get("retryDelay", "")))
                if m:
                    return float(m.group(1))
        return None

    # -- batch mode -----------------------------------------------------------------------
    async def _retrying(self, engine: "Engine", what: str, factory: Any) -> Any:
        from medcalc_maintained.verifiers.engine import FatalCallError, backoff_delay

        n = 0
        while True:
            try:
                return await asyncio.wait_for(factory(), self.settings.timeout_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                kind = self.classify(exc)
                n += 1
                if kind == FATAL or n > engine.settings.retries:
                    raise FatalCallError(redact(f"batch {what} failed: {type(exc).__name__}: {exc}")) from None
                engine.stats.retries += 1
                await asyncio.sleep(backoff_delay(n, engine.settings, self.retry_after(exc), engine.rng))

    async def _submit(self, engine: "Engine", todo: dict[str, list[Task]], round_no: int) -> list[dict[str, Any]]:
        from google.genai import types

        jobs: list[dict[str, Any]] = []
        chunk: list[tuple[str, Task]] = []
        size = 0

        async def flush() -> None:
            nonlocal chunk, size
            if not chunk:
                return
            requests = [types.InlinedRequest(contents=t.user, config=self.config(t), metadata={"key": k})
                        for k, t in chunk]
            display = f"medcalc-{self.stage}-r{round_no}-{len(jobs) + 1}"
            job = await self._retrying(engine, "create", lambda: self.client.aio.batches.create(
                model=self.model, src=requests, config=types.CreateBatchJobConfig(display_name=display)))
            record = {"name": job.name, "backend": self.name, "model": self.model, "stage": self.stage,
                      "keys": [k for k, _ in chunk], "display_name": display,
                      "items": {k: [t.prompt_sha256, t.run, t.uid, t.split, t.kind, t.output_type] for k, t in chunk},
                      "submitted_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
            _jobs_cache(engine).save_job(job.name, record)
            jobs.append(record)
            chunk, size = [], 0

        for key, group in todo.items():
            t = group[0]
            est = len(t.user.encode()) + len(t.system.encode()) + 600
            if chunk and (len(chunk) >= self.batch.max_requests_per_job or size + est > self.batch.max_bytes_per_job):
                await flush()
            chunk.append((key, t))
            size += est
        await flush()
        return jobs

    async def _poll(self, engine: "Engine", jobs: list[dict[str, Any]]) -> dict[str, Any]:
        from medcalc_maintained.verifiers.engine import FatalCallError

        finished: dict[str, Any] = {}
        deadline = time.monotonic() + self.batch.max_wait_s
        while True:
            for rec in jobs:
                if rec["name"] in finished:
                    continue
                job = await self._retrying(engine, "poll", lambda r=rec: self.client.aio.batches.get(name=r["name"]))
                if _state(job) in DONE_STATES:
                    finished[rec["name"]] = job
            if len(finished) == len(jobs):
                return finished
            if time.monotonic() > deadline:
                names = [r["name"] for r in jobs if r["name"] not in finished]
                raise FatalCallError(f"batch job(s) {', '.join(names)} still running after "
                                     f"{self.batch.max_wait_s:.0f} s; rerun to resume polling them")
            await asyncio.sleep(self.batch.poll_interval_s)

    async def run_batch(self, pending: dict[str, list[Task]], engine: "Engine") -> dict[str, tuple]:
        todo = dict(pending)
        results: dict[str, tuple] = {}
        malformed: dict[str, int] = {}
        last_error: dict[str, str] = {}
        cache = _jobs_cache(engine)
        resumed = [j for j in cache.load_jobs()
                   if j.get("backend") == self.name and j.get("model") == self.model and set(j.get("keys", ())) & set(todo)]
        for round_no in range(1, self.batch.rounds + 1):
            if not todo:
                break
            jobs = resumed if round_no == 1 else []
            covered = {k for j in jobs for k in j["keys"]}
            jobs = jobs + await self._submit(engine, {k: g for k, g in todo.items() if k not in covered}, round_no)
            finished = await self._poll(engine, jobs)
            for rec in jobs:
                job = finished[rec["name"]]
                state = _state(job)
                responses = list(getattr(getattr(job, "dest", None), "inlined_responses", None) or [])
                seen = set()
                for i, item in enumerate(responses):
                    key = (item.metadata or {}).get("key") if item.metadata else None
                    if key is None:
                        if i >= len(rec["keys"]):
                            continue  # no key: a reply this run cannot place
                        key = rec["keys"][i]
                    if key in todo:
                        task = todo[key][0]
                    elif key in rec.get("items", {}) and key not in results and not cache.get(self.name, self.model, key):
                        # a result of an earlier, killed run that this run does not need: keep it anyway
                        sha, run, uid, split, kind, otype = rec["items"][key]
                        task = Task(uid=uid, split=split, run=run, kind=kind, output_type=otype, system="", user="",
                                    prompt_sha256=sha)
                        if item.response is not None and item.error is None:
                            try:
                                comp = completion_from_response(item.response)
                                if not engine.validator(task, comp.text):
                                    engine.record(engine.entry_from(key, task, comp, attempts=1, batch=True))
                            except (MalformedReply, ValueError):
                                pass
                        continue
                    else:
                        continue
                    seen.add(key)
                    if item.error is not None or item.response is None:
                        err = item.error
                        last_error[key] = redact(f"batch item error {getattr(err, 'code', '')}: {getattr(err, 'message', '')}")
                        continue
                    raw = ""
                    try:
                        comp = completion_from_response(item.response)
                        raw = comp.text
                        problem = engine.validator(task, comp.text)
                        if problem:
                            raise MalformedReply(problem)
                    except (MalformedReply, ValueError) as exc:
                        malformed[key] = malformed.get(key, 0) + 1
                        engine.stats.malformed += 1
                        if malformed[key] > engine.settings.malformed_retries:
                            entry = engine.entry_from(key, task, Completion(text=raw), attempts=malformed[key],
                                                      ok=False, problem=f"malformed reply: {exc}", batch=True)
                            engine.record(entry)
                            results[key] = (entry, "batch", "")
                            engine.on_progress(engine.stats, len(todo.pop(key)))
                        continue
                    entry = engine.entry_from(key, task, comp, attempts=malformed.get(key, 0) + 1, batch=True)
                    engine.record(entry)
                    results[key] = (entry, "batch", "")
                    engine.on_progress(engine.stats, len(todo.pop(key)))
                for k in rec["keys"]:
                    if k in todo and k not in seen:
                        last_error[k] = f"batch job {rec['name']} ended {state} without a result"
                cache.drop_job(rec["name"])
        for key in todo:
            engine.stats.failed += 1
            results[key] = (None, "batch", last_error.get(key, "no result after the batch rounds"))
        return results


def _jobs_cache(engine: "Engine") -> Cache:
    """The engine's on-disk cache, where batch jobs are recorded so that a rerun resumes them."""
    from medcalc_maintained.verifiers.engine import FatalCallError

    if engine.cache is None:
        raise FatalCallError("batch mode needs the on-disk cache (a rerun resumes its jobs from there)")
    return engine.cache


def completion_from_response(resp: Any) -> Completion:
    """The visible text (thought parts and code-execution parts left out) and the usage of a reply."""
    cands = getattr(resp, "candidates", None) or []
    if not cands:
        feedback = getattr(resp, "prompt_feedback", None)
        raise MalformedReply(redact(f"no candidate in the reply (prompt feedback: {feedback})"))
    cand = cands[0]
    parts = (cand.content.parts if cand.content is not None else None) or []
    text = "\n".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False))
    finish = str(getattr(cand.finish_reason, "value", cand.finish_reason) or "")
    if not text.strip():
        raise MalformedReply(f"empty reply (finish reason {finish or 'unknown'})")
    u = resp.usage_metadata
    inp = out = thoughts = 0
    if u is not None:
        inp = (u.prompt_token_count or 0) + (u.tool_use_prompt_token_count or 0)
        thoughts = u.thoughts_token_count or 0
        out = (u.candidates_token_count or 0) + thoughts
    gm = getattr(cand, "grounding_metadata", None)
    queries = len(gm.web_search_queries or []) if gm is not None and gm.web_search_queries else 0
    return Completion(text=text, input_tokens=inp, output_tokens=out, thoughts_tokens=thoughts,
                      search_queries=queries, model_version=str(getattr(resp, "model_version", "") or ""),
                      finish_reason=finish)
