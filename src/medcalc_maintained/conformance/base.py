"""What an implementation under conformance is: a named call that answers a case or raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Implementation:
    """A named implementation: ``call(calculator_id, inputs)`` returns an answer or raises."""

    name: str
    describe: str
    call: Callable[[int, dict[str, Any]], Any]
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        for close in self.closers:
            close()


class NoResult(Exception):
    """The implementation gave no answer, as an answer: it refused the inputs (it says why). A case whose
    definition gives no result passes on it; any other exception is a failure even there."""


class NotRecorded(ValueError):
    """A recorded implementation holds no answer for a query: the recording is older than the vectors
    (record again); never counted as the implementation's answer."""
