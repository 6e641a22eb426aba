"""Core types of the calculator registry: :class:`Result`, :class:`Inputs` and :func:`register`.

A calculator is a plain function ``fn(x: Inputs) -> float | int | str | datetime.date | tuple``
registered under its MedCalc-Bench ``Calculator ID``. It reads its features from ``x``; every
accessor records a missing, invalid (unknown unit, wrong type) or implausible (outside the
physiological range of ``plausibility.yaml``) input instead of raising, and returns ``None`` for a
missing or invalid value. :func:`compute` wraps the call: when any input was missing or invalid the
result has ``value=None``; implausible inputs are reported but the value is still computed, so the
audit can tell "the label follows from the features" apart from "the features are wrong".
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Callable, TypeVar, overload

from medcalc_maintained.core import units as U
from medcalc_maintained.core.yaml_text import safe_load

OUTPUT_TYPES = ("decimal", "integer", "date")

A = TypeVar("A")
B = TypeVar("B")
C = TypeVar("C")
D = TypeVar("D")
E = TypeVar("E")
F = TypeVar("F")
T = TypeVar("T")


@dataclass(frozen=True)
class Result:
    """Outcome of one calculation.

    ``value`` is the answer as text in the calculator's output type (decimals rounded to 3 places,
    integers without a decimal point, dates ``MM/DD/YYYY``, gestational age ``('W weeks', 'D days')``)
    or ``None`` when it cannot be computed; ``missing``, ``invalid`` and ``implausible`` name inputs.
    """

    value: str | None
    missing: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    implausible: tuple[str, ...] = ()
    number: float | None = None

    @property
    def computable(self) -> bool:
        return self.value is not None


class CannotCompute(Exception):
    """Raised inside a calculator to stop when an input it needs is absent (already recorded)."""


@dataclass
class Calculator:
    calculator_id: int
    name: str
    output_type: str
    fn: Callable[["Inputs"], Any]
    source: str = ""


REGISTRY: dict[int, Calculator] = {}


def register(calculator_id: int, name: str, output_type: str) -> Callable:
    """Decorator: add ``fn`` to :data:`REGISTRY`; its docstring must cite the formula's source."""
    if output_type not in OUTPUT_TYPES:
        raise ValueError(f"output type {output_type!r} not in {OUTPUT_TYPES}")

    def deco(fn: Callable) -> Callable:
        if calculator_id in REGISTRY:
            raise ValueError(f"calculator {calculator_id} registered twice")
        if not (fn.__doc__ or "").strip():
            raise ValueError(f"calculator {calculator_id} ({name}) has no docstring naming its source")
        REGISTRY[calculator_id] = Calculator(calculator_id, name, output_type, fn, (fn.__doc__ or "").strip())
        return fn

    return deco


@lru_cache(maxsize=1)
def plausibility_ranges() -> dict[str, dict[str, Any]]:
    """Physiological limits per quantity, from ``plausibility.yaml`` (values in canonical units)."""
    text = resources.files("medcalc_maintained.calculators").joinpath("plausibility.yaml").read_text("utf-8")
    data = safe_load(text) or {}
    return data.get("ranges", {})


def _as_number(v: Any) -> float | None:
    """``v`` as a finite number, else ``None`` (a boolean, NaN, infinity, or text that is neither)."""
    if isinstance(v, bool):
        return None
    if not isinstance(v, (int, float, str)):
        return None
    try:
        x = float(v.strip() if isinstance(v, str) else v)
    except (ValueError, OverflowError):  # OverflowError: an int beyond float's range
        return None
    return x if math.isfinite(x) else None


