"""Running the vectors against an implementation and judging each answer.

An answer agrees with a case when: decimal, ``|got - expected| <= tolerance`` (the case's own, else
0.1% of ``|expected|`` and at least 0.001: an implementation that rounds to 3 decimals, or converts
units with a factor within 0.1% of the case's, passes; one off by more than 0.1% does not); integer, the same integer (``3`` and ``3.0`` agree,
``3.4`` does not); date, the same day (``MM/DD/YYYY`` text or a date); gestational age, the same
weeks and days. A case whose expected is ``null`` passes only when the implementation refuses
(:class:`~.base.NoResult`, an ``error`` answer), returns nothing or ``N/A``; any other exception fails
every case, that one too. Anything else, and no result where one is expected, is a failure with the
reason kept. A recorded implementation without an answer (:class:`~.base.NotRecorded`) stops the run.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import numbers
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from medcalc_maintained.conformance.base import Implementation, NoResult, NotRecorded, failure_text
from medcalc_maintained.conformance.vectors import Case, VectorFile

_WEEKS_DAYS = re.compile(r"^\D*?(\d+)\s*weeks?\D+?(\d+)\s*days?\D*$", re.I)


def _number(got: Any) -> float | None:
    if isinstance(got, bool):
        return None
    if isinstance(got, numbers.Real):  # int, float and NumPy's scalars
        return float(got)
    if isinstance(got, str):
        try:
            return float(got.strip())
        except ValueError:
            return None
    return None


def _weeks_days(got: Any) -> tuple[int, int] | None:
    if isinstance(got, (list, tuple)) and len(got) == 2:
        parts = [_number(p) if not isinstance(p, str) else _number(re.sub(r"[^\d.]", "", p) or "x") for p in got]
        if all(p is not None and float(p).is_integer() for p in parts):
            return int(parts[0]), int(parts[1])  # type: ignore[arg-type]
        return None
    if isinstance(got, str):
        m = _WEEKS_DAYS.match(got.strip())
        return (int(m.group(1)), int(m.group(2))) if m else None
    return None


def _date(got: Any) -> dt.date | None:
    if isinstance(got, dt.datetime):
        return got.date()
    if isinstance(got, dt.date):
        return got
    if isinstance(got, str):
        try:
            return dt.datetime.strptime(got.strip(), "%m/%d/%Y").date()
        except ValueError:
            return None
    return None


def tolerance(case: Case) -> float:
    """The absolute tolerance of a decimal case."""
    if case.tolerance is not None:
        return case.tolerance
    return max(0.001, 0.001 * abs(float(case.expected)))


def agrees(case: Case, kind: str, got: Any) -> tuple[bool, str]:
    """Whether ``got`` is the case's expected answer for an output of ``kind``, and if not, why."""
    if case.expected is None:
        none = got is None or (isinstance(got, str) and got.strip().upper() in ("N/A", "NA", ""))
        return none, "" if none else "a result where the definition gives none"
    if kind == "weeks_days":
        wd = _weeks_days(got)
        if wd is None:
            return False, f"{got!r} is not a number of weeks and days"
        return wd == tuple(case.expected), "" if wd == tuple(case.expected) else "different weeks/days"
    if kind == "date":
        day = _date(got)
        if day is None:
            return False, f"{got!r} is not a date MM/DD/YYYY"
        want = dt.datetime.strptime(case.expected, "%m/%d/%Y").date()
        return day == want, "" if day == want else f"{(day - want).days:+d} days"
    x = _number(got)
    if x is None or not math.isfinite(x):
        return False, f"{got!r} is not a number"
    if kind == "integer":
        return x == case.expected, "" if x == case.expected else f"off by {x - case.expected:+g}"
    off = x - float(case.expected)
    ok = abs(off) <= tolerance(case)
    return ok, "" if ok else f"off by {off:+.4g} (tolerance {tolerance(case):g})"


@dataclass
class CaseResult:
    case: Case
    got: Any
    ok: bool
    reason: str


@dataclass
class CalculatorResult:
    """One calculator's run: how many cases, how many passed, and every result in file order."""

    vectors: VectorFile
    results: list[CaseResult] = field(default_factory=list)

    @property
    def calculator_id(self) -> int:
        return self.vectors.calculator_id

    @property
    def cases(self) -> int:
        return len(self.results)

    @property
    def passed(self) -> int:
        return sum(r.ok for r in self.results)

    @property
    def first_failure(self) -> CaseResult | None:
        """The first wrong answer in file order, else the first case with no result."""
        failed = [r for r in self.results if not r.ok]
        return next((r for r in failed if r.got is not None), failed[0] if failed else None)


@dataclass
class Report:
    """The run of one implementation over the vectors of some calculators."""

    implementation: str
    describe: str
    digest: str
    calculators: list[CalculatorResult]

    @property
    def ok(self) -> bool:
        return all(c.passed == c.cases for c in self.calculators)

    def totals(self) -> tuple[int, int, int, int]:
        """(calculators passing, calculators, cases passing, cases)."""
        return (sum(c.passed == c.cases for c in self.calculators), len(self.calculators),
                sum(c.passed for c in self.calculators), sum(c.cases for c in self.calculators))

    def as_dict(self) -> dict[str, Any]:
        return {
            "implementation": self.implementation, "describe": self.describe, "vectors_sha256": self.digest,
            "calculators": [{
                "calculator_id": c.calculator_id, "name": c.vectors.name, "follows": c.vectors.follows,
                "cases": c.cases, "passed": c.passed,
                "failures": [{"case": r.case.id, "why": r.case.why, "inputs": r.case.inputs,
                              "expected": r.case.expected, "got": _plain(r.got), "reason": r.reason}
                             for r in c.results if not r.ok],
            } for c in self.calculators],
        }


def _plain(value: Any) -> Any:
    if isinstance(value, (dt.date, dt.datetime)):
        return value.strftime("%m/%d/%Y")
    if isinstance(value, tuple):
        return list(value)
    if value is None or isinstance(value, (bool, int, float, str, list, dict)):
        return value
    return repr(value)


def run_vectors(files: list[VectorFile], impl: Implementation, *, digest: str = "",
                progress: Callable[[int], None] | None = None) -> Report:
    """Every case of ``files`` through ``impl``; a call that raises is that case's failure."""
    out = []
    for vf in files:
        cr = CalculatorResult(vf)
        for case in vf.cases:
            try:
                got = impl.call(vf.calculator_id, case.inputs)
            except NotRecorded:
                raise  # the recording is stale: not the implementation's answer
            except NoResult as exc:
                cr.results.append(CaseResult(case, None, case.expected is None, failure_text(exc)))
                continue
            except Exception as exc:  # an implementation under test may fail in any way: a failure, even where
                cr.results.append(CaseResult(case, None, False, failure_text(exc)))  # the definition gives none
                continue
            if got is None:
                cr.results.append(CaseResult(case, None, case.expected is None, "no result: returned nothing"))
                continue
            ok, reason = agrees(case, vf.kind, got)
            cr.results.append(CaseResult(case, got, ok, reason))
        out.append(cr)
        if progress:
            progress(len(vf.cases))
    return Report(impl.name, impl.describe, digest, out)


def write_report(report: Report, path: Path) -> None:
    """The report as JSON at ``path`` (every failing case with inputs, expected and got), written whole."""
    from medcalc_maintained.core.atomic import write_text_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, json.dumps(report.as_dict(), indent=1, ensure_ascii=False) + "\n")
