"""The grading rules of the harnesses that run MedCalc-Bench, side by side (a small registry).

``GRADERS[name](row, output) -> bool`` says whether ``output`` (a model's whole output) is correct
for one labelled ``row`` (a mapping with ``Ground Truth Answer``, ``Lower Limit``,
``Upper Limit``, ``Output Type``, and, where a rule needs them, ``Calculator ID`` and
``Category``). Our own semantics live in :mod:`medcalc_maintained.core.answers` only; the other
rules are re-implementations, in our own code, of each harness's published behaviour:

``ours``
    :func:`medcalc_maintained.grading.grade.grade` (``core/answers.is_correct`` after the one
    extraction rule): an abstention is correct against an ``N/A`` label.
``upstream``
    ncbi-nlp/MedCalc-Bench, ``evaluation/evaluate.py`` ``check_correctness`` (the v1.0 evaluation
    code, commit 72748cc0c454ac9d9531494e6180940de03d8470): the answers ``N/A`` and ``Not Found``
    are always wrong; dates (calculators 13 and 68) the same day after normalising ``MM/DD/YYYY``;
    gestational age (calculator 69) the same (weeks, days); integer outputs equal after rounding
    both; decimals inside ``[Lower Limit, Upper Limit]``. An ``N/A`` label cannot be read as a
    number, so an ``N/A`` row is never correct under this rule (upstream has no abstention).
``helm``
    stanford-crfm/helm, ``src/helm/benchmark/metrics/medcalc_bench_metrics.py``
    (``MedCalcBenchMetric``, commit 030c285fdbc5f28240dc40cb863370ea115aba94): by ``Category``:
    ``risk``, ``severity``, ``diagnosis``: the stripped output equals the label string exactly
    (``"4.0"`` is not ``"4"``); ``date``: a date (or a gestational age written exactly
    ``('W weeks', 'D days')`` from its first character, as HELM's ``parse_duration`` matches it) inside
    the limits;
    ``physical`` and ``dosage conversion``: a number inside the limits; any other category raises
    inside the metric and scores 0, so every ``lab`` and ``dosage`` row (MedCalc-Bench's category
    names) is wrong whatever the answer: :data:`HELM_DEFECT_CATEGORIES`.
``opencompass``
    the same rule as ``upstream``, with OpenCompass's answer extraction: the ``answer`` of a JSON
    object ``{"answer": ...}`` in the output, else the last number in it.

``inspect``
    Inspect's stock ``pattern()`` scorer (inspect-ai, ``inspect_ai/scorer/_pattern.py``) over the
    answer tag the prompt asks for, :data:`ANSWER_TAG`, the label as target: the first tag's text
    equals the label, ignoring case (``"4.0"`` is not ``"4"``; no tolerance). Run by Inspect's own
    code (the ``inspect`` extra), not a copy of it.
``lm-eval``
    lm-evaluation-harness's stock ``regex`` filter (``RegexFilter``, :data:`ANSWER_TAG`, the last
    match, fallback ``[invalid]``) and its ``exact_match`` metric (``exact_match_hf_evaluate``,
    ``ignore_case``): the last tag's text equals the label (the filter's regex itself is
    case-sensitive: ``<ANSWER>`` is not found). Run by lm-eval's own code (the ``lm-eval`` extra).

These two are what a task written with each tool's stock matchers grades; this project's own
Inspect task and lm-eval task grade with ``ours`` (``harnesses/``).

For ``ours``, ``upstream`` and ``helm`` the answer is extracted by the package's one rule
(:func:`medcalc_maintained.core.answers.graded_answer`), so a difference between them is a
difference of grading rule only.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any, Callable, Mapping

from medcalc_maintained.core.answers import graded_answer
from medcalc_maintained.grading.grade import grade

Row = Mapping[str, Any]
Grader = Callable[[Row, str], bool]

UPSTREAM_DATE_CALCULATORS = (13, 68)
UPSTREAM_GESTATIONAL_CALCULATORS = (69,)
HELM_EXACT_CATEGORIES = ("risk", "severity", "diagnosis")
HELM_RANGE_CATEGORIES = ("physical", "dosage conversion")
# categories MedCalc-Bench uses that HELM's metric does not handle: always scored 0 there
HELM_DEFECT_CATEGORIES = ("lab", "dosage")

_WEEKS_DAYS = re.compile(r"(\d+)\s*(?:weeks?)?['\"]?\s*,\s*['\"]?(\d+)")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_HELM_DURATION = re.compile(r"\('(\d+) weeks', '(\d+) days'\)")  # HELM's re.match, from the first character


def _text(v: Any) -> str:
    return "" if v is None else str(v).strip()


def helm_defect(category: Any) -> bool:
    """Whether HELM's metric scores every row of ``category`` 0 (:data:`HELM_DEFECT_CATEGORIES`)."""
    return _text(category) in HELM_DEFECT_CATEGORIES


def _date(text: str) -> dt.date | None:
    try:
        return dt.datetime.strptime(text.strip(), "%m/%d/%Y").date()
    except ValueError:
        return None


def _weeks_days(text: str) -> tuple[int, int] | None:
    m = _WEEKS_DAYS.search(text)
    return (int(m[1]), int(m[2])) if m else None


def _helm_days(text: str) -> int | None:
    m = _HELM_DURATION.match(text)
    return int(m[1]) * 7 + int(m[2]) if m else None


