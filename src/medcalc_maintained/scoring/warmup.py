"""A declared format warm-up of a small model before both GRPO arms (``make gpu-check``).

SmolLM2-135M-Instruct never writes an ``<answer>`` tag by itself, so every reward is 0, every GRPO
group has zero variance and every step is skipped: nothing trains. Before both arms the model is
therefore fine-tuned for a few supervised steps on *synthetic* cases, so that it answers in the
format the reward reads; both arms then start from that one checkpoint and train on-policy.

What the warm-up sees, and why no label of either version leaks into it:

* **Cases**: for each of the reference calculators (``calculators/``), ``per_calculator`` made-up
  patients. A case takes the *shape* of a training row's ``Relevant Entities`` (which inputs, their
  units) and draws new values: each number scaled by a factor in [0.7, 1.3] (kept whole when it was
  whole), each yes/no input drawn at random, other inputs kept. Its answer is the reference
  calculator's value for those made-up inputs; a case the calculator cannot compute, or whose
  inputs are outside the plausible range, is drawn again. The rows' notes and labels are never read.
* **Prompt**: the same system prompt and layout as every training row (``grading/prompts.py``), with
  a short made-up note listing the inputs (``age: 61 years. Cough Absent: no. ...``) and the
  calculator's own question text.
* **Completion**: ``<answer>VALUE</answer>`` alone. With ``prompt: stepwise`` (the prompt variant of
  ``grading/prompts.py`` that asks for the inputs used), the prompt is that variant's and the completion
  first states the made-up inputs as the variant asks, ``<inputs>{...}</inputs>``, then the answer: the
  warm-up teaches the block's form on made-up notes that list every input, never what a real note says
  (``compare.stepwise_warmup``: what ``medcalc-maintained model smollm2-stepwise`` makes, to show
  ``--steps`` on a real model).

Training: AdamW on the completion tokens only, the ``train_layers`` top decoder layers and the final
norm trainable (embeddings, the tied LM head and the other layers frozen), fixed seed and case order.
:func:`answer_stats` measures what the warm-up is for: the share of prompts answered with a parsable
``<answer>`` (greedy) and the share of GRPO groups whose rewards are not all equal.

Needs the ``train`` extra; imported only by the GPU check and its benchmark, never by a DVC stage.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.grading.prompts import VARIANTS, build_prompt, check_variant

SCALE = (0.7, 1.3)  # range of the factor a case's numbers are scaled by
MAX_TRIES = 20  # draws per case before a calculator is given up for that case


@dataclass
class WarmupParams:
    """``compare.warmup`` of the project's parameters (values: ``defaults.yaml`` / ``params.yaml``)."""

    per_calculator: int  # synthetic cases per calculator
    steps: int  # optimizer steps
    batch_size: int  # cases per step
    learning_rate: float
    train_layers: int  # top decoder layers trained (with the final norm)
    seed: int
    prompt: str = "default"  # the prompt variant of the cases (grading/prompts.py VARIANTS)

    @classmethod
    def from_dict(cls, params: dict[str, Any]) -> "WarmupParams":
        known = {f.name for f in fields(cls)}
        optional = {"prompt"}
        if not known - optional <= set(params) <= known:
            raise ValueError(f"compare.warmup: unknown key(s) {sorted(set(params) - known)}, missing key(s) "
                             f"{sorted(known - optional - set(params))}")
        p = cls(**params)
        if p.prompt not in VARIANTS:
            raise ValueError(f"compare.warmup.prompt must be one of {', '.join(VARIANTS)}, got {p.prompt!r}")
        for name in ("per_calculator", "steps", "batch_size", "train_layers"):
            v = getattr(p, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"compare.warmup.{name} must be a positive integer, got {v!r}")
        if not isinstance(p.learning_rate, (int, float)) or not p.learning_rate > 0:
            raise ValueError(f"compare.warmup.learning_rate must be positive, got {p.learning_rate!r}")
        return p


