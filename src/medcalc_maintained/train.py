"""GRPO training of one arm of the label comparison (paper section 4) with TRL's ``GRPOTrainer``.

The two arms differ only in the labels their reward is computed against; everything else (prompts,
order of minibatches, hyperparameters, seed) comes from the ``compare.train`` section of
``params.yaml`` and is the same for both. The reward is :func:`medcalc_maintained.reward.make_trl_reward`
(Eq. 2, lambda_f = ``format_weight``).

``run_grpo(dataset, model_path, params)`` trains a local checkpoint. ``smoke=True`` needs no
checkpoint and no download: it builds a character-level tokenizer and a 2-layer randomly
initialised Llama-style model in code, keeps a few prompts (each message cut short) and runs two
GRPO steps on CPU, to check that the data, the reward and the trainer fit together.

Training needs the optional ``train`` extra (torch, transformers, trl); this module imports them
only when training starts, so the rest of the package works without them.
"""

from __future__ import annotations

import json
import math
import os
import string
import tempfile
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.answers import OUTPUT_TYPES

DATASET_COLUMNS = ("prompt", "ground_truth", "lower", "upper", "output_type", "uid")

SYSTEM_PROMPT = (
    "You are a careful clinical calculation assistant. You are given a patient note and a question "
    "that names one medical calculator. Work out which values the calculator needs, find them in the "
    "note (converting units where needed), and compute the result step by step. End your reply with "
    "the final result alone between <answer> and </answer>: a number for scores and measurements, a "
    "date as MM/DD/YYYY, or a gestational age as ('W weeks', 'D days'). If the note does not contain "
    "what the calculator needs, or the calculator does not apply to this patient, reply "
    "<answer>N/A</answer> instead of guessing."
)


