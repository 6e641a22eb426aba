"""A HELM (``crfm-helm`` 0.5.16) scenario and metric for one release, and the adapter spec of the
shared prompt and decoding.

crfm-helm does not install alongside our pins (it requires ``pandas~=2.0`` and ``datasets~=3.1``):
``make harness-env H=helm`` builds ``.venv-helm`` with crfm-helm and this package (``--no-deps``;
the adapters and :mod:`medcalc_maintained.scoring` need only the standard library). This module
therefore imports HELM only when its classes are first asked for, so it imports without HELM.

* ``MedCalcMaintainedScenario(dataset_path, revision=None, config="default", limit=None)``:
  ``get_instances`` gives one test instance per row of the release (the first ``limit`` rows in the
  config's order when given, as lm-eval's and Inspect's ``--limit`` take them; HELM's own
  ``--max-eval-instances`` draws a seeded random sample instead): ``dataset_path`` a local release directory built
  by ``release build`` (``build/release`` after ``make run``; offline), or a Hub repository
  (``org/medcalc-maintained``) at tag ``revision``. Input: the two chat messages every adapter sends
  (``messages``: system prompt, then note and question, :mod:`medcalc_maintained.grading.prompts`;
  ``text`` holds them joined, for a run that is not a chat run); one correct reference: the
  released label; ``extra_data``: the grading columns; id ``uid<Row Number>``.
* ``MedCalcMaintainedMetric(lam=0.1)``: per generation, ``medcalc_correct`` (our answer semantics for
  every output type: decimals inside the limits, integers rounded, dates the same day, gestational
  age the same weeks and days, ``N/A`` only against ``N/A``) and ``medcalc_reward`` (the GRPO reward
  of :mod:`medcalc_maintained.grading.reward`: 1 / ``lam`` / 0).
* :func:`adapter_spec`: HELM's chat adapter (the instance's messages through the model's chat
  template), one output, no in-context examples, temperature 0 and
  :data:`~medcalc_maintained.harnesses.common.MAX_NEW_TOKENS` tokens: the decoding of every adapter.
  :mod:`medcalc_maintained.harnesses.helm_run_spec` registers the run spec ``medcalc_maintained``
  built from the three for ``helm-run --plugins``.

HELM finds them by class name: ``ScenarioSpec(class_name=SCENARIO_CLASS, args={...})`` and
``MetricSpec(class_name=METRIC_CLASS, args={})``.
"""

from __future__ import annotations

from typing import Any

from medcalc_maintained.grading.reward import DEFAULT_LAMBDA, _check_lambda, score
from medcalc_maintained.harnesses.common import (
    DATASET,
    MAX_NEW_TOKENS,
    TEMPERATURE,
    is_correct,
    label_fields,
    load_rows,
    prompt_messages,
    prompt_text,
    resolve_release,
    variant_metadata,
)

SCENARIO_CLASS = f"{__name__}.MedCalcMaintainedScenario"
METRIC_CLASS = f"{__name__}.MedCalcMaintainedMetric"
_CLASSES: dict[str, type] = {}


def __getattr__(name: str) -> Any:
    """The HELM classes, built (and HELM imported) on first access."""
    if name in ("MedCalcMaintainedScenario", "MedCalcMaintainedMetric"):
        if not _CLASSES:
            _CLASSES.update(_build())
        return _CLASSES[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def output_text(request_state: Any) -> str:
    """The first completion's text of a HELM request state ('' when the request failed)."""
    result = request_state.result
    if result is None or not result.completions:
        return ""
    return result.completions[0].text or ""


def check_limit(limit: Any) -> int | None:
    """``limit`` as a positive row count (a run entry passes it as text), or ``None`` for every row."""
    if limit is None or limit == "":
        return None
    text = str(limit).strip()
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"limit {limit!r} is not a positive whole number of rows")
    return int(text)


def adapter_spec(**overrides: Any) -> Any:
    """HELM's ``AdapterSpec`` of the shared prompt and decoding (``overrides``: e.g. ``model_deployment``)."""
    from helm.benchmark.adaptation.adapter_spec import ADAPT_CHAT, AdapterSpec

    args: dict[str, Any] = dict(method=ADAPT_CHAT, max_train_instances=0, num_outputs=1, temperature=TEMPERATURE,
                                max_tokens=MAX_NEW_TOKENS, stop_sequences=[])
    return AdapterSpec(**{**args, **overrides})


def _build() -> dict[str, type]:
    from helm.benchmark.metrics.metric import Metric
    from helm.benchmark.metrics.metric_name import MetricName
    from helm.benchmark.metrics.statistic import Stat
    from helm.benchmark.scenarios.scenario import CORRECT_TAG, TEST_SPLIT, Input, Instance, Output, Reference, Scenario

    class MedCalcMaintainedScenario(Scenario):
        """MedCalc-Bench with the maintained labels of one release (a local directory, or a tag of a Hub
        repository)."""

        name = "medcalc_maintained"
        description = "MedCalc-Bench test rows with the maintained labels of one medcalc-maintained release"
        tags = ["question_answering", "medicine", "calculation"]

        def __init__(self, dataset_path: str = DATASET, revision: str | None = None, config: str = "default",
                     limit: int | None = None, prompt: str = "default"):
            super().__init__()
            variant_metadata(prompt)  # a known variant
            self.release = resolve_release(None, revision or None, dataset=dataset_path)
            self.dataset_path, self.revision, self.config, self.prompt = dataset_path, revision, config, prompt
            self.limit = check_limit(limit)

        def get_instances(self, output_path: str) -> list:
            rows = load_rows(self.config, self.release)[:self.limit]
            return [Instance(input=Input(text=prompt_text(r, self.prompt), messages=prompt_messages(r, self.prompt)),
                             references=[Reference(Output(text=str(r["Ground Truth Answer"])), tags=[CORRECT_TAG])],
                             split=TEST_SPLIT, id=f"uid{int(r['Row Number'])}", extra_data=label_fields(r))
                    for r in rows]

    class MedCalcMaintainedMetric(Metric):
        """``medcalc_correct`` (our grading) and ``medcalc_reward`` (Eq. 2) of each generation."""

        def __init__(self, lam: float = DEFAULT_LAMBDA):
            self.lam = _check_lambda(lam)

        def evaluate_generation(self, adapter_spec, request_state, metric_service, eval_cache_path) -> list:
            row = request_state.instance.extra_data or {}
            output = output_text(request_state)
            reward = score(output, row["Ground Truth Answer"], row["Lower Limit"], row["Upper Limit"],
                           row["Output Type"], lam=self.lam)
            return [Stat(MetricName("medcalc_correct")).add(float(is_correct(row, output))),
                    Stat(MetricName("medcalc_reward")).add(reward)]

    MedCalcMaintainedScenario.__module__ = MedCalcMaintainedMetric.__module__ = __name__
    return {"MedCalcMaintainedScenario": MedCalcMaintainedScenario, "MedCalcMaintainedMetric": MedCalcMaintainedMetric}
