"""Settings of the ``audit`` and ``relabel`` stages, read from their ``params.yaml`` sections.

The defaults below are the values ``params.yaml`` ships with; a section may override any of them.
Unknown keys and values of the wrong type are reported with the file and the field (a typo in a
price or a thinking budget must not pass silently).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from medcalc_maintained.core.io import DataError

BACKENDS = ("rules", "replay", "gemini")
TOOLS = ("google_search", "code_execution")


@dataclass
class GeminiSettings:
    model: str = "gemini-2.5-pro"
    thinking_budget: int | None = 8192  # tokens; -1 lets the model decide; None leaves the default
    temperature: float | None = 1.0
    tools: list[str] = field(default_factory=lambda: ["google_search"])
    seed: int | None = 20250801  # run i sends seed + i: distinct, repeatable samples
    timeout_s: float = 600.0
    base_url: str | None = None  # else $GOOGLE_GEMINI_BASE_URL, else Google's endpoint


@dataclass
class EngineSettings:
    concurrency: int = 16
    rate_limit_rpm: float | None = 150.0  # requests started per minute; None/0 = unlimited
    retries: int = 6  # transient failures (429, 5xx, timeouts, dropped connections) per call
    malformed_retries: int = 2  # a reply still malformed after these is one unparseable vote
    backoff_initial_s: float = 2.0
    backoff_max_s: float = 120.0


@dataclass
class BatchSettings:
    poll_interval_s: float = 30.0
    max_wait_s: float = 48 * 3600.0
    max_requests_per_job: int = 1000
    max_bytes_per_job: int = 15_000_000  # inline requests; the API limit is 20 MB per job
    rounds: int = 3  # submissions for calls whose batch result failed or was malformed


@dataclass
class Prices:
    """USD. Gemini API paid tier, prompts up to 200k tokens."""

    input_per_1m: float = 1.25
    output_per_1m: float = 10.0  # thinking tokens are billed as output
    batch_discount: float = 0.5  # the Batch API bills tokens at half price
    grounding_per_1k: float = 35.0  # per 1,000 prompts grounded with Google Search


@dataclass
class Estimate:
    """Assumptions of ``--dry-run`` (no call is made to count tokens)."""

    chars_per_token: float = 4.0
    output_tokens: int = 3000  # thinking + visible reply, per call
    tool_input_tokens: int = 2000  # search results fed back to the model, per call


@dataclass
class StageSettings:
    stage: str
    backend: str
    out: str
    split: str = "test"
    runs: int = 5
    threshold: int = 4
    replay_file: str | None = None
    cache_dir: str = ".cache/llm"
    gemini: GeminiSettings = field(default_factory=GeminiSettings)
    engine: EngineSettings = field(default_factory=EngineSettings)
    batch: BatchSettings = field(default_factory=BatchSettings)
    prices: Prices = field(default_factory=Prices)
    estimate: Estimate = field(default_factory=Estimate)

    def required_votes(self, runs: int) -> int:
        """Votes needed out of ``runs``: the supermajority ``threshold`` of ``self.runs`` scaled to
        ``runs`` and rounded up (4 of 5; 1 of 1; 3 of 3; 8 of 10)."""
        if runs <= 0:
            return 1
        return max(1, math.ceil(runs * self.threshold / self.runs - 1e-9))


_DEFAULTS = {
    "audit": dict(backend="rules", out="data/audit_llm"),
    "relabel": dict(backend="replay", out="data/relabel"),
}
_TOOL_DEFAULTS = {"audit": ["google_search"], "relabel": ["google_search", "code_execution"]}


def _check(obj: Any, data: dict[str, Any], where: str, path: Path) -> Any:
    if not isinstance(data, dict):
        raise DataError(path, f"must be a mapping, got {type(data).__name__}", field=where)
    names = {f.name: f for f in fields(obj)}
    for key, value in data.items():
        if key not in names or key == "stage":
            raise DataError(path, f"unknown setting (known: {', '.join(n for n in names if n != 'stage')})",
                            field=f"{where}.{key}")
        current = getattr(obj, key)
        if is_dataclass(current):
            _check(current, value or {}, f"{where}.{key}", path)
            continue
        if value is not None and current is not None and not isinstance(current, list):
            want = type(current)
            if want is float and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            if not isinstance(value, want) or isinstance(value, bool) != isinstance(current, bool):
                raise DataError(path, f"expected {want.__name__}, got {value!r}", field=f"{where}.{key}")
        if isinstance(current, list) and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise DataError(path, f"expected a list of names, got {value!r}", field=f"{where}.{key}")
        setattr(obj, key, value)
    return obj


def load(stage: str, section: dict[str, Any] | None, params_path: Path | str = "params.yaml") -> StageSettings:
    """Settings of ``stage`` (``audit`` or ``relabel``) from its params section."""
    if stage not in _DEFAULTS:
        raise ValueError(f"unknown stage {stage!r}")
    s = StageSettings(stage=stage, **_DEFAULTS[stage])
    s.gemini.tools = list(_TOOL_DEFAULTS[stage])
    _check(s, dict(section or {}), stage, Path(params_path))
    p = Path(params_path)
    if s.backend not in BACKENDS:
        raise DataError(p, f"unknown backend {s.backend!r} (expected one of {', '.join(BACKENDS)})", field=f"{stage}.backend")
    bad = [t for t in s.gemini.tools if t not in TOOLS]
    if bad:
        raise DataError(p, f"unknown tool(s) {bad} (expected {', '.join(TOOLS)})", field=f"{stage}.gemini.tools")
    if not 1 <= s.threshold <= s.runs:
        raise DataError(p, f"threshold must be between 1 and runs ({s.runs}), got {s.threshold}", field=f"{stage}.threshold")
    if s.engine.concurrency < 1:
        raise DataError(p, "must be at least 1", field=f"{stage}.engine.concurrency")
    if s.engine.retries < 0 or s.engine.malformed_retries < 0:
        raise DataError(p, "retries cannot be negative", field=f"{stage}.engine")
    if not 0 <= s.prices.batch_discount < 1:
        raise DataError(p, "must be in [0, 1)", field=f"{stage}.prices.batch_discount")
    return s
