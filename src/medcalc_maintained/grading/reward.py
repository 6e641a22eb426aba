"""The one reward of the GRPO comparison (paper section 4, Eq. 2) and its framework entry points.

R = lam * 1{answer parsable} + (1 - lam) * 1{answer correct},   lam = 0.1 by default.

* The answer is :func:`medcalc_maintained.core.answers.extract_answer` of the completion's text
  (:func:`completion_text` joins chat messages): the text inside the **last**
  ``<answer>...</answer>`` (tags are case-insensitive; any reasoning before it is ignored).
* *Parsable* means :func:`medcalc_maintained.core.answers.parse_model_answer` reads that text as a number,
  date, gestational age or an explicit abstention (``N/A``, ``unknown``, ...) for the calculator's
  output type. A completion with no answer tag, an empty ``<answer></answer>`` or text the parser
  calls ``invalid`` is not parsable and scores 0: an abstention must be written out.
* *Correct* is :func:`medcalc_maintained.core.answers.is_correct`: MedCalc-Bench grading, where an
  abstention is correct only when the label is ``N/A``. A correct answer is parsable, so it scores
  ``lam + (1 - lam) = 1``; a parsable but wrong answer scores ``lam``.

>>> score("... so the score is 4. <answer>4</answer>", "4", "4", "4", "integer")
1.0
>>> score("<answer>5</answer>", "4", "4", "4", "integer")
0.1
>>> score("I think it is 4.", "4", "4", "4", "integer")
0.0

Entry points: :func:`score` (plain Python), :func:`compute_score` (verl's custom reward function
signature) and :func:`trl_reward` / :func:`make_trl_reward` (TRL's ``GRPOTrainer`` reward function,
which receives the dataset columns as keyword arguments).

For ``date`` labels an answer written ``YYYY/MM/DD`` (the published RL recipe's spelling) is read
as that day. :func:`compute_score` also scores rows in the published recipe's own verl format
(``reward_model.ground_truth = [lower, upper]`` with ``extra_info.data_type`` ``float`` /
``datetime`` / ``unknown``, see :func:`recipe_label`), with the same 1 / lam / 0 values and
``unknown`` <-> ``N/A``. Two known differences from our own labels: the recipe keeps its +-5% band
for integer scores (we round: 4.4 is a correct 4 here, outside [3.8, 4.2] there) and for
gestational ages in days (we need the exact day).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from medcalc_maintained.core.answers import extract_answer, is_correct, parse_model_answer

# lambda_f of Eq. 2 for the framework entry points that run outside a project (verl, TRL); the
# pipeline passes compare.analyze.lambda / compare.train.format_weight explicitly.
DEFAULT_LAMBDA = 0.1


def completion_text(completion: Any) -> str:
    """The generated text of a completion given as a string or as chat messages.

    TRL passes conversational completions as a list of message dicts
    (``[{"role": "assistant", "content": "..."}]``); the assistant messages' contents are joined in
    order. A content given as a list of parts (``[{"type": "text", "text": "..."}]``) is flattened.
    """
    if completion is None:
        return ""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content_text(completion.get("content"))
    if isinstance(completion, Sequence):
        messages = [m for m in completion if isinstance(m, Mapping)]
        if len(messages) != len(completion):
            raise TypeError("a completion list must hold chat messages (dicts with 'role' and 'content')")
        assistant = [m for m in messages if m.get("role", "assistant") == "assistant"]
        return "\n".join(_content_text(m.get("content")) for m in (assistant or messages))
    raise TypeError(f"a completion must be a string or a list of chat messages, not {type(completion).__name__}")


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(str(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content)
    return str(content)


def _check_lambda(lam: float) -> float:
    lam = float(lam)
    if math.isnan(lam) or not 0.0 <= lam <= 1.0:
        raise ValueError(f"the format weight lam must lie in [0, 1], got {lam}")
    return lam


def score(completion: Any, ground_truth: Any, lower: Any, upper: Any, output_type: str,
          lam: float = DEFAULT_LAMBDA) -> float:
    """Eq. 2 for one completion (a string or chat messages) against one label.

    ``ground_truth``/``lower``/``upper``/``output_type`` are the dataset's ``Ground Truth Answer``,
    ``Lower Limit``, ``Upper Limit`` and ``Output Type``. An unreadable label raises ``ValueError``
    (a broken label is a data problem, not a zero reward).
    """
    lam = _check_lambda(lam)
    answer = extract_answer(completion_text(completion))
    if answer is not None and output_type == "date":
        # the published RL recipe writes dates as YYYY/MM/DD: read that spelling as the ISO date
        answer = _SLASHED_ISO_DATE.sub(r"\1-\2-\3", answer.strip())
    parsed = parse_model_answer(answer, output_type)
    if parsed is None:
        return 0.0
    correct = is_correct(parsed, ground_truth, lower, upper, output_type)
    return lam + (1.0 - lam) * float(correct)


_SLASHED_ISO_DATE = re.compile(r"^(\d{4})/(\d{2})/(\d{2})$")

# extra_info.data_type of the published recipe's rows -> the output type the answer is parsed as
RECIPE_DATA_TYPES = {"float": "decimal", "datetime": "date", "unknown": "decimal"}


def recipe_label(bounds: Any, data_type: str) -> tuple[str, str, str, str]:
    """``(label, lower, upper, output_type)`` of a row in the published RL recipe's format.

    ``bounds`` is ``reward_model.ground_truth = [lower, upper]`` and ``data_type`` is
    ``extra_info.data_type``. The recipe's semantics: ``float`` rows are correct inside
    ``[lower, upper]`` (both ends included; the label is their midpoint, the value the band was
    built around; gestational ages are in days); ``datetime`` rows (``lower == upper``, written
    ``YYYY/MM/DD``) need the same day; ``unknown`` rows (``['unknown', 'unknown']``) are correct
    only for an abstention, which here is our ``N/A``.
    """
    if data_type not in RECIPE_DATA_TYPES:
        raise ValueError(f"extra_info.data_type {data_type!r} is not one of {sorted(RECIPE_DATA_TYPES)}")
    if isinstance(bounds, (str, bytes)) or not isinstance(bounds, Sequence) and not hasattr(bounds, "tolist"):
        raise ValueError(f"ground_truth must be [lower, upper], not {bounds!r}")
    bounds = list(bounds.tolist() if hasattr(bounds, "tolist") else bounds)
    if len(bounds) != 2:
        raise ValueError(f"ground_truth must be [lower, upper], got {len(bounds)} value(s)")
    lo, hi = (str(b).strip() for b in bounds)
    if data_type == "unknown":
        if lo.lower() != "unknown" or hi.lower() != "unknown":
            raise ValueError(f"an 'unknown' row must have ground_truth ['unknown', 'unknown'], got {bounds!r}")
        return "N/A", "N/A", "N/A", "decimal"
    if data_type == "datetime":
        m_lo, m_hi = _SLASHED_ISO_DATE.match(lo), _SLASHED_ISO_DATE.match(hi)
        if not (m_lo and m_hi) or lo != hi:
            raise ValueError(f"a 'datetime' row must have ground_truth [YYYY/MM/DD, same day], got {bounds!r}")
        iso = "-".join(m_lo.groups())
        return iso, iso, iso, "date"
    try:
        a, b = float(lo), float(hi)
    except ValueError as exc:
        raise ValueError(f"a 'float' row must have numeric ground_truth [lower, upper], got {bounds!r}") from exc
    if not (math.isfinite(a) and math.isfinite(b)) or a > b:
        raise ValueError(f"a 'float' row must have finite ground_truth with lower <= upper, got {bounds!r}")
    return format((a + b) / 2, ".10g"), lo, hi, "decimal"


def _ground_truth_fields(ground_truth: Any) -> dict[str, Any]:
    if isinstance(ground_truth, (str, bytes)):
        from medcalc_maintained.core.errors import DataError
        from medcalc_maintained.core.json_text import loads_json

        try:
            ground_truth = loads_json(ground_truth, "ground_truth")
        except DataError as exc:
            raise ValueError(f"ground_truth is not JSON: {exc.problem}") from None
    if not isinstance(ground_truth, Mapping):
        raise ValueError(f"ground_truth must be a dict or a JSON object, not {type(ground_truth).__name__}")
    missing = [k for k in ("label", "output_type") if k not in ground_truth]
    if missing:
        raise ValueError(f"ground_truth lacks key(s) {missing}; expected label, lower, upper, output_type")
    return dict(ground_truth)


def ground_truth_json(label: Any, lower: Any, upper: Any, output_type: str) -> str:
    """The ``ground_truth`` string that :func:`compute_score` reads (for verl's parquet files)."""
    return json.dumps({"label": label, "lower": lower, "upper": upper, "output_type": output_type})


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> float:
    """verl's custom reward function (``custom_reward_function.name=compute_score``).

    ``ground_truth`` is either

    * the project's own: a dict or a JSON string with ``label``, ``lower``, ``upper`` and
      ``output_type`` (see :func:`ground_truth_json`; ``compare export`` writes it), or
    * the published RL recipe's ``reward_model.ground_truth = [lower, upper]`` (a list or numpy
      array), read with ``extra_info["data_type"]`` as :func:`recipe_label` describes.

    Both score 1 / ``lam`` / 0 for correct / parsable but wrong / unparsable (Eq. 2). ``extra_info``
    may carry ``lam`` to change the format weight. ``data_source`` and any further keyword
    arguments verl passes are not used: every MedCalc-Bench row is scored the same way.
    """
    lam = DEFAULT_LAMBDA
    if isinstance(extra_info, Mapping) and extra_info.get("lam") is not None:
        lam = extra_info["lam"]
    if not isinstance(ground_truth, (str, bytes, Mapping)):
        data_type = extra_info.get("data_type") if isinstance(extra_info, Mapping) else None
        if data_type is None:
            raise ValueError("a [lower, upper] ground_truth needs extra_info['data_type'] (float, datetime or unknown)")
        label, lo, hi, otype = recipe_label(ground_truth, data_type)
        return score(solution_str, label, lo, hi, otype, lam=lam)
    gt = _ground_truth_fields(ground_truth)
    return score(solution_str, gt["label"], gt.get("lower"), gt.get("upper"), gt["output_type"], lam=lam)


def make_trl_reward(lam: float = DEFAULT_LAMBDA):
    """A TRL reward function with format weight ``lam`` (see :func:`trl_reward`)."""
    lam = _check_lambda(lam)

    def trl_reward(completions: Sequence[Any], ground_truth: Sequence[Any], lower: Sequence[Any],
                   upper: Sequence[Any], output_type: Sequence[str], **kwargs: Any) -> list[float]:
        n = len(completions)
        for name, column in (("ground_truth", ground_truth), ("lower", lower), ("upper", upper),
                             ("output_type", output_type)):
            if len(column) != n:
                raise ValueError(f"reward column {name!r} has {len(column)} values for {n} completions")
        return [score(c, g, lo, hi, t, lam=lam)
                for c, g, lo, hi, t in zip(completions, ground_truth, lower, upper, output_type)]

    trl_reward.__name__ = "medcalc_reward" if lam == DEFAULT_LAMBDA else f"medcalc_reward_lam{lam:g}"
    trl_reward.__doc__ = (
        f"Eq. 2 reward with lam={lam:g} for a batch from TRL's GRPOTrainer; the dataset's "
        "ground_truth/lower/upper/output_type columns arrive as keyword arguments."
    )
    return trl_reward


_default_trl_reward = make_trl_reward(DEFAULT_LAMBDA)


def trl_reward(completions: Sequence[Any], ground_truth: Sequence[Any], lower: Sequence[Any],
               upper: Sequence[Any], output_type: Sequence[str], **kwargs: Any) -> list[float]:
    """TRL ``GRPOTrainer`` reward function with lam = 0.1: one float per completion.

    TRL calls it with ``prompts``, ``completions`` (strings, or chat message lists for a
    conversational dataset), ``completion_ids`` and every other dataset column as keyword
    arguments; it uses ``ground_truth``, ``lower``, ``upper`` and ``output_type`` and ignores the rest.
    """
    return _default_trl_reward(completions, ground_truth, lower, upper, output_type, **kwargs)
