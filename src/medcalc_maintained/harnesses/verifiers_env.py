"""A ``verifiers`` environment for one release (extra ``verifiers``, verifiers 0.1.10).

``vf.load_environment("medcalc_maintained.harnesses.verifiers_env", release=<dir>, config="mini")``
(a local release directory built by ``release build``: ``build/release`` after ``make run``,
offline), or ``revision="v2.0"`` for a published release (``org/medcalc-maintained`` at the tag;
``dataset=`` another repository), gives a single-turn environment over the rows: the two chat
messages every adapter sends (:mod:`medcalc_maintained.grading.prompts`), the shared greedy decoding
as the environment's ``sampling_args`` (temperature 0,
:data:`~medcalc_maintained.harnesses.common.MAX_NEW_TOKENS` tokens; ``evaluate(sampling_args=...)``
overrides them), an ``XMLParser`` for the ``<answer>`` field, and a ``Rubric`` whose one weighted
reward is the GRPO reward of :mod:`medcalc_maintained.grading.reward`
(:func:`~medcalc_maintained.grading.reward.score`: 1 for a correct answer, ``lam`` for a parsable wrong
one, 0 without a readable ``<answer>``), plus the unweighted metric ``correct`` (our grading, as the
other adapters report it).

The environment id is this module's name, :data:`ENV_ID`: verifiers imports the module an id names
and calls its ``load_environment``, both for ``vf-eval medcalc_maintained.harnesses.verifiers_env -a
'{"release": ...}'`` and when its environment server loads the environment again, in another
process, from the id and ``env_args`` a run recorded (in its ``metadata.json``). ``env_args`` are
therefore the arguments that load the same environment, with the release's version
(``release_version``): a release directory rebuilt to another version in between is refused, not
read. A caller's ``max_tokens`` or ``temperature`` of ``None`` (``vf-eval`` without ``-t``/``-T``)
keeps the shared decoding instead of dropping the budget.
"""

from __future__ import annotations

from typing import Any

import verifiers as vf
from datasets import Dataset

from medcalc_maintained.grading.reward import DEFAULT_LAMBDA, _check_lambda, completion_text, score
from medcalc_maintained.harnesses.common import (
    DATASET,
    MAX_NEW_TOKENS,
    TEMPERATURE,
    is_correct,
    label_fields,
    load_rows,
    prompt_messages,
    resolve_release,
    variant_metadata,
)

# verifiers finds an environment by importing the module its id names (``-`` read as ``_``)
ENV_ID = __name__


def to_example(row: dict[str, Any], prompt: str = "default") -> dict[str, Any]:
    """One dataset row as a verifiers example: chat prompt (variant ``prompt``), the label as ``answer``,
    the grading columns as ``info``."""
    return {"prompt": prompt_messages(row, prompt), "answer": str(row["Ground Truth Answer"]), "info": label_fields(row),
            "task": "medcalc-maintained"}


def make_rubric(parser: vf.Parser, lam: float = DEFAULT_LAMBDA) -> vf.Rubric:
    """The rubric: reward ``medcalc_reward`` (weight 1) and metric ``correct`` (weight 0)."""
    lam = _check_lambda(lam)

    def medcalc_reward(completion, info, **kwargs) -> float:
        return score(completion, info["Ground Truth Answer"], info["Lower Limit"], info["Upper Limit"],
                     info["Output Type"], lam=lam)

    def correct(completion, info, **kwargs) -> float:
        return float(is_correct(info, completion_text(completion)))

    return vf.Rubric(funcs=[medcalc_reward, correct], weights=[1.0, 0.0], parser=parser)


def sampling_args() -> dict[str, Any]:
    """The shared greedy decoding, as OpenAI-style sampling arguments."""
    return {"temperature": TEMPERATURE, "max_tokens": MAX_NEW_TOKENS}


class MedCalcEnv(vf.SingleTurnEnv):
    """The single-turn environment, whose shared decoding a caller's ``None`` does not erase."""

    async def generate(self, inputs: Any, client: Any, model: str, sampling_args: Any = None, *args: Any,
                       **kwargs: Any) -> Any:
        # evaluate, evaluate_sync and vf-eval all end here. vf-eval passes {"max_tokens": None} when -t is
        # not given; verifiers would then drop the budget (normalize_sampling_args removes None) and
        # the server would choose its own
        given = {k: v for k, v in (sampling_args or {}).items() if v is not None}
        return await super().generate(inputs, client, model, given, *args, **kwargs)


def load_environment(release: str | None = None, revision: str | None = None, config: str = "default",
                     lam: float = DEFAULT_LAMBDA, dataset: str = DATASET, release_version: str | None = None,
                     prompt: str = "default", **kwargs: Any) -> vf.Environment:
    """MedCalc-Bench with the maintained labels of one release (``release`` a local directory, or
    ``dataset`` at tag ``revision``), config ``config``, as a single-turn environment (its rows are
    the evaluation dataset; ``kwargs`` go to ``vf.SingleTurnEnv``). ``release_version``, when given,
    must be the version the release holds (verifiers passes it back when it reloads the environment);
    ``prompt`` the prompt variant (``default``, ``stepwise``: ``-a '{"prompt": "stepwise"}'``)."""
    extra = variant_metadata(prompt)
    rel = resolve_release(release, revision, dataset=dataset)
    if release_version is not None and release_version != rel.version:
        raise ValueError(f"{rel.source} holds release {rel.version}, not {release_version} (the release this "
                         "run was started on): it was rebuilt since; start the run again")
    rows = load_rows(config, rel)
    if not rows:
        raise ValueError(f"config {config!r} of release {rel.version} ({rel.source}) has no rows")
    dataset_ = Dataset.from_list([to_example(r, prompt) for r in rows])
    parser = vf.XMLParser(["answer"], answer_field="answer")
    kwargs.setdefault("sampling_args", sampling_args())
    where = {"release": rel.path} if rel.local else {"revision": rel.revision, "dataset": rel.path}
    return MedCalcEnv(eval_dataset=dataset_, parser=parser, rubric=make_rubric(parser, lam),
                      env_id=ENV_ID,
                      env_args={**where, "config": config, "lam": lam, "release_version": rel.version,
                                **({"prompt": prompt} if extra else {})}, **kwargs)
