"""Command line of the label comparison (paper section 4): the ``compare`` group, ``evaluate`` and ``regrade``.

Argument parsing and printing only: the work is done by :mod:`medcalc_maintained.stages.compare`,
:mod:`medcalc_maintained.stages.evaluate_example` and :mod:`medcalc_maintained.scoring`. Heavy
imports (torch, transformers, trl, matplotlib) happen inside the commands, so ``--help`` stays fast
and the rest of the CLI works without the ``train`` extra.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.core.io import DataError
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
    try:
        params = train.TrainParams.from_dict(project.section("compare.train"))
    except (TypeError, ValueError) as exc:
        fail(ValueError(f"params.yaml: {exc}"))
    if not smoke and model is None:
        fail(ValueError("--model PATH is required (a local checkpoint directory), or pass --smoke"))
    try:
        data = train.arm_data(project, arm.value, instances=instances, labels=labels, split=split, smoke=smoke)
    except (DataError, ValueError) as exc:
        fail(exc)
    if data.note:
        console.print(f"[dim]{data.note}[/]")
    console.print(f"arm [bold]{arm.value}[/]: {len(data.dataset)} prompts"
                  + (f" ({data.dropped} instance(s) without a label left out)" if data.dropped else ""))

    out_dir = out if out is not None else (None if smoke else project.models_dir / arm.value)
    try:
        result = train.run_grpo(data.dataset, model, params, smoke=smoke, output_dir=out_dir)
    except ValueError as exc:
        fail(exc)
    except RuntimeError as exc:
        fail(exc, code=1)
    table = Table(title=f"GRPO {arm.value}{' (smoke)' if smoke else ''}")
    for col in ("steps", "skipped", "mean reward per step", "model"):
        table.add_column(col)
    sk = result.skipped_steps
    skipped = (f"{sk['total']} ({sk['zero_advantage']} zero advantage, {sk['nonfinite_grad']} non-finite gradient)"
               if sk.get("total") else "0")
    table.add_row(str(result.steps), skipped, ", ".join(f"{r:.3f}" for r in result.rewards[-10:]), result.model_dir)
    console.print(table)
    console.print(f"wrote {Path(result.output_dir) / 'train_result.json'}")


def _share(k, n) -> str:
    return "n/a" if k is None or k != k or not n else f"{k / n:.1%}"


def _print_report(report, compliance=None) -> None:
    """evaluate's tables; with ``compliance`` (regrade's table), the tagged and parsable shares of each
    label set's scored outputs beside its accuracy."""
    shares = {} if compliance is None else {r["name"]: r for r in compliance.to_dict("records")
                                            if r["scope"] == "label set"}
    table = Table(title=f"accuracy of {report.n_predictions} predictions, per label set on the rows it labels")
    extra = ("tagged", "parsable") if shares else ()
    for col in ("label set", "scored", "correct", "accuracy", *extra, "95% CI", "wrong", "N/A", "unparsable",
                "severe", "skipped"):
        table.add_column(col, justify="right" if col != "label set" else "left")
    for r in report.accuracy.to_dict("records"):
        skipped = (r["skipped_no_prediction"] + r["skipped_unlabelled_in_this_version"]
                   + r["skipped_not_in_this_label_set"])
        c = shares.get(r["label_set"], {})
        beside = (_share(c.get("tagged"), c.get("outputs")), _share(c.get("parsable"), c.get("outputs"))) if shares else ()
        table.add_row(r["label_set"], str(r["n"]), str(r["correct"]), f"{r['accuracy']:.1%}", *beside,
                      f"{r['ci_low']:.1%}–{r['ci_high']:.1%}", str(r["wrong"]), str(r["abstained"]),
                      str(r["unparsable"]), str(r["severe_errors"]), str(skipped))
        console.print(f"[dim]{r['label_set']}: skipped {r['skipped_no_prediction']} without prediction, "
                      f"{r['skipped_unlabelled_in_this_version']} unlabelled in this version, "
                      f"{r['skipped_not_in_this_label_set']} not in this label set; errors by severity "
                      + ", ".join(f"{lv} {r['errors_' + lv]}" for lv in ("L0", "L1", "L2", "L3"))
                      + f", unknown {r['errors_without_level']}[/]")
    console.print(table)
    if len(report.accuracy) > 1:
        common = Table(title=f"common rows ({report.n_common}, scored under every label set)")
        for col in ("label set", "correct", "accuracy", "95% CI"):
            common.add_column(col)
        for r in report.common.to_dict("records"):
            common.add_row(r["label_set"], str(r["correct"]), f"{r['accuracy']:.1%}",
                           f"{r['ci_low']:.1%} – {r['ci_high']:.1%}")
        console.print(common)
    if len(report.comparisons):
        comp = Table(title=f"paired comparison on the common rows (McNemar exact test); {len(report.flips)} flips")
        for col in ("A", "B", "paired", "A only", "B only", "acc A − acc B", "95% CI", "p"):
            comp.add_column(col)
        for r in report.comparisons.to_dict("records"):
            comp.add_row(r["a"], r["b"], str(r["n_paired"]), str(r["a_only"]), str(r["b_only"]),
                         f"{r['difference']:+.1%}", f"{r['diff_ci_low']:+.1%}–{r['diff_ci_high']:+.1%}",
                         f"{r['mcnemar_p']:.3g}")
        console.print(comp)
    if len(report.decomposition):
        _print_decomposition(report)
    for note in report.notes:
        console.print(f"[dim]{note}[/]")


