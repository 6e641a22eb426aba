"""Adapters that run a release of the maintained labels inside the evaluation harnesses model
developers already use. Each adapter is thin: it reads a release from a local directory built by
``release build`` (``build/release`` after ``make run``: offline) or from ``org/medcalc-maintained``
at a release tag (any of the configs ``default``, ``full``, ``mini``), records the release in its
task metadata, sends the same two chat messages of :mod:`medcalc_maintained.grading.prompts`
(system prompt, then note and question) through the harness's chat path with the same greedy
decoding and token budget (:mod:`.common`), and grades with our answer semantics
(:data:`medcalc_maintained.grading.graders.GRADERS` ``["ours"]``, or the RL reward of
:mod:`medcalc_maintained.grading.reward`). The harness packages are optional extras:

* :mod:`.lm_eval_task` (extra ``lm-eval``): writes an lm-evaluation-harness task directory (run with
  ``--apply_chat_template``, which its tasks require);
* :mod:`.inspect_task` (extra ``inspect``): an Inspect task with a scorer;
* :mod:`.verifiers_env` (extra ``verifiers``): a verifiers environment whose rubric is the RL reward;
* :mod:`.helm_scenario` and :mod:`.helm_run_spec` (crfm-helm, in its own venv: ``make harness-env
  H=helm``): a HELM scenario, metric, adapter spec and run spec; :mod:`.helm_model`: HELM's
  configuration of a local checkpoint.

What each harness saved is read back for ``regrade`` by its reader, ``<name>_harness/reader.py``,
into the shape of :mod:`.results`; the harness table :data:`.registry.HARNESSES` names each harness
once (results, reader, grading rule, extra, task version, adapter modules).

Nothing here is needed by the pipeline (``make run``).
"""

from medcalc_maintained.harnesses.common import (
                                                 CONFIGS,
                                                 DATASET,
                                                 MAX_NEW_TOKENS,
                                                 Release,
                                                 is_correct,
                                                 prompt_messages,
                                                 resolve_release,
)

__all__ = ["CONFIGS", "DATASET", "MAX_NEW_TOKENS", "Release", "is_correct", "prompt_messages", "resolve_release"]
