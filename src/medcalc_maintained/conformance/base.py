"""What an implementation under conformance is: a named call that answers a case or raises."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

# a parenthesised absolute path, as Python appends to an ImportError ("(/…/site-packages/…)")
_ABSOLUTE_PATH = re.compile(r" \((?:/|[A-Za-z]:\\)[^()]*\)")


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


def failure_text(exc: BaseException) -> str:
    """How an implementation's failure is recorded: ``no result: …`` for a :class:`NoResult`, else
    ``raised TYPE: …``; without the absolute file paths messages carry, so that what is recorded (vector
    results, errata, recordings) is the same on every machine."""
    message = _ABSOLUTE_PATH.sub("", str(exc))
    return f"no result: {message}" if isinstance(exc, NoResult) else f"raised {type(exc).__name__}: {message}"
