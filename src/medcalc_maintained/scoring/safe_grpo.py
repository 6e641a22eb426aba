"""A ``GRPOTrainer`` that refuses optimizer steps which cannot help and may hurt.

Two kinds of batch are skipped (every gradient is dropped before ``optimizer.step()``, so AdamW
leaves every weight, and its moment estimates, exactly as they were):

* ``zero_advantage``: every completion of the optimizer step's batch has advantage 0 (each group's
  rewards are all equal, e.g. a base model that never writes an ``<answer>`` tag scores 0 on every
  rollout). The policy-gradient term is then zero; what is left is at most the KL term, and on the
  first step of a bf16 run its gradient came out as NaN.
* ``nonfinite_grad``: some gradient entry is NaN or +-inf after the backward passes. One such
  step writes NaN into the weights, and the next generation fails with "probability tensor contains
  either inf, nan or element < 0".

Hooks used (both documented extension points of ``transformers.Trainer``): ``compute_loss`` is
overridden to see each micro-batch's ``advantages`` (TRL's prepared inputs), and a
``TrainerCallback.on_pre_optimizer_step`` drops the gradients. The learning-rate scheduler still
advances (``compare.train.lr_scheduler_type`` is ``constant``) and ``global_step`` still counts the
skipped step, so a skipped step is visible at its step number in the log.

Each skip is logged (a warning naming the step and the reason) and counted: the trainer's log
records carry ``skipped_steps`` (cumulative) and ``skipped/zero_advantage`` /
``skipped/nonfinite_grad``; :attr:`SafeGRPOTrainer.skips` is what ``train_result.json`` reports.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, cast

import torch
import trl
from transformers import TrainerCallback

log = logging.getLogger(__name__)

SKIP_REASONS = ("zero_advantage", "nonfinite_grad")


@dataclass
class StepSkips:
    """The optimizer steps that were skipped: ``[(step, reason), ...]`` (step numbers from 1)."""

    steps: list[tuple[int, str]] = field(default_factory=list)

    def count(self, reason: str | None = None) -> int:
        return sum(1 for _, r in self.steps if reason is None or r == reason)

    def as_dict(self) -> dict[str, Any]:
        return {"total": self.count(), **{r: self.count(r) for r in SKIP_REASONS},
                "steps": [{"step": s, "reason": r} for s, r in self.steps]}


def gradients_finite(model: torch.nn.Module) -> bool:
    """True when every parameter gradient that exists is free of NaN and inf."""
    flags = [torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None]
    return bool(torch.stack(flags).all()) if flags else True


class _SkipUnsafeSteps(TrainerCallback):
    def __init__(self, trainer: "SafeGRPOTrainer"):
        self.trainer = trainer

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        # Trainer.train() turns activation checkpointing on just before this event; check it took
        enabled = bool(getattr(model, "is_activation_checkpointing", False))
        self.trainer.activation_checkpointing = enabled
        if args.activation_checkpointing and not enabled:
            raise RuntimeError("activation checkpointing was requested but the model does not report it enabled "
                               f"({type(model).__name__}); training would need far more memory")
        return control

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        self.trainer._decide_step()
        return control


class SafeGRPOTrainer(trl.GRPOTrainer):
    """``trl.GRPOTrainer`` that skips (and counts) zero-advantage and non-finite-gradient steps."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.skips = StepSkips()
        self._has_signal = False  # some advantage of the current optimizer step's batch is non-zero
        self.activation_checkpointing: bool | None = None  # what the model reported when training began
        self.add_callback(_SkipUnsafeSteps(self))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.model.training:
            adv = inputs.get("advantages")
            if adv is None or bool(torch.any(adv != 0)):
                self._has_signal = True
        return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                    num_items_in_batch=num_items_in_batch)

    def _decide_step(self) -> None:
        signal = torch.tensor(1.0 if self._has_signal else 0.0, device=self.accelerator.device)
        # every process must take the same decision: skip only when no process saw a signal
        signal = self.accelerator.reduce(signal, reduction="sum")
        self._has_signal = False
        model = cast(torch.nn.Module, self.model)  # the Trainer's model, set before its first step
        reason = None
        if float(signal) == 0.0:
            reason = "zero_advantage"
        elif not gradients_finite(model):
            reason = "nonfinite_grad"
        if reason is None:
            return
        for p in model.parameters():
            p.grad = None  # AdamW skips a parameter without a gradient: no update, no weight decay
        step = self.state.global_step + 1
        self.skips.steps.append((step, reason))
        log.warning("GRPO step %d: optimizer step skipped (%s)", step,
                    "every advantage is zero" if reason == "zero_advantage" else "non-finite gradient")

    def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
        if "loss" in logs:  # a training-step record (not the final summary)
            logs["skipped_steps"] = self.skips.count()
            for r in SKIP_REASONS:
                logs[f"skipped/{r}"] = self.skips.count(r)
        super().log(logs, start_time)