def build_prompt(note: str, question: str) -> list[dict[str, str]]:
    """The chat messages of one instance: the fixed system prompt, then the note and the question."""
    user = f"Patient note:\n{note.strip()}\n\nQuestion: {question.strip()}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def build_arm_dataset(instances: pd.DataFrame, labels: pd.DataFrame | None = None):
    """A ``datasets.Dataset`` for one arm: prompts from ``instances``, reward labels from ``labels``.

    ``instances`` has ``uid``, ``Patient Note`` and ``Question`` (``data/interim/instances.parquet``);
    ``labels`` has ``uid``, ``Ground Truth Answer``, ``Lower Limit``, ``Upper Limit`` and
    ``Output Type`` (default: the instances' own v1.0 labels, i.e. the original arm). Only uids
    present in both are kept, in the instances' order.
    """
    import datasets

    need_inst = ["uid", "Patient Note", "Question"]
    need_lab = ["uid", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type"]
    missing = [c for c in need_inst if c not in instances.columns]
    if missing:
        raise ValueError(f"instances lack column(s) {missing}")
    lab = instances if labels is None else labels
    missing = [c for c in need_lab if c not in lab.columns]
    if missing:
        raise ValueError(f"labels lack column(s) {missing}")
    if lab["uid"].duplicated().any():
        raise ValueError(f"labels repeat uid(s) {sorted(lab.loc[lab['uid'].duplicated(), 'uid'].tolist())[:10]}")
    lab = lab[need_lab].set_index(lab["uid"].astype("int64"))
    rows = []
    for rec in instances[need_inst].to_dict("records"):
        uid = int(rec["uid"])
        if uid not in lab.index:
            continue
        lr = lab.loc[uid]
        rows.append({
            "prompt": build_prompt(str(rec["Patient Note"]), str(rec["Question"])),
            "ground_truth": str(lr["Ground Truth Answer"]),
            "lower": str(lr["Lower Limit"]),
            "upper": str(lr["Upper Limit"]),
            "output_type": str(lr["Output Type"]),
            "uid": uid,
        })
    if not rows:
        raise ValueError("no instance has a label: the instances and labels share no uid")
    return datasets.Dataset.from_list(rows)


@dataclass
class TrainParams:
    """``compare.train`` of params.yaml. Defaults are the paper's section 4 settings."""

    seed: int = 0
    learning_rate: float = 1.0e-6
    beta: float = 1.0e-3  # KL coefficient
    num_generations: int = 8  # group size G
    max_completion_length: int = 1600
    temperature: float = 1.0
    top_p: float = 1.0
    format_weight: float = 0.1  # lambda_f of Eq. 2
    prompts_per_step: int = 256  # distinct (note, question) pairs per optimizer step
    per_device_train_batch_size: int = 8  # completions per forward/backward pass on one device
    max_steps: int = 200
    scale_rewards: str = "none"  # no reward standardisation (paper: unbiased advantages)
    loss_type: str = "dr_grpo"  # no length normalisation
    lr_scheduler_type: str = "constant"
    bf16: bool = True
    activation_checkpointing: bool = True  # recompute activations in backward: less memory
    logging_steps: int = 1
    save_steps: int = 50
    output_dir: str = "models/grpo"
    split: str = "train"  # split of the instances to train on (used by `compare train`)
    smoke: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, params: dict[str, Any] | None) -> "TrainParams":
        params = dict(params or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ValueError(f"compare.train: unknown key(s) {unknown}; known keys are {sorted(known)}")
        p = cls(**params)
        p.validate()
        return p

    def validate(self) -> None:
        def positive(name: str) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"compare.train.{name} must be a positive integer, got {v!r}")

        for name in ("num_generations", "max_completion_length", "prompts_per_step",
                     "per_device_train_batch_size", "max_steps", "logging_steps", "save_steps"):
            positive(name)
        if self.num_generations < 2:
            raise ValueError("compare.train.num_generations must be at least 2 (GRPO compares a group)")
        for name in ("learning_rate", "beta", "temperature", "top_p", "format_weight"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or v < 0:
                raise ValueError(f"compare.train.{name} must be a non-negative number, got {v!r}")
        if self.format_weight > 1 or self.top_p > 1:
            raise ValueError("compare.train.format_weight and top_p must be at most 1")
        if not isinstance(self.smoke, dict):
            raise ValueError(f"compare.train.smoke must be a mapping, got {self.smoke!r}")
        if self.learning_rate == 0:
            raise ValueError("compare.train.learning_rate must be positive")

    def gradient_accumulation(self, world_size: int) -> int:
        """Accumulation steps so that one optimizer step sees prompts_per_step * G completions."""
        completions = self.prompts_per_step * self.num_generations
        per_pass = self.per_device_train_batch_size * world_size
        if completions % per_pass:
            raise ValueError(
                f"compare.train: prompts_per_step * num_generations = {completions} completions per step is "
                f"not a multiple of per_device_train_batch_size * devices = {per_pass}"
            )
        return completions // per_pass


SMOKE_DEFAULTS = {
    "prompts": 4,  # prompts kept from the dataset
    "max_prompt_chars": 160,  # each message is cut to this many characters
    "prompts_per_step": 2,
    "num_generations": 4,
    "per_device_train_batch_size": 8,
    "max_completion_length": 16,
    "max_steps": 2,
    "hidden_size": 32,
    "num_layers": 2,
    # Logit bonus, while sampling only, for the answer tags and the digits, so that a random
    # model sometimes writes a parsable answer, groups get unequal rewards and the update is not 0.
    "answer_bias": 8.0,
}


def check_dataset(dataset) -> None:
    """Raise ``ValueError`` unless ``dataset`` has the columns and values the reward needs."""
    missing = [c for c in DATASET_COLUMNS if c not in dataset.column_names]
    if missing:
        raise ValueError(f"training dataset lacks column(s) {missing}; expected {list(DATASET_COLUMNS)}")
    if len(dataset) == 0:
        raise ValueError("training dataset is empty")
    for i, (prompt, otype) in enumerate(zip(dataset["prompt"], dataset["output_type"])):
        if otype not in OUTPUT_TYPES:
            raise ValueError(f"training dataset row {i}: output_type {otype!r} is not one of {OUTPUT_TYPES}")
        if not isinstance(prompt, list) or not prompt or not all(
                isinstance(m, dict) and "role" in m and "content" in m for m in prompt):
            raise ValueError(f"training dataset row {i}: prompt must be a non-empty list of chat messages")


# --------------------------------------------------------------------------------------- smoke


CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL_TOKENS = ["<|pad|>", "<|unk|>", "<|im_start|>", "<|im_end|>"]


def build_char_tokenizer(texts: list[str]):
    """A character-level ``PreTrainedTokenizerFast`` with a chat template, built offline.

    The vocabulary is the special tokens, printable ASCII, the ``<answer>`` tags and every
    character in ``texts``; anything else maps to ``<|unk|>``.
    """
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    chars = sorted(set(string.printable) | set("".join(texts)))
    vocab: dict[str, int] = {}
    for tok in SPECIAL_TOKENS + ["<answer>", "</answer>"] + chars:
        vocab.setdefault(tok, len(vocab))
    # BPE with no merges splits text into single characters; Fuse joins them back on decoding.
    core = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<|unk|>"))
    core.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<|pad|>", unk_token="<|unk|>", eos_token="<|im_end|>",
        bos_token="<|im_start|>",
    )
    tok.chat_template = CHAT_TEMPLATE
    tok.padding_side = "left"
    return tok


