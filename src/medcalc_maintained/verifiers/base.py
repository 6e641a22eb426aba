"""The verifier interface shared by the ``audit`` and ``relabel`` stages.

A stage turns each instance into :class:`Task` objects (one per run) and hands them to a
:class:`Backend` through :mod:`medcalc_maintained.verifiers.engine`. A backend answers a task with
a :class:`Completion`: the reply text the stage parses (``<verdict>`` / ``<answer>`` tags), plus
what the call cost. Three backends exist:

``rules``   the deterministic recompute audit (offline default of ``audit``); one run per row;
``replay``  recorded replies from a file keyed by (uid, run), or the published consensus labels
            (offline default of ``relabel``);
``gemini``  Gemini through google-genai (model, thinking budget, temperature and tools from
            ``params.yaml``), online or through the Batch API.

The engine caches replies of *cacheable* backends (the paid ones) on disk, keyed by
``(backend, model, prompt sha256, run)`` and the generation settings, so nothing is paid twice.
"""

from __future__ import annotations

import hashlib
import json
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

RETRY, MALFORMED, FATAL = "retry", "malformed", "fatal"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Task:
    """One call: instance ``uid`` (of ``split``), run index ``run``, and the prompt it sends.

    ``system``/``user`` are the rendered prompt; ``prompt_sha256`` hashes exactly what the backend
    sees (for ``rules`` the canonical JSON of its inputs). ``payload`` carries structured inputs for
    backends that do not read text (the recompute audit).
    """

    uid: int
    split: str
    run: int
    kind: str  # "audit" | "relabel"
    output_type: str
    system: str
    user: str
    prompt_sha256: str
    payload: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass
class Completion:
    """A backend's reply to one task and what it cost."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0  # visible answer + thinking (both billed as output)
    thoughts_tokens: int = 0
    search_queries: int = 0
    model_version: str = ""
    finish_reason: str = ""
    latency_s: float = 0.0


class MalformedReply(Exception):
    """The reply arrived but cannot be read (not JSON, no candidate, no answer tag)."""


class Backend(ABC):
    """A verifier backend. Subclasses set ``name``/``model`` and implement :meth:`generate`."""

    name: str = "base"
    model: str = ""
    #: Replies are paid for: the engine caches them and applies retries and the rate limit.
    cacheable: bool = False
    #: One run per row is a complete record (same input, same output).
    deterministic: bool = False
    #: A single recorded vote is already the outcome of a vote (published consensus).
    consensus: bool = False
    #: Reads the rendered prompt (False: reads ``Task.payload``, structured inputs).
    uses_prompt: bool = True

    def settings_digest(self) -> str:
        """Hash of the generation settings that change replies (part of the cache key)."""
        return sha256_text("{}")

    def runs_for(self, uid: int, requested: int) -> int:
        """How many runs this backend makes for ``uid`` when ``requested`` are asked for."""
        return 1 if self.deterministic else requested

    def run_indices(self, uid: int, requested: int) -> list[int]:
        return list(range(self.runs_for(uid, requested)))

    def classify(self, exc: BaseException) -> str:
        """``retry`` (transient), ``malformed`` (bad reply) or ``fatal`` (stop the whole run)."""
        if isinstance(exc, MalformedReply):
            return MALFORMED
        if isinstance(exc, (TimeoutError, ConnectionError)):
            return RETRY
        return FATAL

    def retry_after(self, exc: BaseException) -> float | None:
        """Seconds the service asked us to wait before retrying, when it said so."""
        return None

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (clients) inside the running event loop."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release what :meth:`open` acquired."""

    @abstractmethod
    async def generate(self, task: Task) -> Completion:
        """Answer one task (raise on transport problems; the engine retries)."""


def last_tag(text: str, tag: str) -> str | None:
    """Content of the last ``<tag>…</tag>`` in ``text`` (case-insensitive), stripped; else None."""
    found = re.findall(rf"<{tag}>\s*(.*?)\s*</{tag}>", text or "", flags=re.IGNORECASE | re.DOTALL)
    return found[-1].strip() if found else None


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