class Inputs:
    """Read access to a ``Relevant Entities`` dict that records problems instead of raising."""

    def __init__(self, entities: dict[str, Any]):
        self.entities = dict(entities or {})
        self.missing: list[str] = []
        self.invalid: list[str] = []
        self.implausible: list[str] = []

    # -- bookkeeping -------------------------------------------------------------------------
    def _note(self, bucket: list[str], key: str) -> None:
        if key not in bucket:
            bucket.append(key)

    def has(self, key: str) -> bool:
        return key in self.entities and self.entities[key] is not None

    def key(self, *names: str) -> str:
        """The entity key present for any of the spellings ``names`` (exact first, then
        case-insensitive); the first spelling when none is present."""
        for n in names:
            if self.has(n):
                return n
        lowered = {str(k).strip().lower(): k for k in self.entities}
        for n in names:
            k = lowered.get(n.strip().lower())
            if k is not None and self.has(k):
                return k
        return names[0]

    def raw(self, key: str, default: Any = None) -> Any:
        return self.entities.get(key, default)

    def _check_range(self, key: str, kind: str, value: float, range_key: str | None) -> None:
        rng = plausibility_ranges().get(range_key or kind) or plausibility_ranges().get(key)
        if not rng:
            return
        lo, hi = rng.get("min"), rng.get("max")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            self._note(self.implausible, key)

    # -- accessors ---------------------------------------------------------------------------
    def quantity(self, key: str, kind: str, *, required: bool = True, range_key: str | None = None) -> float | None:
        """A ``[value, unit]`` entity converted to the canonical unit of ``kind`` (see ``units``).

        A bare number is accepted only for kinds without units that matter (``percent``, ``rate``).
        """
        if not self.has(key):
            if required:
                self._note(self.missing, key)
            return None
        v = self.entities[key]
        if isinstance(v, (list, tuple)) and len(v) == 2:
            num = _as_number(v[0])
            if num is None:
                self._note(self.invalid, key)
                return None
            try:
                out = U.to_canonical(kind, num, str(v[1]))
            except U.UnknownUnit:
                self._note(self.invalid, key)
                return None
        else:
            num = _as_number(v)
            if num is None or kind not in ("percent", "rate", "age"):
                self._note(self.invalid, key)
                return None
            out = num
        self._check_range(key, kind, out, range_key)
        return out

    def number(self, key: str, *, required: bool = True, range_key: str | None = None) -> float | None:
        """A unitless number (INR, pH, GCS, counts); ``[value, unit]`` lists give their value."""
        if not self.has(key):
            if required:
                self._note(self.missing, key)
            return None
        v = self.entities[key]
        if isinstance(v, (list, tuple)) and v:
            v = v[0]
        num = _as_number(v)
        if num is None:
            self._note(self.invalid, key)
            return None
        if range_key:
            self._check_range(key, range_key, num, range_key)
        return num

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean criterion; absent means ``default`` (MDCalc's unchecked box)."""
        if not self.has(key):
            return default
        v = self.entities[key]
        if isinstance(v, bool):
            return v
        if isinstance(v, (int, float)):
            return bool(v)
        if isinstance(v, str) and v.strip().lower() in ("true", "yes", "present", "1"):
            return True
        if isinstance(v, str) and v.strip().lower() in ("false", "no", "absent", "0", "none"):
            return False
        self._note(self.invalid, key)
        return default

    def choice(self, key: str, options: dict[str, Any], *, required: bool = True, default: Any = None) -> Any:
        """A categorical entity mapped through ``options`` (keys compared case-insensitively)."""
        if not self.has(key):
            if required:
                self._note(self.missing, key)
            return default
        v = self.entities[key]
        lookup = {str(k).strip().lower(): val for k, val in options.items()}
        k = str(v).strip().lower()
        if k not in lookup:
            self._note(self.invalid, key)
            return default
        return lookup[k]

    def text(self, key: str, *, required: bool = True) -> str | None:
        if not self.has(key):
            if required:
                self._note(self.missing, key)
            return None
        return str(self.entities[key])

    def date(self, key: str, *, required: bool = True) -> dt.date | None:
        """An ``MM/DD/YYYY`` date entity."""
        if not self.has(key):
            if required:
                self._note(self.missing, key)
            return None
        v = self.entities[key]
        if isinstance(v, dt.date):
            return v
        try:
            return dt.datetime.strptime(str(v).strip(), "%m/%d/%Y").date()
        except ValueError:
            self._note(self.invalid, key)
            return None

    @overload
    def require(self, a: A | None, /) -> tuple[A]: ...
    @overload
    def require(self, a: A | None, b: B | None, /) -> tuple[A, B]: ...
    @overload
    def require(self, a: A | None, b: B | None, c: C | None, /) -> tuple[A, B, C]: ...
    @overload
    def require(self, a: A | None, b: B | None, c: C | None, d: D | None, /) -> tuple[A, B, C, D]: ...
    @overload
    def require(self, a: A | None, b: B | None, c: C | None, d: D | None, e: E | None, /) -> tuple[A, B, C, D, E]: ...
    @overload
    def require(
        self, a: A | None, b: B | None, c: C | None, d: D | None, e: E | None, f: F | None, /
    ) -> tuple[A, B, C, D, E, F]: ...
    @overload
    def require(self, *values: T | None) -> tuple[T, ...]: ...
    def require(self, *values: Any) -> tuple[Any, ...]:
        """Stop the calculation when any value is ``None`` (the reason is already recorded); else
        return ``values``, for the caller to rebind its names to, so a type checker knows that none
        of them is ``None``: ``a, b = x.require(a, b)[:]`` (the ``[:]`` keeps mypy from taking
        the names' own ``float | None`` types as what the call returns)."""
        if any(v is None for v in values):
            raise CannotCompute()
        return values


def format_value(value: Any, output_type: str) -> tuple[str, float | None]:
    """Text of a computed value in the output type, and its number (``None`` for dates)."""
    if isinstance(value, tuple) and len(value) == 2 and all(isinstance(p, int) for p in value):
        weeks, days = value
        return f"('{weeks} weeks', '{days} days')", float(weeks * 7 + days)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.strftime("%m/%d/%Y"), None
    if output_type == "integer":
        n = int(round(float(value)))
        return str(n), float(n)
    x = round(float(value), 3) + 0.0  # a value that rounds to zero from below is 0, never "-0"
    text = repr(x)
    if text.endswith(".0"):
        text = text[:-2]
    return text, x


def run(fn: Callable[["Inputs"], Any], output_type: str, entities: dict[str, Any]) -> Result:
    """Call one calculator function (a registered one or a published alternative) on ``entities``."""
    x = Inputs(entities)
    try:
        value = fn(x)
    except CannotCompute:
        value = None
    except (ZeroDivisionError, ValueError, OverflowError):
        x._note(x.invalid, "<arithmetic>")
        value = None
    if x.missing or x.invalid or value is None:
        if not (x.missing or x.invalid):
            x._note(x.missing, "<unspecified>")
        return Result(None, tuple(x.missing), tuple(x.invalid), tuple(x.implausible))
    text, number = format_value(value, output_type)
    return Result(text, (), (), tuple(x.implausible), number)
