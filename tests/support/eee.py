"""Every Eval Ever (EEE) through its own package, in ``.venv-eee`` (``make harness-env H=eee``; ``make test``
builds it): its converters turn a harness's saved results into instance-level files, and its models
load what ``regrade`` writes. Tests that use it skip, saying so, when the venv is absent."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.paths import ROOT

EEE_PYTHON = ROOT / ".venv-eee" / "bin" / "python"
needs_eee = pytest.mark.skipif(not EEE_PYTHON.exists(), reason="no .venv-eee (make harness-env H=eee)")

VALIDATE = r"""
import json, sys
from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog
out = {}
for path in sys.argv[1:]:
    logs = [InstanceLevelEvaluationLog.model_validate_json(line) for line in open(path, encoding="utf-8") if line.strip()]
    out[path] = {"rows": len(logs), "correct": sum(log.evaluation.is_correct for log in logs),
                 "score": sum(log.evaluation.score for log in logs) / len(logs),
                 "tags": sorted({(log.metadata or {}).get("release_tag") for log in logs}),
                 "hashes": sorted({(log.metadata or {}).get("labels_sha256") for log in logs})}
print(json.dumps(out))
"""


def convert(harness: str, log_path: Path, out: Path, task: str | None = None) -> Path:
    """EEE's converter of ``harness`` (``lm_eval``, ``inspect``) on ``log_path``: its one instance-level file (of
    ``task``, when the run had several: EEE writes one per task, each line naming it as ``evaluation_name``)."""
    args = [str(EEE_PYTHON), "-m", f"every_eval_ever.converters.{harness}", "--log_path", str(log_path),
            "--output_dir", str(out), "--source_organization_name", "medcalc-maintained tests"]
    if harness == "lm_eval":
        args.append("--include_samples")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    files = sorted(out.rglob("*_samples.jsonl"))
    if task is not None:
        files = [f for f in files
                 if json.loads(f.read_text().splitlines()[0])["evaluation_name"].split("/")[0] == task]
    (samples,) = files
    return samples


def validate(*paths: Path) -> dict[str, dict]:
    """Every line of ``paths`` loaded by EEE's ``InstanceLevelEvaluationLog``: rows, correct, mean score,
    release tags and label hashes per file (an exception in EEE's models fails the call)."""
    proc = subprocess.run([str(EEE_PYTHON), "-c", VALIDATE, *map(str, paths)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)
