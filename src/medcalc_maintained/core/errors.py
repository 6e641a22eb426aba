"""The project's errors and how they name a place: a problem with an input names its file and, where
known, the row and field (:class:`DataError`); every problem of one input together
(:class:`ProblemsError`); an output directory a command may not write (:class:`OutRefused`); and a
hostile value, never echoed whole (:func:`shown`)."""

from __future__ import annotations

import os
from typing import Any


def located(path: str, *places: tuple[str, object]) -> str:
    """``path, <label> <value>, ...`` for each place that is known (not ``None`` or ``""``): where a
    problem is, as every problem of this package names it."""
    return ", ".join([path, *(f"{label} {value}" for label, value in places if value is not None and value != "")])


class DataError(Exception):
    """A problem with an input file: names the file and, where known, the row, field and rule."""

    def __init__(self, path: os.PathLike | str, problem: str, *, row: object = None, field: str | None = None):
        self.path, self.problem, self.row, self.field = str(path), problem, row, field
        super().__init__(f"{located(self.path, ('row', row), ('field', repr(field) if field else None))}: {problem}")

    def __reduce__(self):
        """Pickled whole (message, place and every attribute), so an error raised in a worker process
        (:mod:`medcalc_maintained.core.parallel`) reaches the parent as it was: the default rebuilds an
        exception from its message alone, which these constructors do not take."""
        return _restored, (type(self), self.args, dict(self.__dict__))


def _restored(cls: type[DataError], args: tuple, state: dict[str, Any]) -> DataError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class ProblemsError(DataError):
    """Every problem found in one input (``problems``, each printable with its place): the error
    names the first one's file and field, and prints one line per problem."""

    def __init__(self, problems: list[Any], problem: str | None = None):
        self.problems = problems
        first = problems[0]
        super().__init__(first.path, problem or first.problem, field=getattr(first, "field", None))
        self.args = ("\n".join(str(p) for p in problems),)

    def __str__(self) -> str:  # read at print time: a caller may rename the problems' paths first
        return "\n".join(str(p) for p in self.problems)


class OutRefused(DataError):
    """An output directory a command may not write: neither new, empty nor the command's own earlier
    output, or changed while the command wrote its new set. Exit 2; nothing was written."""


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters (a hostile value is never echoed whole)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"