def _float(text: str) -> float | None:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def upstream_rule(answer: str, row: Row) -> bool:
    """MedCalc-Bench's ``check_correctness`` on an extracted answer (see the module doc)."""
    answer, label = _text(answer), _text(row["Ground Truth Answer"])
    if answer in ("N/A", "Not Found"):
        return False
    try:
        calc = int(float(_text(row.get("Calculator ID"))))
    except ValueError:
        calc = -1
    if calc in UPSTREAM_DATE_CALCULATORS:
        da, dg = _date(answer), _date(label)
        return da is not None and da == dg
    if calc in UPSTREAM_GESTATIONAL_CALCULATORS:
        wa, wg = _weeks_days(answer), _weeks_days(label)
        return wa is not None and wa == wg
    a = _float(answer)
    if a is None:
        return False
    if _text(row["Output Type"]) == "integer":
        g = _float(label)
        return g is not None and round(a) == round(g)
    lo, hi = _float(_text(row["Lower Limit"])), _float(_text(row["Upper Limit"]))
    return lo is not None and hi is not None and lo <= a <= hi


def helm_rule(prediction: str, row: Row) -> bool:
    """HELM's ``MedCalcBenchMetric`` on a prediction (see the module doc)."""
    prediction, label = _text(prediction), _text(row["Ground Truth Answer"])
    category = _text(row.get("Category"))
    lo, hi = _text(row["Lower Limit"]), _text(row["Upper Limit"])
    if category in HELM_EXACT_CATEGORIES:
        return prediction == label
    if category == "date":
        if _HELM_DURATION.match(label):
            # its parse_duration: the exact form ('W weeks', 'D days') from the first character, as days
            p, a, b = (_helm_days(t) for t in (prediction, lo, hi))
            return p is not None and a is not None and b is not None and a <= p <= b
        dp, da, db = _date(prediction), _date(lo), _date(hi)
        return dp is not None and da is not None and db is not None and da <= dp <= db
    if category in HELM_RANGE_CATEGORIES:
        fp, fa, fb = _float(prediction), _float(lo), _float(hi)
        return fp is not None and fa is not None and fb is not None and fa <= fp <= fb
    return False  # an unhandled category: the metric's ValueError is scored 0


def opencompass_answer(output: str) -> str:
    """OpenCompass's extraction: ``{"answer": ...}`` of a JSON object in the output, else its last number."""
    text = _text(output)
    for m in re.finditer(r"\{[^{}]*\}", text):
        try:
            doc = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(doc, dict) and "answer" in doc:
            return _text(doc["answer"])
    numbers = _NUMBER.findall(text)
    return numbers[-1] if numbers else ""


def _ours(row: Row, output: str) -> bool:
    return grade(output, _text(row["Ground Truth Answer"]), _text(row["Lower Limit"]), _text(row["Upper Limit"]),
                 _text(row["Output Type"]))[0] == "correct"


ANSWER_TAG = r"<answer>\s*(.*?)\s*</answer>"  # the tag of grading/prompts.py, for the stock matchers


def _missing(module: str, extra: str) -> ValueError:
    """The error of a stock matcher whose tool is not installed: the extra that installs it."""
    return ValueError(f"grader {extra!r} runs {module}, which is not installed: pip install -e '.[{extra}]'")


def _inspect(row: Row, output: str) -> bool:
    try:
        from inspect_ai.model import ModelName, ModelOutput
        from inspect_ai.scorer import CORRECT, Target, pattern
        from inspect_ai.solver import TaskState
    except ImportError:
        raise _missing("inspect_ai", "inspect") from None
    model = "local/model"
    state = TaskState(model=ModelName(model), sample_id=0, epoch=1, input="", messages=[],
                      output=ModelOutput.from_content(model, str(output or "")))
    score = _run(pattern(ANSWER_TAG)(state, Target(_text(row["Ground Truth Answer"]))))
    return score is not None and score.value == CORRECT


def _run(coroutine: Any) -> Any:
    """``coroutine``'s result: ``asyncio.run`` here, or in a thread of its own when this thread already
    runs an event loop (a notebook, an async harness), where ``asyncio.run`` refuses."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _lm_eval(row: Row, output: str) -> bool:
    try:
        from lm_eval.api.metrics import exact_match_hf_evaluate
        from lm_eval.filters.extraction import RegexFilter
    except ImportError:
        raise _missing("lm_eval", "lm-eval") from None
    [[answer]] = RegexFilter(regex_pattern=ANSWER_TAG, group_select=-1).apply([[str(output or "")]], [{}])
    got = exact_match_hf_evaluate([answer], [_text(row["Ground Truth Answer"])], ignore_case=True)
    return bool(got["exact_match"] == 1.0)


GRADERS: dict[str, Grader] = {
    "ours": _ours,
    "upstream": lambda row, output: upstream_rule(graded_answer(output), row),
    "helm": lambda row, output: helm_rule(graded_answer(output), row),
    "opencompass": lambda row, output: upstream_rule(opencompass_answer(output), row),
    "inspect": _inspect,
    "lm-eval": _lm_eval,
}


def grader(name: str) -> Grader:
    """The grader called ``name``; a ``ValueError`` naming the known ones otherwise."""
    try:
        return GRADERS[name]
    except KeyError:
        raise ValueError(f"unknown grader {name!r}; known: {', '.join(GRADERS)}") from None
