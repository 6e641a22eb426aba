"""`dvc metrics show` prints a readable table: every file declared under `metrics:` in dvc.yaml
holds only a few headline scalars (flat or one level nested); the lists and tables are in the
stages' plain JSON outputs. Runs the real DVC on the committed outputs of this checkout
(`metrics show` only reads)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.support.paths import ROOT

SCALARS = (int, float, bool, str)
MAX_VALUES = 10  # headline numbers per metrics file


def _declared() -> dict[str, str]:
    """Every metrics file of dvc.yaml, path resolved from params.yaml, by stage."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    params = yaml.safe_load((ROOT / "params.yaml").read_text())

    def resolve(text: str) -> str:
        while "${" in text:
            start = text.index("${")
            end = text.index("}", start)
            value = params
            for part in text[start + 2:end].split("."):
                value = value[part]
            text = text[:start] + str(value) + text[end + 1:]
        return text

    out = {}
    for name, stage in stages.items():
        for entry in stage.get("metrics", []):
            path = next(iter(entry)) if isinstance(entry, dict) else entry
            out[resolve(path)] = name
    return out


def _problems(metrics: dict, where: str) -> list[str]:
    """Values that are not scalars, and nesting deeper than one level."""
    bad = []
    for key, value in metrics.items():
        if isinstance(value, dict):
            bad += [f"{where}: {key}.{k} is {type(v).__name__}" for k, v in value.items() if not isinstance(v, SCALARS)]
        elif not isinstance(value, SCALARS):
            bad.append(f"{where}: {key} is {type(value).__name__}")
    return bad


def _leaves(metrics: dict) -> int:
    return sum(len(v) if isinstance(v, dict) else 1 for v in metrics.values())


def test_every_declared_metrics_file_holds_a_few_scalars():
    declared = _declared()
    assert len(declared) == 10 and all(Path(p).name == "metrics.json" for p in declared)
    bad = []
    for path, stage in declared.items():
        metrics = json.loads((ROOT / path).read_text())
        assert isinstance(metrics, dict) and metrics, path
        bad += _problems(metrics, f"{path} ({stage})")
        assert _leaves(metrics) <= MAX_VALUES, f"{path}: {_leaves(metrics)} values"
    assert bad == []


def test_headline_numbers_are_the_reports_own():
    """The metric files repeat values of the full reports (published figures where there are some)."""
    agree = json.loads((ROOT / "data/reports/metrics.json").read_text())
    report = json.loads((ROOT / "data/reports/physician_agreement.json").read_text())
    # published on the 50 physician-labelled rows (../shared/README.md): 10/50 and 37/50, sMAPE 72.7 and 20.1
    assert agree["rows"] == 50 and agree["agree"]["original"] == 10 and agree["agree"]["recomputed"] == 37
    assert round(agree["smape"]["original"], 1) == 72.7 and round(agree["smape"]["recomputed"], 1) == 20.1
    assert agree["agree"]["maintained"] == report["label_sets"]["maintained"]["agree"]
    rec = json.loads((ROOT / "data/audit/metrics.json").read_text())
    full = json.loads((ROOT / "data/audit/recompute_summary.json").read_text())
    assert rec["rows"] == 1047 and rec["detector"]["precision"] == full["detector"]["precision"]
    assert rec["checks"]["recall"] == full["checks"]["combined"]["recall"]
    sim = json.loads((ROOT / "data/triage/simulate/metrics.json").read_text())
    summary = json.loads((ROOT / "data/triage/simulate/summary.json").read_text())
    assert sim["brier"] == summary["calibration"]["brier"] < sim["brier_base_rate"]
    noise = json.loads((ROOT / "data/compare/metrics.json").read_text())
    flips = json.loads((ROOT / "data/compare/reward_noise.json").read_text())
    assert noise["flip_rate"] == flips["flip_rate"] and noise["rows"] == 887
    ev = json.loads((ROOT / "data/compare/evaluation/metrics.json").read_text())
    full_ev = json.loads((ROOT / "data/compare/evaluation/evaluation.json").read_text())
    assert ev["accuracy"] == {a["label_set"]: a["accuracy"] for a in full_ev["accuracy"]}
    assert ev["flips"] == full_ev["flips"]