def _print_decomposition(report) -> None:
    from medcalc_maintained.scoring.evaluate import graded_name

    grid = Table(title=f"accuracy on the {report.n_common} common rows: label version x grader")
    labels = report.decomposition[report.decomposition["change"] == "labels"]
    versions = list(dict.fromkeys([*labels["from"], *labels["to"]]))
    grid.add_column("labels")
    for g in report.graders:
        grid.add_column(g, justify="right")
    common = dict(zip(report.common["label_set"], report.common["accuracy"]))
    for v in versions:
        grid.add_row(v, *(f"{common[graded_name(v, g)]:.1%}" for g in report.graders))
    console.print(grid)
    dec = Table(title="the accuracy change due to labels and the change due to grading, separately")
    for col in ("change", "held fixed", "from", "to", "accuracy from", "accuracy to", "difference", "95% CI"):
        dec.add_column(col, justify="left" if col in ("change", "held fixed", "from", "to") else "right")
    for r in report.decomposition.to_dict("records"):
        dec.add_row(r["change"], r["held_fixed"], r["from"], r["to"], f"{r['accuracy_from']:.1%}",
                    f"{r['accuracy_to']:.1%}", f"{r['difference']:+.1%}",
                    f"{r['diff_ci_low']:+.1%}–{r['diff_ci_high']:+.1%}")
    console.print(dec)


def _print_evaluation(run) -> None:
    _print_report(run.report)
    console.print(f"wrote {run.out_dir}/: evaluation.json, per_calculator.csv, per_status.csv, graded.csv, "
                  "flips.csv, skipped.csv, accuracy.png")


