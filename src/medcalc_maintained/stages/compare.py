"""Stage ``compare``: reward noise between two releases and the two GRPO training arms (paper section 4).

* :func:`analyze` (``compare analyze``): for each row, is a policy answering the new release's label
  rewarded under the base release's labels (and vice versa)? Writes ``reward_flips.parquet``,
  ``flip_rates.csv`` (for ``dvc plots``), ``flip_rates.png``, ``reward_noise.json`` (the whole
  summary, with the per-calculator table) and ``metrics.json`` (the DVC metric, scalars only: rows,
  flip rate, expected reward gap) to ``project.compare_dir``.
* :func:`export` (``compare export``): the two arms as verl and TRL parquet files under
  ``project.arms_dir`` (``{verl,trl}/{original,maintained}.parquet``).

Releases, rows and the format weight come from ``compare.analyze`` / ``compare.export``; the labels
of a release from :func:`medcalc_maintained.scoring.labels.release_labels`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_json, write_parquet
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.arms import export_arms
from medcalc_maintained.scoring.labels import release_labels
from medcalc_maintained.scoring.noise import plot_flip_rates, reward_noise
from medcalc_maintained.stages._metrics import METRICS

Labels = Callable[[str], pd.DataFrame]


@dataclass
class AnalyzeRun:
    base: str
    new: str
    rows: str
    summary: dict[str, Any]
    out_dir: Path
    written: list[Path] = field(default_factory=list)


@dataclass
class ExportRun:
    base: str
    new: str
    rows: str
    n_rows: int  # rows per arm
    out_dir: Path
    written: list[Path] = field(default_factory=list)


def _labels_of(project: Project) -> Labels:
    """The full table of a release, built once per version for the whole run."""
    cache: dict[str, pd.DataFrame] = {}

    def get(version: str) -> pd.DataFrame:
        if version not in cache:
            cache[version] = release_labels(project, version, "full")
        return cache[version]

    return get


def _options(project: Project, section: str, base: str | None, new: str | None, rows: str | None
             ) -> tuple[str, str, str]:
    p = project.section(f"compare.{section}")
    return str(base or p["base"]), str(new or p["new"]), str(rows or p["rows"])


HEADLINE = ("rows", "flip_rate", "expected_reward_gap")  # of reward_noise.json: the DVC metric (metrics.json)


def analyze(project: Project, *, base: str | None = None, new: str | None = None, rows: str | None = None,
            out_dir: Path | None = None, labels: Labels | None = None) -> AnalyzeRun:
    """Reward flips of ``new``'s labels scored under ``base``'s (options default to ``compare.analyze``)."""
    base, new, rows = _options(project, "analyze", base, new, rows)
    out = Path(out_dir) if out_dir else project.compare_dir
    get = labels or _labels_of(project)
    base_df, new_df = get(base), get(new)
    rows_df, summary = reward_noise(base_df, new_df, rows=rows, lam=float(project.param("compare.analyze.lambda")))
    summary.update({"base": base, "new": new})
    per = pd.DataFrame([{"calculator": d["calculator"], "flip_rate": d["flip_rate"]} for d in summary["per_calculator"]])
    title = f"Reward flips: {new} labels scored under {base} labels ({summary['rows']} rows)"
    written = [
        write_parquet(out / "reward_flips.parquet", rows_df),
        write_atomic(out / "flip_rates.csv", lambda p: per.to_csv(p, index=False)),
        write_json(out / "reward_noise.json", summary),
        write_json(out / METRICS, {k: summary[k] for k in HEADLINE}),
        write_atomic(out / "flip_rates.png", lambda p: plot_flip_rates(summary["per_calculator"], p, title)),
    ]
    return AnalyzeRun(base, new, rows, summary, out, written)


def export(project: Project, *, base: str | None = None, new: str | None = None, rows: str | None = None,
           out_dir: Path | None = None, labels: Labels | None = None) -> ExportRun:
    """The two training arms (options default to ``compare.export``)."""
    base, new, rows = _options(project, "export", base, new, rows)
    out = Path(out_dir) if out_dir else project.arms_dir
    get = labels or _labels_of(project)
    arms = export_arms(get(base), get(new), rows=rows)
    written = [write_parquet(out / fmt / f"{arm}.parquet", df)
               for arm, frames in arms.items() for fmt, df in frames.items()]
    return ExportRun(base, new, rows, len(arms["original"]["verl"]), out, written)


def run(project: Project) -> tuple[AnalyzeRun, ExportRun]:
    """The whole stage: ``compare analyze`` then ``compare export`` with their parameters."""
    labels = _labels_of(project)
    return analyze(project, labels=labels), export(project, labels=labels)
