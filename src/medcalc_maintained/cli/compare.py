"""Command line of the label comparison (paper section 4): the ``compare`` group (``evaluate`` and
``regrade`` have their own modules, :mod:`medcalc_maintained.cli.evaluate` and
:mod:`medcalc_maintained.cli.regrade`).

Argument parsing and printing only: the work is done by :mod:`medcalc_maintained.stages.compare`,
:mod:`medcalc_maintained.stages.compare_report`, :mod:`medcalc_maintained.stages.evaluate_example`
and :mod:`medcalc_maintained.scoring.train`. Heavy imports (torch, transformers, trl, matplotlib)
happen inside the commands, so ``--help`` stays fast and the rest of the CLI works without the
``train`` extra.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.cli.evaluate import print_evaluation
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.project import Project

compare_app = typer.Typer(
    help=(
        "Does the choice of labels matter for training? Reward noise between two releases "
        "(`compare analyze`), the two GRPO training arms (`compare export`, `compare train`) and the "
        "worked example of `evaluate` (`compare predictions`)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


class Arm(str, Enum):
    original = "original"
    maintained = "maintained"


@compare_app.command("train")
def train_command(
    arm: Arm = typer.Option(..., "--arm", help="Which labels the reward is computed against."),
    model: Optional[Path] = typer.Option(None, "--model", help="Local checkpoint directory of the base model (not needed with --smoke)."),
    smoke: bool = typer.Option(False, "--smoke", help="Tiny random model built in code, 2 GRPO steps on CPU, no download."),
    instances: Optional[Path] = typer.Option(None, "--instances", help="Prompts: instances parquet (default: the ingest stage's output)."),
    labels: Optional[Path] = typer.Option(None, "--labels", help=(
        "Label file of the arm (parquet or CSV with uid, Ground Truth Answer, Lower Limit, Upper Limit, Output Type). "
        "Default: original = the instances' own v1.0 labels; maintained = the apply stage's output.")),
    split: Optional[str] = typer.Option(None, "--split", help="Split to train on (default: params compare.train.split)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params compare.train.output_dir/ARM; a temporary directory with --smoke)."),
) -> None:
    """Train one arm of the comparison with GRPO (TRL) and the Eq. 2 reward of `grading/reward.py`.

    Prompts, order, seed and hyperparameters come from `compare.train` in params.yaml and are the
    same for both arms; only the labels behind the reward differ. Needs the `train` extra.
    An optimizer step whose batch has only zero advantages, or whose gradient is not finite, is
    skipped (no weight changes) and counted in the log and in train_result.json.
    """
    from medcalc_maintained.scoring import train

    try:
        project = guarded(out)
    except DataError as exc:
        fail(exc)
    params = _train_params(project)
    if not smoke and model is None:
        fail(ValueError("--model PATH is required (a local checkpoint directory), or pass --smoke"))
    try:
        data = train.arm_data(project, arm.value, instances=instances, labels=labels, split=split, smoke=smoke)
    except (DataError, ValueError) as exc:
        fail(exc)
    _print_arm(data, arm.value)
    out_dir = out if out is not None else (None if smoke else project.models_dir / arm.value)
    try:
        result = train.run_grpo(data.dataset, model, params, smoke=smoke, output_dir=out_dir)
    except ValueError as exc:
        fail(exc)
    except RuntimeError as exc:
        fail(exc, code=1)
    _print_training(result, f"GRPO {arm.value}{' (smoke)' if smoke else ''}")


def _train_params(project: Project):
    """``compare.train`` of params.yaml read as the training parameters (exit 2 naming params.yaml
    when they are malformed)."""
    from medcalc_maintained.scoring import train

    try:
        return train.TrainParams.from_dict(project.section("compare.train"))
    except (TypeError, ValueError) as exc:
        fail(ValueError(f"params.yaml: {exc}"))


def _print_arm(data, arm: str) -> None:
    """`compare train`'s line on the arm's prompts, after the note of its data, if any."""
    if data.note:
        console.print(f"[dim]{data.note}[/]")
    console.print(f"arm [bold]{arm}[/]: {len(data.dataset)} prompts"
                  + (f" ({data.dropped} instance(s) without a label left out)" if data.dropped else ""))


def _print_training(result, title: str) -> None:
    """`compare train`'s table: steps, skipped steps, the last mean rewards, the model written."""
    table = Table(title=title)
    for col in ("steps", "skipped", "mean reward per step", "model"):
        table.add_column(col)
    sk = result.skipped_steps
    skipped = (f"{sk['total']} ({sk['zero_advantage']} zero advantage, {sk['nonfinite_grad']} non-finite gradient)"
               if sk.get("total") else "0")
    table.add_row(str(result.steps), skipped, ", ".join(f"{r:.3f}" for r in result.rewards[-10:]), result.model_dir)
    console.print(table)
    console.print(f"wrote {Path(result.output_dir) / 'train_result.json'}")


