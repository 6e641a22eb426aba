"""CLI of the replay study: ``medcalc-maintained triage simulate`` (``triage`` itself still ranks and routes).

    medcalc-maintained triage              # the queue (cli/review.py)
    medcalc-maintained triage simulate     # error model, allocation policies, replay, unverified estimate
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.core.errors import DataError


def simulate(
    out: Optional[Path] = typer.Option(None, help="Output directory (default: params.triage_simulate.out)."),
    workers: int = typer.Option(1, min=1, help="Processes for the replay runs (policy x seed); the outputs "
                                               "are the same bytes for any number."),
) -> None:
    """Replay physician review allocation on the adjudicated rows, and estimate wrong labels where nobody looked.

    Fits the error model (P(label wrong) per row: hierarchical logistic regression on the recompute,
    audit and check signals with a pooled intercept per calculator; params `error_model:`) to the
    adjudicated decisions and checks its calibration on held-out rows (k-fold Brier score and
    reliability plot). Then hides the adjudications and lets each policy of
    `triage_simulate.policies` choose batches of reviews - ranking (the current queue), p_error,
    information (expected information gain about the calculator error rates), harm (P(error) x
    severity), uniform (the floor) - revealing the decision of every chosen row and refitting after
    each batch, for every seed. Writes DIR/summary.json (Brier score; errors found, harm found and
    estimation error of the per-calculator rates at `report_at` reviews with 95% intervals over seeds;
    the winner of each measure), DIR/metrics.json (its headline scalars: the DVC metric), the curves
    (errors_found, estimation_error: .csv and .png),
    reliability.csv/.png, rows.csv (P(wrong) per row), calculator_rates.csv and
    unverified_estimate.json (per release: the share of wrong labels among its unverified rows,
    quoted on the dataset card). The outputs are the same bytes whatever --workers, the BLAS thread
    count or the CPU (fits rounded, ties broken by row order). Exit 2 on bad parameters or missing inputs.
    """
    from medcalc_maintained.planning.simulate import SimulateConfig
    from medcalc_maintained.stages import triage_simulate as stage

    try:
        project = guarded(out)
        cfg = SimulateConfig.from_project(project)
        total = len(cfg.replay.policies) * len(cfg.replay.seeds)
        columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as bar:
            task = bar.add_task("replay runs (policy x seed)", total=total)
            run = stage.run(project, out_dir=out, workers=workers,
                            progress=lambda policy, seed: bar.update(task, advance=1, description=f"{policy}, seed {seed}"))
    except DataError as exc:
        fail(exc)
    _print(run.metrics)
    console.print(f"wrote {run.paths['summary']}, {run.paths['metrics']}, {run.paths['errors_plot']}, {run.paths['estimation_plot']}, "
                  f"{run.paths['estimate']}")


def _print(m: dict[str, Any]) -> None:
    cal = m["calibration"]
    console.print(f"error model: held-out Brier {cal['brier']:.4f} ({cal['folds']}-fold on {cal['rows']} adjudicated rows; "
                  f"base rate alone {cal['brier_base_rate']:.4f})")
    rp = m["replay"]
    t = Table(title=f"replay on {rp['adjudicated_rows']} adjudicated rows, {len(rp['seeds'])} seeds (mean [95% over seeds])")
    t.add_column("policy")
    ks = list(next(iter(rp["at"].values()))["errors"])
    for k in ks:
        t.add_column(f"errors @{k}", justify="right")
    for k in ks:
        t.add_column(f"rate MAE @{k}", justify="right")
    for policy, v in rp["at"].items():
        cells = [f"{v['errors'][k]['mean']:.1f} [{v['errors'][k]['ci95'][0]:.0f}-{v['errors'][k]['ci95'][1]:.0f}]" for k in ks]
        cells += [f"{v['estimation'][k]['mean']:.3f}" for k in ks]
        t.add_row(policy, *cells)
    console.print(t)
    for measure, by_k in rp["winner"].items():
        console.print(f"  most {'accurate' if measure == 'estimation' else measure}: "
                      + ", ".join(f"{k} reviews: {p}" for k, p in by_k.items()))


def triage_group(run_triage: Callable[..., None]) -> typer.Typer:
    """A ``triage`` group: without a subcommand it runs ``run_triage`` (same options), with
    ``simulate`` the replay study."""
    group = typer.Typer(help=run_triage.__doc__, rich_markup_mode=None)
    sig = inspect.signature(run_triage, eval_str=True)  # the annotations as types, for typer

    def main(ctx: typer.Context, **kwargs: Any) -> None:
        if ctx.invoked_subcommand is None:
            run_triage(**kwargs)

    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    main.__signature__ = sig.replace(parameters=[ctx_param, *sig.parameters.values()])  # type: ignore[attr-defined]
    main.__doc__ = run_triage.__doc__
    group.callback(invoke_without_command=True)(main)
    group.command("simulate")(simulate)
    return group