def evaluate_command(
    predictions: Path = typer.Argument(..., help='Predictions: JSONL, one {"uid": int, "output": str} per line ("answer" may stand for "output"), or CSV (.csv) with columns uid and output (or answer).'),
    against: list[str] = typer.Option(..., "--against", help="A label version; repeat it. A release version or tag (2.0.0, v2.0.0, v2.0 = the first release of the 2.0 line, v1.0 = release 1.0.0, the upstream v1.0 labels), a built release directory (build/release), or a parquet/CSV label file; NAME=ITEM names it."),
    subset: Optional[str] = typer.Option(None, "--subset", help="Score only the rows of this config of the releases (e.g. mini): the rows it holds in every release given that has it with rows (1.0.0's empty mini is scored on the mini rows of the other releases, and the output says so); refused when no release given has rows in it."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory; must not exist or be empty unless --force (default: a new directory under params compare.evaluate.runs, build/evaluations/)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Bootstrap seed (default: params compare.evaluate.seed)."),
    n_boot: Optional[int] = typer.Option(None, "--n-boot", help="Bootstrap resamples (default: params compare.evaluate.n_boot)."),
    grader: Optional[list[str]] = typer.Option(None, "--grader", help="A grading rule; repeat it: ours (default), upstream (MedCalc-Bench's check_correctness), helm (HELM's MedCalcBenchMetric, with its category defect), opencompass. With several, each label version is scored once per grader, and with two or more versions the change due to labels and the change due to grading are reported separately."),
    max_line_bytes: Optional[int] = typer.Option(None, "--max-line-bytes", help="Longest prediction line (JSONL) or field (CSV) accepted; a longer one is refused with exit 2 naming file and line (default: params compare.evaluate.max_line_bytes, 1 MiB)."),
) -> None:
    """Grade PREDICTIONS under each label version: per version on the rows it labels that have a
    prediction, and side by side on the rows common to all versions.

    **Answer extraction** (the one rule of `core/answers.py`): the answer of an output is the text
    of its last `<answer>...</answer>` (case-insensitive), else the whole output, stripped. It
    must then be one answer: a number (with an optional unit, `78.1 ml/hr`), a date
    (`MM/DD/YYYY` or ISO), a gestational age `('W weeks', 'D days')`, or an abstention (`N/A`,
    `unknown`, ...). Anything else is **unparsable** and wrong, e.g. the untagged output "The
    answer is 38." (tag it: `<answer>38</answer>`); so are `NaN`, `Infinity` (also as JSON
    numbers) and answers over 200 characters. An abstention is correct only against an `N/A`
    label; decimals are correct inside the label's [Lower Limit, Upper Limit], integers after
    rounding, dates on the same day. `graded.csv` shows the extracted `answer` and its `parsed`
    value per row.

    **Rows:** each version is scored on the rows it labels (its `default` config) that have a
    prediction. Skipped rows are counted per reason: no prediction; unlabelled in this version
    (e.g. an unverified row 2.0.0 leaves out); not in this label set. `N/A` labels are scored.

    **Output** (`--out`, default a new `build/evaluations/<time>`): evaluation.json (accuracy with
    95% bootstrap CI, statuses, severe errors = answers in another decision band than the label
    (L2/L3), skipped counts; common rows; McNemar per pair), per_calculator.csv and
    per_status.csv (own and common rows), graded.csv, flips.csv (common rows whose correctness
    differs between versions), skipped.csv, accuracy.png.

    **Graders** (`--grader`, repeatable; `grading/graders.py`): `ours` (the rule above),
    `upstream` (MedCalc-Bench's `check_correctness`: no abstention), `helm` (HELM's
    `MedCalcBenchMetric`, whose range check knows only the categories `physical` and `dosage
    conversion`, so every `lab` and `dosage` row scores 0: the output names this defect and counts
    its rows), `opencompass` (upstream's rule after OpenCompass's answer extraction). With any
    grader but `ours` alone, each version is scored as `VERSION [GRADER]`; with two versions and two
    graders a 2x2 table of accuracy on the common rows and the change due to labels (per grader)
    and due to grading (per version), each with a paired bootstrap 95% interval, are printed and
    written to decomposition.csv and evaluation.json.
    """
    from medcalc_maintained.stages import evaluate_example as stage

    try:
        run = stage.evaluate(guarded(out), predictions, against, out_dir=out, seed=seed, n_boot=n_boot,
                             subset=subset, max_line_bytes=max_line_bytes, force=force, graders=grader)
    except (DataError, ValueError) as exc:
        fail(exc)
    _print_evaluation(run)


def regrade_command(
    results: list[Path] = typer.Argument(..., help="Saved results of a harness run: an lm-eval samples_<task>_<date>.jsonl, an Inspect log (.eval/.json), a HELM run directory, a verifiers results directory (results.jsonl + metadata.json), MedCalc-Bench's run.py output (JSONL), or evaluate's predictions (JSONL/CSV). Several: the parts of one run (one output per row over all of them)."),
    against: Optional[list[str]] = typer.Option(None, "--against", help="A label version to re-score under; repeat it (as for evaluate: a release version or tag, a built release directory, or a label file; NAME=ITEM names it). Default: v1.0 and the latest release of releases.yaml. The first release given identifies the rows."),
    grader: Optional[list[str]] = typer.Option(None, "--grader", help="A grading rule to re-score with; repeat it: ours, upstream, helm, opencompass (default: ours, plus the harness's own rule when it is another, e.g. upstream for MedCalc-Bench's run.py output)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="The results' format when its detection is not wanted: lm-eval, inspect, helm, verifiers, upstream, jsonl, csv."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory; must not exist or be empty unless --force (default: a new directory under params compare.evaluate.runs, build/evaluations/)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out that holds an earlier regrade (only its files)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Bootstrap seed (default: params compare.evaluate.seed)."),
    n_boot: Optional[int] = typer.Option(None, "--n-boot", help="Bootstrap resamples (default: params compare.evaluate.n_boot)."),
) -> None:
    """Re-grade a harness's saved RESULTS: first reproduce the score the harness recorded, then
    re-score the same outputs under each release and grader, as `evaluate` does.

    **Rows** are identified as rows of the first `--against` release: by our `uid`, which is upstream
    v1.0's `Row Number` (lm-eval's `doc`, Inspect's sample id, HELM's instance id `uid<N>` or, for
    HELM's own `medcalc_bench`, `<N>`, verifiers' `info`, run.py's `Row Number`), else by `Calculator
    ID` + `Note ID`. A row that is not in the release, whose recorded calculator, note id or note is
    not that row's (results made on another dataset version, such as upstream 2024-06, which
    renumbers rows), whose row number and `Calculator ID` + `Note ID` name two rows, or that is given
    twice (epochs, rollouts) is refused with exit 2, naming file and line; nothing is written.

    **Reproduction**: each recorded verdict is recomputed with the harness's own rule (`ours` for this
    package's adapters, `upstream` for MedCalc-Bench's run.py, `helm` on the whole completion for
    HELM's own scenario) on the labels the harness recorded, and compared with the score it
    recorded: "reproduced lm-eval acc 0.35 (7/20) exactly", or which rows differ and why
    (reproduction.csv).

    **Re-score**: `evaluate` on the same outputs (accuracy per version with 95% CI, per calculator,
    accuracy.png, flips, and with two versions and two graders the change due to labels apart from
    the change due to grading), with the **tag compliance** beside accuracy: the share of outputs
    with an `<answer>` tag and the share whose answer parses, per label set, per calculator and
    overall (compliance.csv). MedCalc-Bench's run.py keeps only its extracted answer, so no tag is
    counted there, and its `N/A` (no answer found) is read as no answer, not as an abstention.

    **Output**: evaluate's files plus regrade.json (inputs, reproductions, compliance),
    reproduction.csv and compliance.csv.
    """
    from medcalc_maintained.scoring.regrade import regrade
    from medcalc_maintained.stages.evaluate_example import new_run_dir

    try:
        project = guarded(out)
        report, where = regrade(project, results, against, out_dir=out or new_run_dir(project), graders=grader,
                                fmt=fmt, force=force, seed=seed, n_boot=n_boot)
    except (DataError, ValueError) as exc:
        fail(exc)
    for rep in report.reproductions:
        console.print(("[green]" if rep.exact else "[yellow]") + escape(rep.message) + "[/]")
    _print_report(report.evaluation, report.compliance)
    overall = report.compliance.iloc[0]
    console.print(f"tag compliance over {overall['outputs']} outputs: {_share(overall['tagged'], overall['outputs'])} "
                  f"with an <answer> tag, {_share(overall['parsable'], overall['outputs'])} with a parsable answer")
    console.print(f"wrote {where}/: regrade.json, reproduction.csv, compliance.csv, evaluation.json, "
                  "per_calculator.csv, per_status.csv, graded.csv, flips.csv, skipped.csv, accuracy.png")


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
    report.json, curves.csv, per_calculator.csv, curves.png. Needs the `train` extra.
    """
    from medcalc_maintained.stages import compare_report as stage

    try:
        project = guarded(out)
        if run:
            runs = {}
            for item in run:
                arm, sep, path = item.partition("=")
                if not sep or arm not in stage.ARMS or not Path(path).is_dir():
                    raise ValueError(f"--run {item!r}: expected ARM=DIR with ARM one of {', '.join(stage.ARMS)} "
                                     "and DIR an existing directory")
                runs[arm] = Path(path)
            report, note, where = stage.report_runs(project, runs, base_model=base_model,
                                                    max_new_tokens=max_new_tokens, out=out)
        else:
            report, note, where = stage.smoke(project, out=out)
    except (DataError, ValueError) as exc:
        fail(exc)
    console.print(f"[dim]{note}[/]")
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
    console.print(f"wrote {where}/: metrics.json, report.json, curves.csv, per_calculator.csv, curves.png")


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
    """The `evaluate-example` stage: `compare predictions`, then `evaluate` of them under 1.0.0 and 2.0.0."""
    from medcalc_maintained.stages import evaluate_example as stage

    try:
        preds, evaluation = stage.run(Project.load())
    except (DataError, ValueError) as exc:
        fail(exc)
    console.print(f"compare predictions: {preds.n} predictions from {preds.source} -> {preds.target}")
    _print_evaluation(evaluation)


def register(app: typer.Typer) -> None:
    """Add the ``compare`` group and ``evaluate`` to the main CLI."""
    app.add_typer(compare_app, name="compare")
    app.command("evaluate")(evaluate_command)
    app.command("regrade")(regrade_command)
