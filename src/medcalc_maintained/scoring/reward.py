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
"""

from __future__ import annotations

import json
import math
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
    parsed = parse_model_answer(extract_answer(completion_text(completion)), output_type)
    if parsed is None:
        return 0.0
    correct = is_correct(parsed, ground_truth, lower, upper, output_type)
    return lam + (1.0 - lam) * float(correct)


def _ground_truth_fields(ground_truth: Any) -> dict[str, Any]:
    if isinstance(ground_truth, (str, bytes)):
        from medcalc_maintained.core.io import DataError, loads_json

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

    ``ground_truth`` is a dict or a JSON string with ``label``, ``lower``, ``upper`` and
    ``output_type`` (see :func:`ground_truth_json`). ``extra_info`` may carry ``lam`` to change the
    format weight. ``data_source`` and any further keyword arguments verl passes are not used: every
    MedCalc-Bench row is scored the same way.
    """
    gt = _ground_truth_fields(ground_truth)
    lam = DEFAULT_LAMBDA
    if isinstance(extra_info, Mapping) and extra_info.get("lam") is not None:
        lam = extra_info["lam"]
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