def _print_analyze(run) -> None:
    s = run.summary
    console.print(f"compare analyze: {s['rows']} rows; a policy answering the {run.new} label is rewarded under "
                  f"{run.base} labels on {100 * s['new_answer_rewarded_under_base']:.1f}% of rows "
                  f"(flip rate {100 * s['flip_rate']:.1f}%); expected reward gap {s['expected_reward_gap']:.3f}")


def _print_export(run) -> None:
    console.print(f"compare export: {run.n_rows} rows per arm ({run.base} vs {run.new}, rows={run.rows}) -> "
                  f"{run.out_dir}/{{verl,trl}}/{{original,maintained}}.parquet")


@compare_app.command("export")
def export_command(
    base: Optional[str] = typer.Option(None, "--base", help="Release version of the original arm (default: params compare.export.base)."),
    new: Optional[str] = typer.Option(None, "--new", help="Release version of the maintained arm (default: params compare.export.new)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params compare.export.out)."),
    rows: Optional[str] = typer.Option(None, "--rows", help="'verified': rows the new release verified; 'all': every row (default: params)."),
) -> None:
    """Write the two GRPO training arms: verl parquet (data_source, prompt, ability, reward_model,
    extra_info) and TRL-ready parquet (prompt, ground_truth, lower, upper, output_type, uid).

    Both arms hold identical prompts in identical order and differ only in ground truth; this is
    asserted before anything is written.
    """
    from medcalc_maintained.stages import compare as stage

    try:
        run = stage.export(guarded(out), base=base, new=new, rows=rows, out_dir=out)
    except (DataError, ValueError) as exc:
        fail(exc)
    _print_export(run)


@compare_app.command("analyze")
def analyze_command(
    base: Optional[str] = typer.Option(None, "--base", help="Base release version, the original labels (default: params compare.analyze.base)."),
    new: Optional[str] = typer.Option(None, "--new", help="New release version, the maintained labels (default: params compare.analyze.new)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params compare.analyze.out)."),
    rows: Optional[str] = typer.Option(None, "--rows", help="'verified' or 'all' rows (default: params)."),
) -> None:
    """Reward-noise analysis: for each row, is a policy answering the new label rewarded under the
    base labels (and vice versa)? Writes flip rates overall and per calculator and the expected
    reward gap (reward_noise.json; metrics.json: its headline scalars, the DVC metric; CSV for
    `dvc plots`, PNG chart)."""
    from medcalc_maintained.stages import compare as stage

    try:
        run = stage.analyze(guarded(out), base=base, new=new, rows=rows, out_dir=out)
    except (DataError, ValueError) as exc:
        fail(exc)
    _print_analyze(run)


@compare_app.command("report")
def report_command(
    run: Optional[list[str]] = typer.Option(None, "--run", help="ARM=DIR of a `compare train` output (its checkpoint-N directories are evaluated); give both arms. Without --run: the CPU smoke of the compare-report stage (both arms trained with the --smoke settings, one checkpoint per step)."),
    base_model: Optional[Path] = typer.Option(None, "--base-model", help="Checkpoint of step 0 (the model both arms started from) for --run."),
    max_new_tokens: Optional[int] = typer.Option(None, "--max-new-tokens", help="Tokens per held-out answer with --run (default: params compare.train.max_completion_length)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params compare.report.out)."),
) -> None:
    """Evaluate each arm's checkpoints on held-out rows under the maintained and the original labels.

    Held-out rows: the `compare.report.heldout` config (`mini`) of the new release; when the
    instances have no `compare.train.split` split, the arms train on the other test rows (the
    output says which). Every checkpoint answers every held-out prompt greedily; reported per arm
    and step with seeded bootstrap 95% intervals: accuracy under both label versions, accuracy on
    changed vs unchanged rows (reward flips), and the old-label share on changed rows (active
    noise); per calculator the flip rate and old-label share. Writes metrics.json (scalars),
    report.json, curves.csv, per_calculator.csv, curves.png. Needs the `train` extra (`make train`), which
    `make run` does not install: this stage is up to date in a fresh clone; without the extra it stops, exit 2.
    """
    import importlib.util

    from medcalc_maintained.stages import compare_report as stage

    try:
        missing = [m for m in ("torch", "transformers", "trl") if importlib.util.find_spec(m) is None]
        if missing:
            raise ValueError(f"compare report trains and evaluates a model: it needs {', '.join(missing)} (the train "
                             "extra), which are not installed. Install them with `make train` (or pip install -e "
                             "'.[train]'), then run `make run` again; `make run` leaves the extra out because stage "
                             "compare-report is up to date in a fresh clone")
        project = guarded(out)
        if run:
            report, note, where = stage.report_runs(project, _arm_runs(run, stage.ARMS), base_model=base_model,
                                                    max_new_tokens=max_new_tokens, out=out)
        else:
            report, note, where = stage.smoke(project, out=out)
    except (DataError, ValueError) as exc:
        fail(exc)
    console.print(f"[dim]{note}[/]")
    _print_curves(report)
    console.print(f"wrote {where}/: metrics.json, report.json, curves.csv, per_calculator.csv, curves.png")