@dataclass
class Case:
    calculator_id: int
    prompt: list[dict[str, str]]
    answer: str  # the reference calculator's value for the made-up inputs
    output_type: str
    inputs: dict[str, Any] | None = None  # the made-up inputs, stated before the answer (prompt stepwise)

    @property
    def completion(self) -> str:
        if self.inputs is None:
            return f"<answer>{self.answer}</answer>"
        block = json.dumps(self.inputs, ensure_ascii=False)
        return f"<inputs>{block}</inputs>\n<answer>{self.answer}</answer>"


def _perturb(value: Any, rng: random.Random) -> Any:
    if isinstance(value, bool):
        return rng.random() < 0.5
    if isinstance(value, list) and value and isinstance(value[0], (int, float)) and not isinstance(value[0], bool):
        x = value[0] * rng.uniform(*SCALE)
        whole = float(value[0]).is_integer()
        return [int(round(x)) if whole else round(x, 1 if abs(x) >= 1 else 2), *value[1:]]
    return value


def _render(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return f"{key}: {'yes' if value else 'no'}."
    if isinstance(value, list):
        return f"{key}: {' '.join(str(v) for v in value)}."
    return f"{key}: {value}."


def synthetic_cases(instances: pd.DataFrame, per_calculator: int, seed: int,
                    prompt: str = "default") -> list[Case]:
    """``per_calculator`` made-up cases for every calculator of ``instances`` (see the module doc):
    the rows give the inputs' names and units and the question text, never a note or a label.
    ``prompt`` is the prompt variant; ``stepwise`` cases state their inputs before the answer."""
    from medcalc_maintained.calculators import compute

    stepwise = check_variant(prompt) == "stepwise"

    rng = random.Random(seed)
    cases = []
    inst = instances.sort_values("uid", kind="stable")
    for cid, rows in inst.groupby(inst["Calculator ID"].astype(int), sort=True):
        shapes = [(entities_or_empty(e), str(q)) for e, q in zip(rows["Relevant Entities"], rows["Question"])]
        shapes = [s for s in shapes if s[0]]
        otype = str(rows["Output Type"].iloc[0])
        for _ in range(per_calculator if shapes else 0):
            for _try in range(MAX_TRIES):
                entities, question = rng.choice(shapes)
                made_up = {k: _perturb(v, rng) for k, v in entities.items()}
                try:
                    result = compute(int(cid), made_up)
                except Exception:  # a made-up input a calculator rejects: draw again
                    continue
                if result.value is None or result.implausible:
                    continue
                note = " ".join(_render(k, v) for k, v in made_up.items())
                cases.append(Case(int(cid), build_prompt(note, question, prompt, int(cid)), result.value, otype,
                                  made_up if stepwise else None))
                break
    return cases


@dataclass
class WarmupResult:
    model_dir: str
    cases: int
    calculators: int
    steps: int
    seconds: float
    losses: list[float] = field(default_factory=list)  # mean completion-token loss per step
    params: dict[str, Any] = field(default_factory=dict)
    what: str = ""  # one sentence for reports: what the warm-up was

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def describe(p: WarmupParams, cases: int, calculators: int) -> str:
    what = (f"{p.steps} supervised steps (batch {p.batch_size}, lr {p.learning_rate:g}, top {p.train_layers} "
            f"layers) on {cases} synthetic cases of {calculators} reference calculators")
    if p.prompt == "stepwise":
        return (f"stepwise format warm-up: {what} (made-up inputs, prompt variant stepwise, completion "
                "'<inputs>{...}</inputs> <answer>VALUE</answer>' stating the made-up inputs); no note or label is read")
    return (f"format warm-up before both arms: {what} (made-up inputs, completion '<answer>VALUE</answer>'); "
            "no label of either version is read; both arms start from that checkpoint")


def warm_up(model_dir: str | Path, cases: list[Case], out: str | Path, p: WarmupParams,
            device: str | None = None, progress: Callable[[str, int, int], None] | None = None) -> WarmupResult:
    """Fine-tune ``model_dir`` on ``cases`` (module doc) and save the model and tokenizer to ``out``
    (bf16, like the converted checkpoint) with ``warmup.json``; return what happened. ``progress``
    is told ``(phase, done, total)`` after each batch of the frozen layers and each step."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not cases:
        raise ValueError("warm-up: no synthetic case")
    start = time.perf_counter()
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(p.seed)
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.float32)
    model.to(device).train()  # type: ignore[arg-type]  # transformers types .to as @wraps(Module.to): self twice
    layers = model.model.layers
    if p.train_layers > len(layers):
        raise ValueError(f"compare.warmup.train_layers = {p.train_layers}: the model has {len(layers)} layers")
    for param in model.parameters():
        param.requires_grad_(False)
    trainable = [*layers[len(layers) - p.train_layers:], model.model.norm]
    params = [q for m in trainable for q in m.parameters()]
    for q in params:
        q.requires_grad_(True)
    opt = torch.optim.AdamW(params, lr=p.learning_rate, weight_decay=0.0)
    first = len(layers) - p.train_layers
    encoded = _encode(tok, cases)
    # the frozen layers' output never changes: computed once per case, the steps run only the top layers
    cached = _frozen_hidden(model, encoded, first, p.batch_size, device, progress)
    order = list(range(len(cases)))
    random.Random(p.seed).shuffle(order)
    losses = []
    for step in range(p.steps):
        batch = [order[(step * p.batch_size + i) % len(order)] for i in range(p.batch_size)]
        hidden, mask, labels = _pad([cached[i] for i in batch], [encoded[i] for i in batch], device)
        loss = _top_loss(model, hidden, mask, labels, first)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(round(float(loss.detach()), 4))
        if not math.isfinite(losses[-1]):
            raise RuntimeError(f"warm-up step {step + 1}: loss {losses[-1]}")
        if progress:
            progress("steps", step + 1, p.steps)
    out = Path(out)
    model.to(torch.bfloat16).save_pretrained(out)  # type: ignore[arg-type]  # .to(dtype), typed as above
    tok.save_pretrained(out)
    n_calc = len({c.calculator_id for c in cases})
    result = WarmupResult(str(out), len(cases), n_calc, p.steps, round(time.perf_counter() - start, 1), losses,
                          asdict(p), describe(p, len(cases), n_calc))
    (out / "warmup.json").write_text(result.to_json() + "\n", encoding="utf-8")
    return result


def _encode(tok, cases: list[Case]) -> list[tuple[list[int], list[int]]]:
    """(input ids, labels) of each case: the chat prompt, then the completion and end of turn; the
    labels are -100 on the prompt (the loss is on the completion only)."""
    out = []
    for c in cases:
        prompt = tok.apply_chat_template(c.prompt, tokenize=False, add_generation_prompt=True)
        a = tok(prompt, add_special_tokens=False)["input_ids"]
        b = tok(c.completion + tok.eos_token, add_special_tokens=False)["input_ids"]
        out.append((a + b, [-100] * len(a) + b))
    return out


def _frozen_hidden(model, encoded, first: int, batch_size: int, device,
                   progress: Callable[[str, int, int], None] | None = None) -> list[Any]:
    """The input of decoder layer ``first`` for each case (right-padded batches, cut back to length)."""
    import torch

    out = []
    with torch.no_grad():
        for i in range(0, len(encoded), batch_size):
            chunk = encoded[i:i + batch_size]
            width = max(len(ids) for ids, _ in chunk)
            ids = torch.tensor([x + [0] * (width - len(x)) for x, _ in chunk], device=device)
            mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in chunk], device=device)
            hs = model.model(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[first]
            out += [hs[j, :len(x)].clone() for j, (x, _) in enumerate(chunk)]
            if progress:
                progress("frozen layers", len(out), len(encoded))
    return out


def _pad(hidden: list[Any], encoded, device):
    import torch

    width = max(h.shape[0] for h in hidden)
    dim = hidden[0].shape[1]
    h = torch.zeros(len(hidden), width, dim, dtype=hidden[0].dtype, device=device)
    mask = torch.zeros(len(hidden), width, dtype=torch.long, device=device)
    labels = torch.full((len(hidden), width), -100, dtype=torch.long, device=device)
    for j, (x, (_, y)) in enumerate(zip(hidden, encoded)):
        h[j, :x.shape[0]] = x
        mask[j, :x.shape[0]] = 1
        labels[j, :len(y)] = torch.tensor(y, device=device)
    return h, mask, labels


def _top_loss(model, hidden, mask, labels, first: int):
    """The causal LM loss of the completion tokens, running only decoder layers ``first..`` (as
    ``LlamaModel.forward`` of transformers 5.23 does for every layer), the final norm and the LM head
    at the positions that predict a completion token."""
    import torch
    from transformers.masking_utils import create_causal_mask

    base = model.model
    pos = torch.arange(hidden.shape[1], device=hidden.device).unsqueeze(0)
    causal = create_causal_mask(config=base.config, inputs_embeds=hidden, attention_mask=mask,
                                past_key_values=None, position_ids=pos)
    pe = base.rotary_emb(hidden, position_ids=pos)
    for layer in base.layers[first:]:
        hidden = layer(hidden, attention_mask=causal, position_embeddings=pe, position_ids=pos)
    hidden = base.norm(hidden)
    target = labels[:, 1:]
    keep = target != -100
    logits = model.lm_head(hidden[:, :-1][keep])
    return torch.nn.functional.cross_entropy(logits.float(), target[keep])


# ------------------------------------------------------------------------------------ measuring


def _generate(model, tok, texts: list[str], *, max_new_tokens: int, sample: bool, num_return: int,
              temperature: float, top_p: float, batch_size: int, seed: int) -> list[str]:
    import torch

    out: list[str] = []
    device = next(model.parameters()).device
    torch.manual_seed(seed)
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            enc = tok(texts[i:i + batch_size], return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            kw: dict[str, Any] = ({"do_sample": True, "temperature": temperature, "top_p": top_p, "top_k": 0}
                                  if sample else {"do_sample": False})
            gen = model.generate(**enc, max_new_tokens=max_new_tokens, num_return_sequences=num_return,
                                 pad_token_id=tok.pad_token_id, **kw)
            out += tok.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    return out


def load_for_generation(model_dir: str | Path):
    """Model (bf16 on a GPU, float32 on CPU, eval mode) and left-padding tokenizer of a checkpoint."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    cuda = torch.cuda.is_available()
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=torch.bfloat16 if cuda else torch.float32)
    model.to("cuda" if cuda else "cpu").eval()  # type: ignore[arg-type]  # as in scoring/report.py
    return model, tok


