"""Settings of the ``audit`` and ``relabel`` stages, built from their ``params.yaml`` sections.

Every value comes from :meth:`medcalc_maintained.project.Project.section`: the built-in
``defaults.yaml`` with the project's ``params.yaml`` laid over it, keys and types already checked
there. This module adds the checks that need meaning (known backends and tools, a threshold within
the runs, at least one call in flight, ...); each error names ``params.yaml`` and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.verifiers.voting import required_votes

if TYPE_CHECKING:  # pragma: no cover
    from medcalc_maintained.project import Project

STAGES = ("audit", "relabel")
BACKENDS = ("rules", "replay", "gemini")
TOOLS = ("google_search", "code_execution")


@dataclass
class GeminiSettings:
    model: str
    thinking_budget: int | None  # tokens; -1 lets the model decide; None leaves the model's default
    temperature: float | None
    tools: list[str]
    seed: int | None  # run i sends seed + i: distinct, repeatable samples
    timeout_s: float
    base_url: str | None  # else $GOOGLE_GEMINI_BASE_URL, else Google's endpoint

    def generation(self) -> dict[str, Any]:
        """The settings that change a reply (model, sampling, tools): recorded with the outputs."""
        return {"model": self.model, "thinking_budget": self.thinking_budget, "temperature": self.temperature,
                "tools": list(self.tools), "seed": self.seed}


@dataclass
class EngineSettings:
    concurrency: int
    rate_limit_rpm: float | None  # call starts per minute; None/0 = unlimited
    retries: int  # transient failures (429, 5xx, timeouts, dropped connections) per call
    malformed_retries: int  # a reply still malformed after these is one unparseable vote
    backoff_initial_s: float
    backoff_max_s: float


@dataclass
class BatchSettings:
    poll_interval_s: float
    max_wait_s: float
    max_requests_per_job: int
    max_bytes_per_job: int
    rounds: int  # submissions for calls whose batch result failed or was malformed


@dataclass
class Prices:
    """USD per 1M tokens (and per 1,000 grounded prompts); they only feed cost estimates."""

    input_per_1m: float
    output_per_1m: float
    batch_discount: float
    grounding_per_1k: float


@dataclass
class Estimate:
    """Assumptions of ``--dry-run`` (no call is made to count tokens)."""

    chars_per_token: float
    output_tokens: int
    tool_input_tokens: int


@dataclass
class StageSettings:
    stage: str
    backend: str
    out: str
    split: str
    runs: int
    threshold: int
    replay_file: str | None
    cache_dir: str
    gemini: GeminiSettings
    engine: EngineSettings
    batch: BatchSettings
    prices: Prices
    estimate: Estimate

    def required_votes(self, runs: int) -> int:
        """Votes needed out of ``runs``: ``threshold`` of ``self.runs`` scaled to ``runs``."""
        return required_votes(runs, self.threshold, self.runs)


_PARTS = {"gemini": GeminiSettings, "engine": EngineSettings, "batch": BatchSettings, "prices": Prices,
          "estimate": Estimate}


def from_section(stage: str, section: dict[str, Any], params_file: Path | str) -> StageSettings:
    """Settings of ``stage`` from its merged, type-checked params section; semantic checks here."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    data = dict(section)
    parts = {name: cls(**dict(data.pop(name))) for name, cls in _PARTS.items()}
    s = StageSettings(stage=stage, **data, **parts)
    _check(s, Path(params_file))
    return s


def load(project: "Project", stage: str) -> StageSettings:
    """Settings of ``stage`` (``audit`` or ``relabel``) of ``project``."""
    return from_section(stage, project.section(stage), project.params_file)


def _check(s: StageSettings, p: Path) -> None:
    stage = s.stage
    if s.backend not in BACKENDS:
        raise DataError(p, f"unknown backend {s.backend!r} (expected one of {', '.join(BACKENDS)})", field=f"{stage}.backend")
    if not isinstance(s.gemini.tools, list) or not all(isinstance(t, str) for t in s.gemini.tools):
        raise DataError(p, f"expected a list of names, got {s.gemini.tools!r}", field=f"{stage}.gemini.tools")
    bad = [t for t in s.gemini.tools if t not in TOOLS]
    if bad:
        raise DataError(p, f"unknown tool(s) {bad} (expected {', '.join(TOOLS)})", field=f"{stage}.gemini.tools")
    if s.runs < 1:
        raise DataError(p, f"must be at least 1, got {s.runs}", field=f"{stage}.runs")
    if not 1 <= s.threshold <= s.runs:
        raise DataError(p, f"threshold must be between 1 and runs ({s.runs}), got {s.threshold}", field=f"{stage}.threshold")
    if s.engine.concurrency < 1:
        raise DataError(p, "must be at least 1", field=f"{stage}.engine.concurrency")
    if s.engine.retries < 0 or s.engine.malformed_retries < 0:
        raise DataError(p, "retries cannot be negative", field=f"{stage}.engine")
    if not 0 <= s.prices.batch_discount < 1:
        raise DataError(p, "must be in [0, 1)", field=f"{stage}.prices.batch_discount")
    if s.estimate.chars_per_token <= 0:
        raise DataError(p, "must be positive", field=f"{stage}.estimate.chars_per_token")