def _arm_runs(items: list[str], arms) -> dict[str, Path]:
    """The ``--run ARM=DIR`` options as ``{arm: directory}`` (``ValueError`` naming a malformed one)."""
    runs = {}
    for item in items:
        arm, sep, path = item.partition("=")
        if not sep or arm not in arms or not Path(path).is_dir():
            raise ValueError(f"--run {item!r}: expected ARM=DIR with ARM one of {', '.join(arms)} "
                             "and DIR an existing directory")
        runs[arm] = Path(path)
    return runs


def _print_curves(report) -> None:
    """`compare report`'s table: held-out accuracy per arm and checkpoint."""
    table = Table(title=f"held-out accuracy per checkpoint ({report.summary['heldout_rows']} rows, "
                        f"{report.summary['changed_rows']} changed)")
    for col in ("arm", "step", "maintained labels (95% CI)", "original labels (95% CI)", "changed", "unchanged",
                "old-label share"):
        table.add_column(col)
    for r in report.curves.to_dict("records"):
        table.add_row(r["arm"], str(r["step"]),
                      f"{r['accuracy_new']:.1%} ({r['accuracy_new_ci_low']:.1%}–{r['accuracy_new_ci_high']:.1%})",
                      f"{r['accuracy_old']:.1%} ({r['accuracy_old_ci_low']:.1%}–{r['accuracy_old_ci_high']:.1%})",
                      f"{r['accuracy_changed']:.1%}", f"{r['accuracy_unchanged']:.1%}", f"{r['old_label_share']:.1%}")
    console.print(table)


@compare_app.command("run")
def run_command() -> None:
    """The `compare` stage: `compare analyze` and `compare export` with the parameters of params.yaml."""
    from medcalc_maintained.stages import compare as stage

    try:
        analyzed, exported = stage.run(Project.load())
    except (DataError, ValueError) as exc:
        fail(exc)
    _print_analyze(analyzed)
    _print_export(exported)


@compare_app.command("predictions")
def predictions_command(
    labels: Optional[Path] = typer.Option(None, "--labels", help="Relabel output (default: DIR/labels.parquet of params relabel.out)."),
    out: Optional[Path] = typer.Option(None, "--out", help="JSONL to write (default: params compare.evaluate.predictions)."),
) -> None:
    """Turn the relabel stage's labels into a predictions file (one `{"uid", "output"}` per labeled
    test row): the worked example `make run` grades under each release with `evaluate`."""
    from medcalc_maintained.stages import evaluate_example as stage

    try:
        run = stage.write_predictions(guarded(out), labels=labels, out=out)
    except DataError as exc:
        fail(exc)
    console.print(f"compare predictions: {run.n} predictions from {run.source} -> {run.target}")


@compare_app.command("example")
def example_command() -> None:
    """The `evaluate-example` stage: `compare predictions`, then `evaluate` of them under the releases
    `compare.evaluate.against` names (params.yaml: 1.0.0 and the latest release)."""
    from medcalc_maintained.stages import evaluate_example as stage

    try:
        preds, evaluation = stage.run(Project.load())
    except (DataError, ValueError) as exc:
        fail(exc)
    console.print(f"compare predictions: {preds.n} predictions from {preds.source} -> {preds.target}")
    print_evaluation(evaluation)


def register(app: typer.Typer) -> None:
    """Add the ``compare`` group to the main CLI."""
    app.add_typer(compare_app, name="compare")
