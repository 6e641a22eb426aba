"""The HELM run spec ``medcalc_maintained``, registered when ``helm-run`` imports this module as a
plugin (``.venv-helm`` only: it imports HELM). Offline, after ``make run``, with a local checkpoint
configured for HELM (float32, into ``runs/prod_env``) by ``medcalc-maintained harness helm-model MODEL_DIR``::

    helm-run --plugins medcalc_maintained.harnesses.helm_run_spec --local-path runs/prod_env -o runs/helm \\
        --run-entries "medcalc_maintained:dataset_path=/abs/build/release,config=mini,limit=20,model=local/NAME" \\
        --suite medcalc --max-eval-instances 20

(``NAME`` is the last folder of ``MODEL_DIR``; a published release is ``dataset_path=org/medcalc-maintained,
revision=v2.0``.) The run spec is the scenario and metric of
:mod:`medcalc_maintained.harnesses.helm_scenario` with its :func:`~medcalc_maintained.harnesses.
helm_scenario.adapter_spec`: the chat messages every adapter sends, temperature 0 (HELM's Hugging
Face client samples at temperature 1e-7 for 0: greedy up to ties, which float32 makes rare), the
shared token budget; ``limit`` keeps the config's first rows.
"""

from __future__ import annotations

from helm.benchmark.metrics.metric import MetricSpec
from helm.benchmark.run_spec import RunSpec, run_spec_function
from helm.benchmark.scenarios.scenario import ScenarioSpec

from medcalc_maintained.grading.reward import DEFAULT_LAMBDA
from medcalc_maintained.harnesses.common import DATASET, MAX_NEW_TOKENS, resolve_release, variant_metadata
from medcalc_maintained.harnesses.helm_scenario import METRIC_CLASS, SCENARIO_CLASS, adapter_spec, check_limit


@run_spec_function("medcalc_maintained")
def medcalc_maintained_run_spec(dataset_path: str = DATASET, revision: str = "", config: str = "default",
                                lam: str = str(DEFAULT_LAMBDA), max_tokens: str = str(MAX_NEW_TOKENS),
                                limit: str = "", prompt: str = "default") -> RunSpec:
    """The run spec of one release and config (run-entry arguments arrive as text; ``max_tokens``
    changes the budget; ``limit`` keeps the config's first rows, as lm-eval's ``--limit`` does;
    ``prompt`` the prompt variant, ``default`` or ``stepwise``)."""
    extra = variant_metadata(prompt)
    release = resolve_release(None, revision or None, dataset=dataset_path)
    rows = check_limit(limit)
    return RunSpec(
        name=f"medcalc_maintained:config={config},release={release.version}" + (f",limit={rows}" if rows else "")
        + (f",prompt={prompt}" if extra else ""),
        scenario_spec=ScenarioSpec(class_name=SCENARIO_CLASS, args={
            "dataset_path": dataset_path, "revision": revision or None, "config": config, "limit": rows,
            **({"prompt": prompt} if extra else {})}),
        adapter_spec=adapter_spec(max_tokens=int(max_tokens)),
        metric_specs=[MetricSpec(class_name=METRIC_CLASS, args={"lam": float(lam)})],
        groups=["medcalc_maintained"],
    )