def greedy_parsable(model_dir: str | Path, prompts: list[list[dict[str, str]]], output_types: list[str], *,
                    max_new_tokens: int, batch_size: int = 8) -> tuple[int, list[str]]:
    """How many of ``prompts`` the checkpoint answers (greedy) with a parsable ``<answer>``, and the
    completions (prompts are batched shortest first to keep padding small)."""
    from medcalc_maintained.grading.reward import score

    model, tok = load_for_generation(model_dir)
    texts = [tok.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts]
    order = sorted(range(len(texts)), key=lambda i: len(tok(texts[i], add_special_tokens=False)["input_ids"]))
    done = _generate(model, tok, [texts[i] for i in order], max_new_tokens=max_new_tokens, sample=False,
                     num_return=1, temperature=1.0, top_p=1.0, batch_size=batch_size, seed=0)
    completions = [""] * len(texts)
    for i, c in zip(order, done):
        completions[i] = c
    parsable = sum(score(c, "0", "0", "0", t) > 0 for c, t in zip(completions, output_types))
    return parsable, completions


def _sample_group(model, tok, text: str, n: int, *, max_new_tokens: int, temperature: float,
                  top_p: float) -> list[str]:
    """``n`` samples of one prompt, its prefix encoded once and its cache copied ``n`` times (what
    ``num_return_sequences`` would do with ``n`` prefills)."""
    import torch
    from transformers import DynamicCache

    device = next(model.parameters()).device
    ids = tok(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(device)
    cache = DynamicCache(config=model.config)
    with torch.no_grad():
        model(input_ids=ids[:, :-1], past_key_values=cache, use_cache=True)
        cache.batch_repeat_interleave(n)
        gen = model.generate(input_ids=ids.repeat(n, 1), past_key_values=cache, max_new_tokens=max_new_tokens,
                             do_sample=True, temperature=temperature, top_p=top_p, top_k=0,
                             pad_token_id=tok.pad_token_id)
    return tok.batch_decode(gen[:, ids.shape[1]:], skip_special_tokens=True)


def group_rollouts(model_dir: str | Path, prompts: list[list[dict[str, str]]], *, num_generations: int,
                   max_new_tokens: int, temperature: float, top_p: float, seed: int) -> list[list[str]]:
    """One GRPO step's rollouts without the update: ``num_generations`` samples of each prompt at
    the training temperature and top-p (seeded)."""
    import torch

    model, tok = load_for_generation(model_dir)
    torch.manual_seed(seed)
    return [_sample_group(model, tok, tok.apply_chat_template(p, tokenize=False, add_generation_prompt=True),
                          num_generations, max_new_tokens=max_new_tokens, temperature=temperature, top_p=top_p)
            for p in prompts]


def nonzero_std_groups(groups: list[list[str]], dataset, format_weight: float) -> tuple[int, float]:
    """Groups whose training rewards (``grading.reward.score`` against ``dataset``'s labels) are not
    all equal, and the mean reward: GRPO skips a group of equal rewards (zero advantage)."""
    from medcalc_maintained.grading.reward import score

    nonzero, total, count = 0, 0.0, 0
    for group, row in zip(groups, dataset):
        r = [score(c, row["ground_truth"], row["lower"], row["upper"], row["output_type"], format_weight)
             for c in group]
        nonzero += len(set(r)) > 1
        total += sum(r)
        count += len(r)
    return nonzero, total / max(count, 1)


def heldout_sample(heldout: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` held-out rows of ``n`` different calculators (drawn with ``seed``), for each the row
    whose note has the median length of that calculator's rows (ties: the lower uid)."""
    calcs = sorted(heldout["Calculator ID"].astype(int).unique())
    if n > len(calcs):
        raise ValueError(f"{n} calculators asked, the held-out rows have {len(calcs)}")
    chosen = sorted(random.Random(seed).sample(calcs, n))
    rows = []
    for cid in chosen:
        g = heldout[heldout["Calculator ID"].astype(int) == cid].copy()
        g["_len"] = g["Patient Note"].astype(str).str.len()
        g = g.sort_values(["_len", "uid"], kind="stable").reset_index(drop=True)
        rows.append(g.iloc[(len(g) - 1) // 2].drop("_len"))
    return pd.DataFrame(rows).reset_index(drop=True)


def start_checkpoint(train: pd.DataFrame, model_dir: str | Path, out: str | Path, params: dict[str, Any],
                     device: str | None = None,
                     progress: Callable[[str, int, int], None] | None = None) -> WarmupResult:
    """The checkpoint both arms start from: :func:`synthetic_cases` shaped on the training rows
    ``train`` and :func:`warm_up` with ``compare.warmup`` (``params``); kept when ``out`` already
    holds one made with the same parameters."""
    p = WarmupParams.from_dict(params)
    done = Path(out) / "warmup.json"
    if done.is_file():
        prior = json.loads(done.read_text(encoding="utf-8"))
        if prior.get("params") == asdict(p):
            return WarmupResult(**{**prior, "seconds": 0.0, "model_dir": str(out)})
    cases = synthetic_cases(train, p.per_calculator, p.seed, p.prompt)
    return warm_up(model_dir, cases, out, p, device, progress)
