"""Answer semantics shared by every stage: parsing, MedCalc-Bench grading, discrepancy, formatting.

>>> from medcalc_maintained.core.answers import parse_answer, is_correct, rel_err
>>> parse_answer("25.238", "decimal").value
25.238
>>> parse_answer("('14 weeks', '1 days')", "integer").kind
'gestational_age'
>>> is_correct("24.1", "25.238", "23.9761", "26.4999", "decimal")
True
>>> rel_err("10", "8", "integer")
0.2

Kinds returned by :func:`parse_answer`:

``decimal`` / ``integer``  a number (``value`` is a float; ``integer`` when it is integer-like);
``date``                   a calendar date (``value`` is a :class:`datetime.date`);
``gestational_age``        ``(W weeks, D days)``, whatever the declared output type (2024-06 types these
                           rows ``date``, v1.0 ``integer``); ``value`` is the total in days, ``weeks``/``days`` kept;
``abstain``                the abstention label ``N/A`` (also ``NA``, ``unknown``, ``Not applicable``, empty;
                           the text ``None`` is not one: it is ``invalid``, as a program's null printed);
``invalid``                anything else: it is reported, never guessed.

Grading follows MedCalc-Bench: a decimal is correct when it lies in ``[lower, upper]`` (the ±5%
band of the label), an integer answer is rounded and must equal the label, a date must be the same
day, a gestational age the same weeks and days, and an abstention is correct only when the label is
an abstention.

Model outputs (the one extraction rule, used by the reward, the relabel stage and ``evaluate``):
the answer of an output is the text inside its **last** ``<answer>...</answer>`` (tags are
case-insensitive, the text is stripped; everything before it is reasoning). An output without a
complete tag has no answer for the reward and the relabel stage (a format failure: reward 0, an
unparseable vote); ``evaluate`` grades such an output whole, stripped (:func:`graded_answer`),
so predictions may also be given as bare answers. A model answer is unparsable when it is longer
than :data:`MAX_ANSWER_CHARS` characters (no valid answer is that long; this also keeps grading of
hostile outputs linear) or when it spells a non-finite number (``NaN``, ``Infinity``): those are
never read as an abstention.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from typing import Any

NA = "N/A"
TOLERANCE = 0.05  # MedCalc-Bench's ±5% band for decimal answers
OUTPUT_TYPES = ("decimal", "integer", "date")
KINDS = ("decimal", "integer", "date", "gestational_age", "abstain", "invalid")

_ABSTAIN = {"", "n/a", "na", "n.a.", "nan", "unknown", "not applicable", "not available", "abstain"}
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?"
_NUMBER_WITH_UNIT = re.compile(
    r"^\s*(?P<num>" + _NUMBER + r")\s*(?P<unit>(?:[a-zA-Zµμ%/^²³·\s]|[a-zA-Z]\d)*)\s*$"
)
_GA = re.compile(
    r"^\s*\(?\s*['\"]?\s*(?P<w>\d+)\s*(?:weeks?|wks?|w)?\s*['\"]?\s*,?\s*['\"]?\s*(?P<d>\d+)\s*(?:days?|d)\s*['\"]?\s*\)?\s*$",
    re.IGNORECASE,
)
_GA_LOOSE = re.compile(
    r"^\s*\(\s*['\"]?\s*(?P<w>\d+)\s*(?:weeks?)?\s*['\"]?\s*,\s*['\"]?\s*(?P<d>\d+)\s*(?:days?)?\s*['\"]?\s*\)\s*$",
    re.IGNORECASE,
)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")  # the common case, read without the general rules below
_US_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})\s*$")
_ISO_DATE = re.compile(r"^\s*(\d{4})-(\d{2})-(\d{2})(?:[ T]00:00(?::00(?:\.0+)?)?)?\s*$")


@dataclass(frozen=True)
class Answer:
    """A parsed answer: ``kind`` (see module doc), ``value``, and the text it came from."""

    kind: str
    value: float | dt.date | None
    text: str
    weeks: int | None = None
    days: int | None = None
    reason: str = ""

    @property
    def is_abstain(self) -> bool:
        return self.kind == "abstain"

    @property
    def is_valid(self) -> bool:
        return self.kind != "invalid"

    @property
    def is_number(self) -> bool:
        return self.kind in ("decimal", "integer", "gestational_age")

    @property
    def number(self) -> float:
        """``value`` as a float (a ``TypeError`` for a date or an abstention, as ``float()`` gives)."""
        v = self.value
        if v is None or isinstance(v, dt.date):
            raise TypeError(f"a {self.kind} answer has no numeric value")
        return float(v)

    @property
    def date(self) -> dt.date:
        """``value`` as a date (a ``TypeError`` for any other kind)."""
        v = self.value
        if not isinstance(v, dt.date):
            raise TypeError(f"a {self.kind} answer has no date")
        return v


def _clean_text(raw: Any) -> str:
    if raw is None:
        return ""
    if isinstance(raw, float) and math.isnan(raw):
        return ""
    return str(raw).strip()


def _number(x: float, text: str) -> Answer:
    if math.isinf(x) or math.isnan(x):
        return Answer("invalid", None, text, reason="not a finite number")
    kind = "integer" if float(x).is_integer() else "decimal"
    return Answer(kind, float(x), text)


def parse_answer(raw: Any, output_type: str = "decimal") -> Answer:
    """Parse an answer cell or model answer for a calculator of ``output_type``.

    Accepts strings, numbers, ``datetime``/``date``/``pandas.Timestamp`` (spreadsheet cells),
    ``MM/DD/YYYY`` and ISO dates, the gestational-age tuple form ``('14 weeks', '1 days')``, numbers
    followed by a unit (``78.1 ml/hr``) and the abstention spellings. ``output_type`` decides how
    ambiguous input is read: a datetime is a valid answer only for ``date``; for ``date`` a plain
    number is invalid.
    """
    if output_type not in OUTPUT_TYPES:
        raise ValueError(f"unknown output type {output_type!r}; expected one of {OUTPUT_TYPES}")
    if isinstance(raw, bool):
        return Answer("invalid", None, str(raw), reason="a boolean is not an answer")
    if isinstance(raw, (dt.datetime, dt.date)) and not isinstance(raw, str):
        text = raw.isoformat()
        if output_type != "date":
            return Answer("invalid", None, text, reason=f"a date is not a valid {output_type} answer")
        if isinstance(raw, dt.datetime):
            if (raw.hour, raw.minute, raw.second, raw.microsecond) != (0, 0, 0, 0):
                return Answer("invalid", None, text, reason="date has a time of day")
            raw = raw.date()
        return Answer("date", raw, raw.strftime("%m/%d/%Y"))
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        if isinstance(raw, float) and math.isnan(raw):
            return Answer("abstain", None, "")
        if output_type == "date":
            return Answer("invalid", None, str(raw), reason="a number is not a date")
        return _number(float(raw), str(raw))

    text = _clean_text(raw)
    if output_type != "date" and _PLAIN_NUMBER.fullmatch(text):
        return _number(float(text), text)
    if text.lower().rstrip(".") in _ABSTAIN or text.lower() in _ABSTAIN:
        return Answer("abstain", None, text)

    ga = _GA.match(text) or _GA_LOOSE.match(text)
    if ga:  # the same answer whatever the declared type (2024-06 types gestational age ``date``)
        w, d = int(ga.group("w")), int(ga.group("d"))
        return Answer("gestational_age", float(w * 7 + d), text, weeks=w, days=d)

    if output_type == "date":
        m = _US_DATE.match(text)
        if m:
            mo, d, y = (int(g) for g in m.groups())
        else:
            m = _ISO_DATE.match(text)
            if not m:
                return Answer("invalid", None, text, reason="not a date (expected MM/DD/YYYY or YYYY-MM-DD)")
            y, mo, d = (int(g) for g in m.groups())
        try:
            return Answer("date", dt.date(y, mo, d), text)
        except ValueError as exc:
            return Answer("invalid", None, text, reason=f"impossible date: {exc}")

    m = _NUMBER_WITH_UNIT.match(text)
    if m and m.group("num") not in ("", "+", "-", ".") and re.search(r"\d", m.group("num")):
        unit = m.group("unit").strip()
        if unit and not re.search(r"[a-zA-Zµμ%]", unit):
            return Answer("invalid", None, text, reason="trailing characters after the number")
        try:
            x = float(m.group("num").replace(",", ""))
        except ValueError:
            return Answer("invalid", None, text, reason="not a number")
        return _number(x, text)
    return Answer("invalid", None, text, reason="not a number, date, gestational age or N/A")


def _coerce(a: Any, output_type: str) -> Answer:
    return a if isinstance(a, Answer) else parse_answer(a, output_type)


def band(value: float, tolerance: float = TOLERANCE) -> tuple[float, float]:
    """The grading band of a decimal label: ``(value*(1-t), value*(1+t))`` ordered low to high."""
    lo, hi = value * (1 - tolerance), value * (1 + tolerance)
    return (min(lo, hi), max(lo, hi))


def is_correct(prediction: Any, ground_truth: Any, lower: Any = None, upper: Any = None,
               output_type: str = "decimal") -> bool:
    """MedCalc-Bench grading of ``prediction`` against the label and its limits.

    ``lower``/``upper`` are the dataset's ``Lower Limit``/``Upper Limit``; when absent for a decimal
    label the ±5% band is used. An unparseable prediction is wrong; an unparseable label raises.
    """
    gt = _coerce(ground_truth, output_type)
    if gt.kind == "invalid":
        raise ValueError(f"ground truth {gt.text!r} is not a valid {output_type} answer: {gt.reason}")
    pred = _coerce(prediction, output_type)
    if gt.is_abstain or pred.is_abstain:
        return gt.is_abstain and pred.is_abstain
    if pred.kind == "invalid":
        return False
    if output_type == "date":
        return pred.value == gt.value
    if gt.kind == "gestational_age" or pred.kind == "gestational_age":
        return pred.value == gt.value
    if output_type == "integer":
        return round(pred.number) == round(gt.number)
    # decimal: inside [lower, upper]
    lo_a = _coerce(lower, output_type) if lower is not None else None
    hi_a = _coerce(upper, output_type) if upper is not None else None
    if lo_a is not None and hi_a is not None and lo_a.is_number and hi_a.is_number:
        lo, hi = lo_a.number, hi_a.number
    else:
        lo, hi = band(gt.number)
    x = round(pred.number, 5)
    return lo <= x <= hi


def rel_err(a: Any, b: Any, output_type: str = "decimal") -> float:
    """Symmetric discrepancy between two labels, as in the audit.

    ``|a-b| / max(|a|, |b|)`` for numbers (0 when both are 0); one abstention and one value count as
    1.0 and two abstentions as 0; dates count 0 when they are at most one day apart and 1.0 when
    more than one day apart. Raises ``ValueError`` when either side cannot be parsed.
    """
    x, y = _coerce(a, output_type), _coerce(b, output_type)
    for side in (x, y):
        if side.kind == "invalid":
            raise ValueError(f"cannot compare {side.text!r}: {side.reason}")
    if x.is_abstain or y.is_abstain:
        return 0.0 if (x.is_abstain and y.is_abstain) else 1.0
    if x.kind == "date" or y.kind == "date":
        if x.kind != y.kind:
            return 1.0
        return 0.0 if abs((x.date - y.date).days) <= 1 else 1.0
    p, q = x.number, y.number
    denom = max(abs(p), abs(q))
    return 0.0 if denom == 0 else abs(p - q) / denom


def labels_agree(a: Any, b: Any, output_type: str) -> bool:
    """Whether two labels are the same label: within the ±5% band for decimals, exact otherwise.

    Used to decide whether a recomputed label *changes* an original one. Both abstentions agree.
    """
    x, y = _coerce(a, output_type), _coerce(b, output_type)
    if x.kind == "invalid" or y.kind == "invalid":
        raise ValueError(f"cannot compare {x.text!r} and {y.text!r}")
    if x.is_abstain or y.is_abstain:
        return x.is_abstain and y.is_abstain
    if output_type == "date":
        return x.value == y.value
    if output_type == "decimal" and x.kind != "gestational_age":
        lo, hi = band(y.number)
        return lo - 1e-9 <= x.number <= hi + 1e-9
    return x.number == y.number


def same_value(a: Any, b: Any, output_type: str) -> bool:
    """Whether two label texts denote exactly the same label (``25.2380`` = ``25.238``, 99 days =
    ``('14 weeks', '1 days')``, ``N/A`` = ``n/a``); no tolerance band."""
    x, y = _coerce(a, output_type), _coerce(b, output_type)
    if x.kind == "invalid" or y.kind == "invalid":
        return False
    if x.is_abstain or y.is_abstain:
        return x.is_abstain and y.is_abstain
    if (x.kind == "date") != (y.kind == "date"):
        return False
    if x.kind == "date":
        return x.value == y.value
    return math.isclose(x.number, y.number, rel_tol=1e-9, abs_tol=1e-12)


def format_answer(answer: Any, output_type: str, style: str | None = None) -> str:
    """Canonical text of an answer for the release.

    ``style="gestational_age"`` writes ``('W weeks', 'D days')`` (v1.0's form) from a tuple or a
    total number of days; dates are ``MM/DD/YYYY``; integers have no decimal point; decimals keep
    at most 3 decimal places without trailing zeros; abstentions are ``N/A``.
    """
    a = _coerce(answer, output_type)
    if a.kind == "invalid":
        raise ValueError(f"cannot format invalid answer {a.text!r}: {a.reason}")
    if a.is_abstain:
        return NA
    if a.kind == "date":
        return a.date.strftime("%m/%d/%Y")
    if style == "gestational_age" or a.kind == "gestational_age":
        total = int(round(a.number))
        return f"('{total // 7} weeks', '{total % 7} days')"
    x = a.number
    if output_type == "integer" or x.is_integer():
        if output_type == "integer":
            return str(int(round(x)))
        return str(int(x))
    text = f"{round(x, 3):.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def limits(answer: Any, output_type: str, style: str | None = None) -> tuple[str, str]:
    """``(Lower Limit, Upper Limit)`` for a maintained label: ±5% for decimals, else the answer."""
    a = _coerce(answer, output_type)
    if a.is_abstain:
        return NA, NA
    if output_type == "decimal" and a.kind in ("decimal", "integer"):
        lo, hi = band(a.number)
        return _fmt_limit(lo), _fmt_limit(hi)
    text = format_answer(a, output_type, style)
    return text, text


def _fmt_limit(x: float) -> str:
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def first_number(raw: Any) -> float | None:
    """Lenient reading used by the physician-agreement report: the first numeric token in a cell.

    ``N/A`` and text without a number give ``None``; datetimes give ``None`` (no date labels are
    physician-reviewed).
    """
    if isinstance(raw, bool) or raw is None:
        return None
    if isinstance(raw, (int, float)):
        return None if (isinstance(raw, float) and math.isnan(raw)) else float(raw)
    if isinstance(raw, (dt.date, dt.datetime)):
        return None
    m = re.search(r"[-+]?\d+(?:\.\d+)?", str(raw))
    return float(m.group(0)) if m else None


_OPEN_TAG = re.compile(r"<answer>", re.IGNORECASE)
_CLOSE_TAG = re.compile(r"</answer>", re.IGNORECASE)
MAX_ANSWER_CHARS = 200  # a model answer longer than this is unparsable (see the module doc)
_NON_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


def extract_answer(text: Any) -> str | None:
    """The stripped content of the last ``<answer>...</answer>`` in ``text``, or ``None``.

    Tags pair left to right (an opening tag with the first closing tag after it), in one linear
    scan of the text.

    >>> extract_answer("<answer>1</answer> wait, no: <answer> 2 </answer>")
    '2'
    >>> extract_answer("<answer>3") is None
    True
    """
    text = text if isinstance(text, str) else ""
    found, pos = None, 0
    while True:
        start = _OPEN_TAG.search(text, pos)
        end = _CLOSE_TAG.search(text, start.end()) if start else None
        if start is None or end is None:
            return found.strip() if found is not None else None
        found, pos = text[start.end():end.start()], end.end()


def graded_answer(output: str) -> str:
    """The answer ``evaluate`` grades: the last tagged answer, else the whole output stripped."""
    answer = extract_answer(output)
    return output.strip() if answer is None else answer


def parse_model_answer(answer: str | None, output_type: str) -> Answer | None:
    """The parsed answer of a model, or ``None`` when it is missing, empty, unparsable, longer than
    :data:`MAX_ANSWER_CHARS` or a non-finite number (``NaN``, ``Infinity``: never an abstention)."""
    if answer is None or not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
        return None
    if answer.strip().lower() in _NON_FINITE:
        return None
    parsed = parse_answer(answer, output_type)
    return None if parsed.kind == "invalid" else parsed
