"""Adapters that run a release of the maintained labels inside the evaluation harnesses model
developers already use. Each adapter is thin: it loads ``org/medcalc-maintained`` at a release tag
(any of the configs ``default``, ``full``, ``mini``), builds the prompt of
:mod:`medcalc_maintained.scoring.prompts` and grades with our answer semantics
(:data:`medcalc_maintained.scoring.graders.GRADERS` ``["ours"]``, or the RL reward of
:mod:`medcalc_maintained.scoring.reward`). The harness packages are optional extras:

* :mod:`.lm_eval_task` (extra ``lm-eval``): writes an lm-evaluation-harness task directory for a tag;
* :mod:`.inspect_task` (extra ``inspect``): an Inspect task with a scorer;
* :mod:`.verifiers_env` (extra ``verifiers``): a verifiers environment whose rubric is the RL reward;
* :mod:`.helm_scenario` (crfm-helm, in its own venv: ``make harness-env H=helm``): a HELM scenario
  and metric.

Nothing here is needed by the pipeline (``make run``).
"""

from medcalc_maintained.harnesses.common import CONFIGS, DATASET, is_correct, prompt_messages, prompt_text

__all__ = ["CONFIGS", "DATASET", "is_correct", "prompt_messages", "prompt_text"]
