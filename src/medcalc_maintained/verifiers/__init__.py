"""Verifiers of the ``audit`` and ``relabel`` stages: the backend interface (:mod:`.base`), the
backends ``rules``, ``replay`` and ``gemini``, the async engine with cache, retries, rate limit and
progress (:mod:`.engine`, :mod:`.cache`), the voting rules (:mod:`.voting`), the versioned prompts
(:mod:`.prompts`) and the stage settings read from ``params.yaml`` (:mod:`.settings`)."""

from medcalc_maintained.verifiers.base import Backend, Completion, Task
from medcalc_maintained.verifiers.settings import BACKENDS, StageSettings

__all__ = ["BACKENDS", "Backend", "Completion", "StageSettings", "Task"]
