"""GRPO training of one arm of the label comparison (paper section 4) with TRL's ``GRPOTrainer``.

The two arms differ only in the labels their reward is computed against; everything else (prompts,
order of minibatches, hyperparameters, seed) comes from the ``compare.train`` section of
``params.yaml`` and is the same for both. The reward is :func:`medcalc_maintained.grading.reward.make_trl_reward`
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
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.grading.prompts import build_prompt
from medcalc_maintained.project import Project

DATASET_COLUMNS = ("prompt", "ground_truth", "lower", "upper", "output_type", "uid")

def build_arm_dataset(instances: pd.DataFrame, labels: pd.DataFrame | None = None):
    """A ``datasets.Dataset`` for one arm: prompts from ``instances``, reward labels from ``labels``.

    ``instances`` has ``uid``, ``Patient Note`` and ``Question`` (the ingest stage's output);
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
class ArmData:
    """The training set of one arm for ``compare train``."""

    dataset: Any  # datasets.Dataset
    instances: int  # instances of the chosen split (rows without a label are left out)
    note: str | None = None  # what was chosen for the caller to show (e.g. the smoke run's split)

    @property
    def dropped(self) -> int:
        return self.instances - len(self.dataset)


def _choose_split(inst: pd.DataFrame, want: str, where: Path, fall_back: bool) -> tuple[pd.DataFrame, str | None]:
    if "split" not in inst.columns:
        return inst, None
    chosen, note = inst[inst["split"] == want], None
    if chosen.empty and fall_back:
        present = sorted(inst["split"].unique())
        note = f"no '{want}' split in {where}; the smoke run uses split '{present[0]}'"
        chosen = inst[inst["split"] == present[0]]
    if chosen.empty:
        raise DataError(where, f"no instances of split {want!r} (present: {sorted(inst['split'].unique())}); "
                        "pass --split")
    return chosen, note


def arm_data(project: Project, arm: str, *, instances: Path | None = None, labels: Path | None = None,
             split: str | None = None, smoke: bool = False) -> ArmData:
    """Prompts of ``split`` (default ``compare.train.split``) from the instances, with the labels of
    ``arm``: ``original`` = the instances' own labels, ``maintained`` = the apply stage's output; an
    explicit ``labels`` file replaces either. A smoke run without ``split`` falls back to the first
    split present when the train split is absent."""
    from medcalc_maintained.scoring.labels import read_label_file

    where = instances or project.instances
    inst = read_parquet(where, "instances", "ingest")
    inst, note = _choose_split(inst, split or project.param("compare.train.split"), where,
                               fall_back=smoke and split is None)
    label_df = None
    if labels is not None or arm == "maintained":
        label_df = read_label_file(labels or project.maintained)
    return ArmData(build_arm_dataset(inst, label_df), len(inst), note)


@dataclass
class TrainParams:
    """``compare.train`` of the project's parameters (values: ``defaults.yaml`` / ``params.yaml``)."""

    seed: int
    learning_rate: float
    beta: float  # KL coefficient
    num_generations: int  # group size G
    max_completion_length: int
    temperature: float
    top_p: float
    format_weight: float  # lambda_f of Eq. 2
    prompts_per_step: int  # distinct (note, question) pairs per optimizer step
    per_device_train_batch_size: int  # completions per forward/backward pass on one device
    max_steps: int
    scale_rewards: str  # "none": no reward standardisation (paper: unbiased advantages)
    loss_type: str  # "dr_grpo": no length normalisation
    lr_scheduler_type: str
    bf16: bool
    activation_checkpointing: bool  # recompute activations in backward: less memory
    logging_steps: int
    save_steps: int
    output_dir: str
    split: str  # split of the instances to train on (used by `compare train`)
    smoke: dict[str, Any]

    @classmethod
    def from_dict(cls, params: dict[str, Any] | None) -> "TrainParams":
        params = dict(params or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ValueError(f"compare.train: unknown key(s) {unknown}; known keys are {sorted(known)}")
        missing = sorted(known - set(params))
        if missing:
            raise ValueError(f"compare.train: missing key(s) {missing} (take the section from the project)")
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


SMOKE_KEYS = ("prompts", "max_prompt_chars", "prompts_per_step", "num_generations", "per_device_train_batch_size",
              "max_completion_length", "max_steps", "answer_bias")


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
    for piece in SPECIAL_TOKENS + ["<answer>", "</answer>"] + chars:
        vocab.setdefault(piece, len(vocab))
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
    # optimizer steps skipped as unsafe (see scoring/safe_grpo.py): total, per reason, and which steps
    skipped_steps: dict[str, Any] = field(default_factory=dict)
    activation_checkpointing: bool | None = None  # whether the model reported it enabled during training

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, default=str)


def _import_training():
    try:
        import torch  # noqa: F401
        import trl
        from trl.trainer.callbacks import RichProgressCallback
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(
            f"training needs the 'train' extra (torch, transformers, trl): pip install -e '.[train]' ({exc})"
        ) from exc
    return trl, RichProgressCallback


@dataclass
class _Setup:
    out: Path
    dataset: Any
    tokenizer: Any
    model_id: str
    generation_kwargs: dict[str, Any] | None


def _smoke_setup(p: TrainParams, arm_dataset, output_dir: str | os.PathLike | None) -> _Setup:
    """A tiny random model over a character tokenizer; shrinks ``p`` to the smoke settings."""
    unknown = sorted(set(p.smoke) - set(SMOKE_KEYS))
    missing = sorted(set(SMOKE_KEYS) - set(p.smoke))
    if unknown or missing:
        raise ValueError(f"compare.train.smoke: unknown key(s) {unknown}, missing key(s) {missing}; "
                         f"known: {sorted(SMOKE_KEYS)}")
    s = p.smoke
    out = Path(output_dir) if output_dir else Path(tempfile.mkdtemp(prefix="grpo-smoke-"))
    dataset = _smoke_dataset(arm_dataset, s["prompts"], s["max_prompt_chars"])
    tokenizer = build_char_tokenizer([m["content"] for prompt in dataset["prompt"] for m in prompt])
    model = build_tiny_model(tokenizer, seed=p.seed)
    init_dir = out / "init-model"
    model.save_pretrained(init_dir)
    tokenizer.save_pretrained(init_dir)
    for name in ("num_generations", "prompts_per_step", "per_device_train_batch_size", "max_completion_length",
                 "max_steps"):
        setattr(p, name, s[name])
    p.bf16 = False
    p.activation_checkpointing = False
    p.save_steps = max(p.save_steps, p.max_steps + 1)
    p.validate()
    return _Setup(out, dataset, tokenizer, str(init_dir), smoke_generation_kwargs(tokenizer, s["answer_bias"]))


def smoke_generation_kwargs(tokenizer, answer_bias: float) -> dict[str, Any] | None:
    """The smoke model's generation bias towards the ``<answer>`` tags and digits (``answer_bias``)."""
    bias_tokens = ["<answer>", "</answer>", *"0123456789"]
    return {"sequence_bias": [[[tokenizer.convert_tokens_to_ids(t)], float(answer_bias)]
                              for t in bias_tokens]} if answer_bias else None


def _checkpoint_setup(arm_dataset, model_path: str | os.PathLike | None,
                      output_dir: str | os.PathLike | None) -> _Setup:
    from transformers import AutoTokenizer

    if model_path is None:
        raise ValueError("a model checkpoint directory is required (or use smoke=True)")
    if output_dir is None:
        raise ValueError("an output directory is required (the CLI uses compare.train.output_dir/ARM)")
    model_dir = Path(model_path)
    if not (model_dir / "config.json").is_file():
        raise ValueError(f"{model_dir}: not a local model checkpoint (no config.json in that directory)")
    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    if tokenizer.chat_template is None:
        raise ValueError(f"{model_dir}: the tokenizer has no chat template; the prompts are chat messages")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return _Setup(Path(output_dir), arm_dataset, tokenizer, str(model_dir), None)


def _grpo_config(trl, p: TrainParams, setup: _Setup, smoke: bool):
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return trl.GRPOConfig(
        output_dir=str(setup.out),
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
        generation_kwargs=setup.generation_kwargs,
        per_device_train_batch_size=p.per_device_train_batch_size,
        gradient_accumulation_steps=p.gradient_accumulation(world),
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


def run_grpo(arm_dataset, model_path: str | os.PathLike | None, params: dict[str, Any] | TrainParams,
             smoke: bool = False, output_dir: str | os.PathLike | None = None,
             progress: bool = True, save_steps: int | None = None) -> TrainResult:
    """Train with GRPO on ``arm_dataset`` and save the policy; return what happened.

    ``arm_dataset``: a ``datasets.Dataset`` with the columns of :data:`DATASET_COLUMNS`.
    ``model_path``: a local checkpoint directory (ignored, and may be ``None``, when ``smoke``).
    ``params``: the ``compare.train`` section (``project.section("compare.train")``) or its
    :class:`TrainParams`. ``output_dir``: where checkpoints, the final model and
    ``train_result.json`` go (required unless ``smoke``: then a fresh temporary directory by default).
    ``save_steps`` overrides ``compare.train.save_steps`` (also in a smoke run, which otherwise
    saves no intermediate checkpoint): ``compare report`` evaluates every ``checkpoint-N``.
    """
    p = TrainParams.from_dict(asdict(params) if isinstance(params, TrainParams) else params)
    check_dataset(arm_dataset)
    trl, progress_callback = _import_training()
    from medcalc_maintained.grading.reward import make_trl_reward

    setup = _smoke_setup(p, arm_dataset, output_dir) if smoke else _checkpoint_setup(arm_dataset, model_path, output_dir)
    if save_steps is not None:
        p.save_steps = save_steps
        p.validate()  # the override is checked like the params it replaces
    from medcalc_maintained.scoring.safe_grpo import SafeGRPOTrainer

    trainer = SafeGRPOTrainer(
        model=setup.model_id,
        reward_funcs=make_trl_reward(p.format_weight),
        args=_grpo_config(trl, p, setup, smoke),
        train_dataset=setup.dataset,
        processing_class=setup.tokenizer,
        callbacks=[progress_callback()] if progress else None,
    )
    trainer.train()
    final = setup.out / "final-model"
    trainer.save_model(str(final))
    setup.tokenizer.save_pretrained(str(final))
    history = [dict(h) for h in trainer.state.log_history]
    rewards = [float(h["reward"]) for h in history if "reward" in h]
    result = TrainResult(output_dir=str(setup.out), model_dir=str(final), steps=int(trainer.state.global_step),
                         rewards=rewards, log_history=history, params=asdict(p),
                         skipped_steps=trainer.skips.as_dict(),
                         activation_checkpointing=trainer.activation_checkpointing)
    (setup.out / "train_result.json").write_text(result.to_json(), encoding="utf-8")
    return result
