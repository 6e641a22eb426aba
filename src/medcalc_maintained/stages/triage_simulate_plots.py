"""The figures of stage ``triage-simulate``: reliability diagram and replay curves (PNG, for ``dvc plots``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic

COLORS = {"ranking": "#1f5fa8", "p_error": "#d07a1a", "information": "#2a8a3a", "harm": "#a02a6a", "uniform": "#666666"}
LABELS = {"ranking": "(a) current ranking", "p_error": "(b) highest P(error)", "information": "(c) information gain",
          "harm": "(d) expected harm", "uniform": "uniform sampling (floor)"}


def _save(fig: Any, path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig.tight_layout()
    write_atomic(path, lambda p: fig.savefig(p, format="png", metadata={"Software": None}))
    plt.close(fig)
    return path


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def reliability_plot(rel: pd.DataFrame, cal: dict[str, Any], path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 5), dpi=110)
    ax.plot([0, 1], [0, 1], color="#999999", linestyle=":", label="perfect calibration")
    ax.plot(rel["predicted"], rel["observed"], marker="o", color="#1f5fa8",
            label=f"{cal['folds']}-fold held out (Brier {cal['brier']:.3f}; base rate {cal['brier_base_rate']:.3f})")
    for r in rel.itertuples():
        ax.annotate(str(r.rows), (r.predicted, r.observed), fontsize=7, xytext=(3, -8), textcoords="offset points")
    ax.set_xlabel("predicted P(label wrong)")
    ax.set_ylabel("share adjudicated wrong")
    ax.set_title("Error model calibration (rows per bin annotated)")
    ax.legend(loc="upper left", fontsize=7, frameon=False)
    return _save(fig, path)


def curve_plot(table: pd.DataFrame, policies: Sequence[str], ylabel: str, title: str, path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for p in policies:
        c = COLORS.get(p, None)
        ax.plot(table["reviews"], table[p], color=c, label=LABELS.get(p, p), linewidth=1.8,
                linestyle=":" if p == "uniform" else "-")
        ax.fill_between(table["reviews"], table[f"{p}_lo"], table[f"{p}_hi"], color=c, alpha=0.15, linewidth=0)
    ax.set_xlabel("physician reviews")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.2)
    ax.legend(fontsize=8, frameon=False)
    return _save(fig, path)


def write_plots(out: Path, rel: pd.DataFrame, cal: dict[str, Any], errors: pd.DataFrame, estimation: pd.DataFrame,
                policies: Sequence[str]) -> dict[str, Path]:
    return {
        "reliability_plot": reliability_plot(rel, cal, out / "reliability.png"),
        "errors_plot": curve_plot(errors, policies, "adjudicated label errors found",
                                  "Replay: errors found (mean, 95% band over seeds)", out / "errors_found.png"),
        "estimation_plot": curve_plot(estimation, policies, "mean abs. error of per-calculator error rates",
                                      "Replay: estimation error of the calculator rates", out / "estimation_error.png"),
    }