def build_tiny_model(tokenizer, hidden_size: int = 32, num_layers: int = 2, seed: int = 0):
    """A randomly initialised 2-layer Llama-style causal LM over ``tokenizer``'s vocabulary."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=num_layers, num_attention_heads=2, num_key_value_heads=2,
        max_position_embeddings=4096, pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(config)


def _smoke_dataset(dataset, n: int, max_chars: int):
    def cut(example):
        example["prompt"] = [{"role": m["role"], "content": m["content"][:max_chars]} for m in example["prompt"]]
        return example

    return dataset.select(range(min(n, len(dataset)))).map(cut)


# ------------------------------------------------------------------------------------- training


@dataclass
class TrainResult:
    output_dir: str
    model_dir: str
    steps: int
    rewards: list[float]  # mean reward of each logged step
    log_history: list[dict[str, Any]]
    params: dict[str, Any]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, default=str)


def run_grpo(arm_dataset, model_path: str | os.PathLike | None, params: dict[str, Any] | None,
             smoke: bool = False, output_dir: str | os.PathLike | None = None,
             progress: bool = True) -> TrainResult:
    """Train with GRPO on ``arm_dataset`` and save the policy; return what happened.

    ``arm_dataset``: a ``datasets.Dataset`` with the columns of :data:`DATASET_COLUMNS`.
    ``model_path``: a local checkpoint directory (ignored, and may be ``None``, when ``smoke``).
    ``params``: the ``compare.train`` mapping (see :class:`TrainParams`).
    ``output_dir``: where checkpoints, the final model and ``train_result.json`` go (default:
    ``params.output_dir``; a fresh temporary directory for a smoke run).
    """
    p = TrainParams.from_dict(params)
    check_dataset(arm_dataset)
    try:
        import torch  # noqa: F401
        from transformers import AutoTokenizer
        from trl import GRPOConfig, GRPOTrainer
        from trl.trainer.callbacks import RichProgressCallback
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(
            f"training needs the 'train' extra (torch, transformers, trl): pip install -e '.[train]' ({exc})"
        ) from exc

    from medcalc_maintained.reward import make_trl_reward

    if smoke:
        unknown = sorted(set(p.smoke) - set(SMOKE_DEFAULTS))
        if unknown:
            raise ValueError(f"compare.train.smoke: unknown key(s) {unknown}; known: {sorted(SMOKE_DEFAULTS)}")
        s = {**SMOKE_DEFAULTS, **p.smoke}
        out = Path(output_dir) if output_dir else Path(tempfile.mkdtemp(prefix="grpo-smoke-"))
        dataset = _smoke_dataset(arm_dataset, s["prompts"], s["max_prompt_chars"])
        texts = [m["content"] for prompt in dataset["prompt"] for m in prompt]
        tokenizer = build_char_tokenizer(texts)
        model = build_tiny_model(tokenizer, s["hidden_size"], s["num_layers"], seed=p.seed)
        init_dir = out / "init-model"
        model.save_pretrained(init_dir)
        tokenizer.save_pretrained(init_dir)
        model_id = str(init_dir)
        p.num_generations = s["num_generations"]
        p.prompts_per_step = s["prompts_per_step"]
        p.per_device_train_batch_size = s["per_device_train_batch_size"]
        p.max_completion_length = s["max_completion_length"]
        p.max_steps = s["max_steps"]
        p.bf16 = False
        p.activation_checkpointing = False
        p.save_steps = max(p.save_steps, p.max_steps + 1)
        p.validate()
        bias_tokens = ["<answer>", "</answer>", *"0123456789"]
        generation_kwargs = {"sequence_bias": [[[tokenizer.convert_tokens_to_ids(t)], float(s["answer_bias"])]
                                               for t in bias_tokens]} if s["answer_bias"] else None
    else:
        if model_path is None:
            raise ValueError("a model checkpoint directory is required (or use smoke=True)")
        model_dir = Path(model_path)
        if not (model_dir / "config.json").is_file():
            raise ValueError(f"{model_dir}: not a local model checkpoint (no config.json in that directory)")
        model_id = str(model_dir)
        tokenizer = AutoTokenizer.from_pretrained(model_id)
        if tokenizer.chat_template is None:
            raise ValueError(f"{model_dir}: the tokenizer has no chat template; the prompts are chat messages")
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        dataset = arm_dataset
        out = Path(output_dir or p.output_dir)
        generation_kwargs = None

    world = int(os.environ.get("WORLD_SIZE", "1"))
    accumulation = p.gradient_accumulation(world)
    args = GRPOConfig(
        output_dir=str(out),
        seed=p.seed,
        data_seed=p.seed,
        learning_rate=p.learning_rate,
        lr_scheduler_type=p.lr_scheduler_type,
        warmup_steps=0,
        weight_decay=0.0,
        beta=p.beta,
        num_generations=p.num_generations,
        max_completion_length=p.max_completion_length,
        temperature=p.temperature,
        top_p=p.top_p,
        top_k=0,
        generation_kwargs=generation_kwargs,
        per_device_train_batch_size=p.per_device_train_batch_size,
        gradient_accumulation_steps=accumulation,
        num_iterations=1,  # on-policy: one update per batch of rollouts
        scale_rewards=p.scale_rewards,
        loss_type=p.loss_type,
        max_steps=p.max_steps,
        bf16=p.bf16,
        use_cpu=smoke,
        activation_checkpointing=p.activation_checkpointing,
        gradient_checkpointing=None,  # the deprecated alias; TRL sets it to True by default
        logging_steps=p.logging_steps,
        save_steps=p.save_steps,
        report_to="none",
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = GRPOTrainer(
        model=model_id,
        reward_funcs=make_trl_reward(p.format_weight),
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        callbacks=[RichProgressCallback()] if progress else None,
    )
    trainer.train()
    final = out / "final-model"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    history = [dict(h) for h in trainer.state.log_history]
    rewards = [float(h["reward"]) for h in history if "reward" in h]
    result = TrainResult(output_dir=str(out), model_dir=str(final), steps=int(trainer.state.global_step),
                         rewards=rewards, log_history=history, params=asdict(p))
    (out / "train_result.json").write_text(result.to_json(), encoding="utf-8")
    return result
