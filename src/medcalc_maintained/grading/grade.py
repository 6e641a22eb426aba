"""Grading one prediction and the statistics of the comparison: the status of an answer
(:data:`STATUSES`), how ``graded.csv`` shows it, the severity of an error, bootstrap intervals of
an accuracy and of a paired difference, and McNemar's exact test. The graders (:mod:`.graders`),
``evaluate`` and its tables (:mod:`medcalc_maintained.scoring.evaluate`,
:mod:`medcalc_maintained.scoring.evaluate_tables`) all grade through here."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from medcalc_maintained.core.answers import Answer, graded_answer, is_correct, parse_model_answer

if TYPE_CHECKING:
    import numpy as np

# Grading one answer needs only the standard library (the harness adapters import it through
# graders.py, and HELM's venv has none of our dependencies): the severity (pandas, the thresholds)
# and the statistics (numpy) are imported where they are used.

STATUSES = ("correct", "wrong", "abstained", "unparsable")


def parsed_text(parsed: Answer | None) -> str:
    """How ``graded.csv`` shows a parsed answer ('' when unparsable)."""
    if parsed is None:
        return ""
    if parsed.is_abstain:
        return "N/A"
    if parsed.kind == "date":
        return parsed.date.strftime("%m/%d/%Y")
    if parsed.kind == "gestational_age":
        return f"({parsed.weeks} weeks, {parsed.days} days)"
    return format(parsed.value, ".12g")


def grade(output: str, label: str, lower: str, upper: str, output_type: str) -> tuple[str, Answer | None]:
    """``(status, parsed answer)`` of one prediction; the status is one of :data:`STATUSES`."""
    parsed = parse_model_answer(graded_answer(output), output_type)
    if parsed is None:
        return "unparsable", None
    if is_correct(parsed, label, lower, upper, output_type):
        return "correct", parsed
    return ("abstained" if parsed.is_abstain else "wrong"), parsed


def grade_output(output: str | None, label: str, lower: str, upper: str, output_type: str) -> str:
    """One of :data:`STATUSES` for one prediction (``None``: no prediction, ``missing``)."""
    return "missing" if output is None else grade(output, label, lower, upper, output_type)[0]


def error_severity(rec: dict[str, Any], parsed: Answer | None) -> str:
    """The severity level (L0-L3) of answering ``parsed`` where the label is ``rec``'s; '' when it
    cannot be told (unparsable answer, no calculator id, a calculator without thresholds)."""
    if parsed is None or not str(rec.get("calculator_id", "")).strip().isdigit():
        return ""
    from medcalc_maintained.calculators.severity import severity
    from medcalc_maintained.core.rows import entities_or_empty

    try:
        level, _ = severity(int(rec["calculator_id"]), rec["Ground Truth Answer"], parsed.text,
                            rec["Output Type"], entities_or_empty(rec.get("entities")))
    except ValueError:
        return ""
    return level


def bootstrap_accuracy_ci(correct: int, n: int, rng: np.random.Generator, n_boot: int,
                          level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of an accuracy of ``correct``/``n``.

    Resampling n 0/1 outcomes with replacement gives a count of successes that is exactly
    Binomial(n, correct/n), so the resamples are drawn from that binomial directly.
    """
    import numpy as np

    if n == 0:
        return (float("nan"), float("nan"))
    draws = rng.binomial(n, correct / n, size=n_boot) / n
    a = (1 - level) / 2
    return (float(np.quantile(draws, a)), float(np.quantile(draws, 1 - a)))


def bootstrap_difference_ci(both: int, a_only: int, b_only: int, neither: int, rng: np.random.Generator,
                            n_boot: int, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of acc(A) - acc(B) over paired items (resampling items).

    Resampling paired items with replacement gives cell counts that are multinomial over the four
    (A correct?, B correct?) cells, so the resamples are drawn from that multinomial directly.
    """
    import numpy as np

    n = both + a_only + b_only + neither
    if n == 0:
        return (float("nan"), float("nan"))
    cells = rng.multinomial(n, np.array([both, a_only, b_only, neither], dtype=float) / n, size=n_boot)
    diff = (cells[:, 1] - cells[:, 2]) / n
    a = (1 - level) / 2
    return (float(np.quantile(diff, a)), float(np.quantile(diff, 1 - a)))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of a_only vs b_only discordant pairs at 1/2."""
    from scipy.stats import binomtest  # scipy loads only when a comparison is made

    discordant = a_only + b_only
    if discordant == 0:
        return 1.0
    return float(binomtest(a_only, discordant, 0.5, alternative="two-sided").pvalue)
