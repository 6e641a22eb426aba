"""A memory model of one GRPO training process (``compare train``, TRL ``GRPOTrainer``, one device).

:func:`grpo_memory` returns the bytes of each term and their sum in GiB. It is an estimate for
planning (which micro-batch, whether checkpointing is needed), not a bound: allocator
fragmentation, CUDA context and temporary buffers of kernels come on top.

Symbols: ``P`` parameters, ``L`` layers, ``h`` hidden size, ``kv`` = key/value heads x head
dimension, ``V`` vocabulary, ``N`` prompts per generation batch on this device, ``G`` completions
per prompt, ``Tp``/``Tc`` prompt/completion tokens (the longest in the batch: batches are padded),
``m`` = ``per_device_train_batch_size`` (completions per forward/backward pass), ``b`` bytes per
value of the weights (4 fp32, 2 bf16), ``a`` bytes per activation (2 under bf16 autocast, else 4).

Terms:

* ``weights = P*b``: the policy.
* ``reference = P*b`` when ``beta > 0``: TRL keeps a frozen copy for the KL term.
* ``gradients = P*b``: one gradient per parameter, in the parameter's dtype.
* ``optimizer = 2*P*b``: AdamW's two moment estimates, in the parameter's dtype.
* ``kv_cache = N*G*(Tp+Tc) * 2*L*kv * a``: generation samples the N*G completions together; every
  token of every sequence keeps one key and one value vector of width ``kv`` in each layer.
* ``activations``: one pass over ``m`` sequences of ``T = Tp+Tc`` tokens. With activation
  checkpointing only each layer's input is kept (``L*m*T*h*a``) plus one layer's full set while it is
  recomputed in backward (``k*m*T*h*a``); without it every layer keeps its full set
  (``L*k*m*T*h*a``). ``k`` = :data:`ACTIVATION_VECTORS_PER_LAYER` hidden-sized vectors per token and
  layer (attention inputs/outputs, the normalisations, and the gated MLP's intermediates counted in
  units of ``h``): a rule of thumb for Llama-style blocks, not a measurement.
* ``logits``: with TRL's fused LM head (``fused=True``) the log-probabilities are computed tile by
  tile: one fp32 tile of ``min(m*Tc, 4096) x min(V, 32768)`` values (TRL's token and vocabulary tile
  widths), twice (forward buffer and its gradient). Without it the full ``m*Tc x V`` fp32 logits are
  materialised, twice (logits and log-softmax/gradient).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

GIB = 1024 ** 3
ACTIVATION_VECTORS_PER_LAYER = 16
TOKEN_TILE = 4096  # trl.kernels.chunked_logprob.TOKEN_CHUNK_SIZE
VOCAB_TILE = 32768  # trl.trainer.utils._CHUNKED_LOGPROB_CHUNK_SIZE


@dataclass
class MemoryEstimate:
    weights: int
    reference: int
    gradients: int
    optimizer: int
    kv_cache: int
    activations: int
    logits: int

    @property
    def total_bytes(self) -> int:
        return sum(asdict(self).values())

    @property
    def gib(self) -> float:
        return self.total_bytes / GIB


def grpo_memory(*, params: int, layers: int, hidden: int, kv_dim: int, vocab: int, prompts: int,
                generations: int, prompt_tokens: int, completion_tokens: int, micro_batch: int,
                weight_bytes: int = 4, activation_bytes: int = 4, beta: float = 1e-3,
                checkpointing: bool = True, fused: bool = True) -> MemoryEstimate:
    """The terms of the module docstring, in bytes (``.gib`` for the total in GiB)."""
    for name, v in (("params", params), ("layers", layers), ("hidden", hidden), ("kv_dim", kv_dim),
                    ("vocab", vocab), ("prompts", prompts), ("generations", generations),
                    ("completion_tokens", completion_tokens), ("micro_batch", micro_batch)):
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    p_b = params * weight_bytes
    t = prompt_tokens + completion_tokens
    a = activation_bytes
    k = ACTIVATION_VECTORS_PER_LAYER
    per_layer_input = micro_batch * t * hidden * a
    activations = (layers * per_layer_input + k * per_layer_input) if checkpointing else layers * k * per_layer_input
    scored = micro_batch * completion_tokens
    logits = 2 * 4 * (min(scored, TOKEN_TILE) * min(vocab, VOCAB_TILE) if fused else scored * vocab)
    return MemoryEstimate(
        weights=p_b, reference=p_b if beta > 0 else 0, gradients=p_b, optimizer=2 * p_b,
        kv_cache=prompts * generations * t * 2 * layers * kv_dim * a,
        activations=activations, logits=logits,
    )
