"""Command line of the label comparison (paper section 4): ``compare train`` and ``compare evaluate``.

A typer sub-app; ``cli.py`` mounts it as ``medcalc-maintained compare``. Heavy imports (torch,
transformers, trl, matplotlib) happen inside the commands, so ``--help`` stays fast and the rest of
the CLI works without the ``train`` extra.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from medcalc_maintained.cli.common import console, project_path as _path, fail as _fail
from medcalc_maintained import config
from medcalc_maintained.core.io import DataError

compare_app = typer.Typer(
    help=(
        "Does the choice of labels matter for training? Train one GRPO arm per label set "
        "(`compare train`) and grade predictions against several label sets (`compare evaluate`)."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)

DEFAULT_INSTANCES = "data/interim/instances.parquet"
DEFAULT_MAINTAINED = "data/maintained/instances.parquet"
DEFAULT_EVAL_OUT = "data/compare/evaluation"


class Arm(str, Enum):
    original = "original"
    maintained = "maintained"






def _compare_params(root: Path, name: str) -> dict:
    section = (config.load_params(root).get("compare") or {}).get(name) or {}
    if not isinstance(section, dict):
        _fail(ValueError(f"params.yaml: compare.{name} must be a mapping"))
    return dict(section)


@compare_app.command("train")
def train_command(
    arm: Arm = typer.Option(..., "--arm", help="Which labels the reward is computed against."),
    model: Optional[Path] = typer.Option(None, "--model", help="Local checkpoint directory of the base model (not needed with --smoke)."),
    smoke: bool = typer.Option(False, "--smoke", help="Tiny random model built in code, 2 GRPO steps on CPU, no download."),
    instances: Optional[Path] = typer.Option(None, "--instances", help=f"Prompts: instances parquet (default {DEFAULT_INSTANCES})."),
    labels: Optional[Path] = typer.Option(None, "--labels", help=(
        "Label file of the arm (parquet or CSV with uid, Ground Truth Answer, Lower Limit, Upper Limit, Output Type). "
        f"Default: original = the instances' own v1.0 labels; maintained = {DEFAULT_MAINTAINED}.")),
    split: Optional[str] = typer.Option(None, "--split", help="Split to train on (default: params compare.train.split)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params compare.train.output_dir/ARM; a temporary directory with --smoke)."),
) -> None:
    """Train one arm of the comparison with GRPO (TRL) and the Eq. 2 reward of `reward.py`.

    Prompts, order, seed and hyperparameters come from `compare.train` in params.yaml and are the
    same for both arms; only the labels behind the reward differ. Needs the `train` extra.
    """
    import pandas as pd

    from medcalc_maintained import train as stage
    from medcalc_maintained.evaluate import read_label_file

    root = config.project_root()
    params = _compare_params(root, "train")
    try:
        tp = stage.TrainParams.from_dict(params)
    except (TypeError, ValueError) as exc:
        _fail(ValueError(f"params.yaml: {exc}"))
    if not smoke and model is None:
        _fail(ValueError("--model PATH is required (a local checkpoint directory), or pass --smoke"))

    inst_path = instances or _path(root, DEFAULT_INSTANCES)
    if not inst_path.is_file():
        _fail(DataError(inst_path, "instances file not found (run `medcalc-maintained ingest` or `dvc repro`)"))
    inst = pd.read_parquet(inst_path)
    want = split or tp.split
    if "split" in inst.columns:
        chosen = inst[inst["split"] == want]
        if chosen.empty and smoke and split is None:
            present = sorted(inst["split"].unique())
            console.print(f"[dim]no '{want}' split in {inst_path}; the smoke run uses split '{present[0]}'[/]")
            chosen = inst[inst["split"] == present[0]]
        if chosen.empty:
            _fail(DataError(inst_path, f"no instances of split {want!r} (present: {sorted(inst['split'].unique())}); "
                            "pass --split"))
        inst = chosen

    label_df = None
    if labels is not None or arm is Arm.maintained:
        lab_path = labels or _path(root, DEFAULT_MAINTAINED)
        try:
            label_df = read_label_file(lab_path)
        except DataError as exc:
            _fail(exc)
    try:
        dataset = stage.build_arm_dataset(inst, label_df)
    except ValueError as exc:
        _fail(exc)
    dropped = len(inst) - len(dataset)
    console.print(f"arm [bold]{arm.value}[/]: {len(dataset)} prompts"
                  + (f" ({dropped} instance(s) without a label left out)" if dropped else ""))

    out_dir = out if out is not None else (None if smoke else _path(root, tp.output_dir) / arm.value)
    try:
        result = stage.run_grpo(dataset, model, params, smoke=smoke, output_dir=out_dir)
    except ValueError as exc:
        _fail(exc)
    except RuntimeError as exc:
        _fail(exc, code=1)
    table = Table(title=f"GRPO {arm.value}{' (smoke)' if smoke else ''}")
    for col in ("steps", "mean reward per step", "model"):
        table.add_column(col)
    table.add_row(str(result.steps), ", ".join(f"{r:.3f}" for r in result.rewards[-10:]), result.model_dir)
    console.print(table)
    console.print(f"wrote {Path(result.output_dir) / 'train_result.json'}")


VERSION = __import__("re").compile(r"^v?\d+\.\d+\.\d+$")


def _label_sets(against: list[str]) -> dict[str, Path | str]:
    """NAME -> label file path, or a release version (``1.0.0``: its ``default`` config)."""
    sets: dict[str, Path | str] = {}
    for item in against:
        name, sep, value = item.partition("=")
        value = value if sep else item
        if VERSION.match(value):
            path: Path | str = value.lstrip("v")
            name = name if sep else f"v{path}"
        else:
            path = Path(value)
            name = name if sep else path.stem
        if not name:
            _fail(ValueError(f"--against {item!r}: empty label set name; use NAME=PATH"))
        if name in sets:
            _fail(ValueError(f"--against: two label sets are called {name!r}; name them with NAME=PATH"))
        sets[name] = path
    return sets


def evaluate_command(
    predictions: Path = typer.Argument(..., help='JSONL, one {"uid": int, "output": str} per line.'),
    against: list[str] = typer.Option(..., "--against", help="Label set: a release version (1.0.0: its default config), or PATH / NAME=PATH of a parquet/CSV label file. Repeat it."),
    out: Optional[Path] = typer.Option(None, "--out", help=f"Output directory (default: params compare.evaluate.out, {DEFAULT_EVAL_OUT})."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Bootstrap seed (default: params compare.evaluate.seed, 0)."),
    n_boot: Optional[int] = typer.Option(None, "--n-boot", help="Bootstrap resamples (default: params compare.evaluate.n_boot, 10000)."),
) -> None:
    """Grade PREDICTIONS under each label set: accuracy with 95% bootstrap intervals, McNemar's
    exact test between label sets, per-calculator accuracy and a bar chart.

    A uid of a label set without a prediction counts as wrong. Writes evaluation.json,
    per_calculator.csv, graded.csv and accuracy.png to the output directory.
    """
    from medcalc_maintained.evaluate import DEFAULT_N_BOOT, DEFAULT_SEED, evaluate, read_label_file

    root = config.project_root()
    params = _compare_params(root, "evaluate")
    out_dir = out or _path(root, params.get("out", DEFAULT_EVAL_OUT))
    try:
        frames = {name: (release_frame(root, path, "default") if isinstance(path, str) else read_label_file(path))
                  for name, path in _label_sets(against).items()}
        report = evaluate(predictions, frames, out_dir=out_dir,
                          seed=params.get("seed", DEFAULT_SEED) if seed is None else seed,
                          n_boot=params.get("n_boot", DEFAULT_N_BOOT) if n_boot is None else n_boot)
    except DataError as exc:
        _fail(exc)
    except ValueError as exc:
        _fail(exc)

    table = Table(title=f"accuracy of {report.n_predictions} predictions")
    for col in ("label set", "n", "correct", "accuracy", "95% CI", "wrong", "abstained", "unparsable", "missing"):
        table.add_column(col, justify="right" if col != "label set" else "left")
    for r in report.accuracy.to_dict("records"):
        table.add_row(r["label_set"], str(r["n"]), str(r["correct"]), f"{r['accuracy']:.1%}",
                      f"{r['ci_low']:.1%} – {r['ci_high']:.1%}", str(r["wrong"]), str(r["abstained"]),
                      str(r["unparsable"]), str(r["missing"]))
    console.print(table)
    if len(report.comparisons):
        comp = Table(title="paired comparison (McNemar exact test)")
        for col in ("A", "B", "paired", "A only", "B only", "acc A − acc B", "95% CI", "p"):
            comp.add_column(col)
        for r in report.comparisons.to_dict("records"):
            comp.add_row(r["a"], r["b"], str(r["n_paired"]), str(r["a_only"]), str(r["b_only"]),
                         f"{r['difference']:+.1%}", f"{r['diff_ci_low']:+.1%} – {r['diff_ci_high']:+.1%}",
                         f"{r['mcnemar_p']:.3g}")
        console.print(comp)
    for note in report.notes:
        console.print(f"[dim]{note}[/]")
    console.print(f"wrote {out_dir}/evaluation.json, per_calculator.csv, graded.csv, accuracy.png")



def release_frame(root: Path, version: str, config_name: str = "full"):
    """One config of release ``version`` (all splits, with ``split`` and ``uid``), as ``release build`` builds it."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.tables import load_config

    return load_config(Project.load(root), version, config_name)


def _release_pair(root: Path, params: dict, base: str | None, new: str | None, rows: str | None):
    """The options of `compare export|analyze` resolved against their params section, and the
    full tables of both releases: ``(base, new, rows, base_df, new_df)``."""
    base = base or str(params.get("base", "1.0.0"))
    new = new or str(params.get("new", "2.0.0"))
    rows = rows or str(params.get("rows", "verified"))
    try:
        return base, new, rows, release_frame(root, base), release_frame(root, new)
    except DataError as exc:
        _fail(exc)


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
    from medcalc_maintained import compare
    from medcalc_maintained.core.io import write_atomic

    root = config.project_root()
    params = _compare_params(root, "export")
    out_dir = out or _path(root, params.get("out", "data/compare/arms"))
    base, new, rows, base_df, new_df = _release_pair(root, params, base, new, rows)
    try:
        arms = compare.export_arms(base_df, new_df, rows=rows)
    except ValueError as exc:
        _fail(exc)
    for arm, frames in arms.items():
        for fmt, df in frames.items():
            write_atomic(out_dir / fmt / f"{arm}.parquet", lambda p, df=df: df.to_parquet(p, index=False))
    n = len(arms["original"]["verl"])
    console.print(f"compare export: {n} rows per arm ({base} vs {new}, rows={rows}) -> {out_dir}/{{verl,trl}}/{{original,maintained}}.parquet")


@compare_app.command("analyze")
def analyze_command(
    base: Optional[str] = typer.Option(None, "--base", help="Base release version, the original labels (default: params compare.analyze.base)."),
    new: Optional[str] = typer.Option(None, "--new", help="New release version, the maintained labels (default: params compare.analyze.new)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory (default: params compare.analyze.out)."),
    rows: Optional[str] = typer.Option(None, "--rows", help="'verified' or 'all' rows (default: params)."),
) -> None:
    """Reward-noise analysis: for each row, is a policy answering the new label rewarded under the
    base labels (and vice versa)? Writes flip rates overall and per calculator (JSON metric, CSV for
    `dvc plots`, PNG chart) and the expected reward gap."""
    import json

    from medcalc_maintained import compare
    from medcalc_maintained.core.io import write_atomic, write_text_atomic

    root = config.project_root()
    params = _compare_params(root, "analyze")
    out_dir = out or _path(root, params.get("out", "data/compare"))
    base, new, rows, base_df, new_df = _release_pair(root, params, base, new, rows)
    rows_df, summary = compare.reward_noise(base_df, new_df, rows=rows, lam=float(params.get("lambda", 0.1)))
    summary.update({"base": base, "new": new})
    write_atomic(out_dir / "reward_flips.parquet", lambda p: rows_df.to_parquet(p, index=False))
    per = [{"calculator": d["calculator"], "flip_rate": d["flip_rate"]} for d in summary["per_calculator"]]
    import pandas as pd

    write_atomic(out_dir / "flip_rates.csv", lambda p: pd.DataFrame(per).to_csv(p, index=False))
    write_text_atomic(out_dir / "reward_noise.json", json.dumps(summary, indent=2) + "\n")
    write_atomic(out_dir / "flip_rates.png", lambda p: compare.plot_flip_rates(
        summary["per_calculator"], p, f"Reward flips: {new} labels scored under {base} labels ({summary['rows']} rows)"))
    console.print(f"compare analyze: {summary['rows']} rows; a policy answering the {new} label is rewarded under "
                  f"{base} labels on {100 * summary['new_answer_rewarded_under_base']:.1f}% of rows "
                  f"(flip rate {100 * summary['flip_rate']:.1f}%); expected reward gap {summary['expected_reward_gap']:.3f}")


@compare_app.command("predictions")
def predictions_command(
    labels: Optional[Path] = typer.Option(None, "--labels", help="Relabel output (default: DIR/labels.parquet of params relabel.out)."),
    out: Optional[Path] = typer.Option(None, "--out", help="JSONL to write (default: data/compare/relabel_predictions.jsonl)."),
) -> None:
    """Turn the relabel stage's labels into a predictions file (one `{"uid", "output"}` per labeled
    test row): the worked example `make run` grades under each release with `evaluate`."""
    import pandas as pd

    from medcalc_maintained import compare
    from medcalc_maintained.core.io import write_atomic

    root = config.project_root()
    src = labels or _path(root, config.section("relabel", root).get("out", "data/relabel")) / "labels.parquet"
    if not src.is_file():
        _fail(DataError(src, "relabel labels not found (run `dvc repro relabel`)"))
    df = pd.read_parquet(src)
    missing = [c for c in ("uid", "status", "label") if c not in df.columns]
    if missing:
        _fail(DataError(src, f"missing column(s) {missing}"))
    if "split" in df.columns:
        df = df[df["split"] == "test"]
    target = out or _path(root, "data/compare/relabel_predictions.jsonl")
    counts = {}
    write_atomic(target, lambda p: counts.setdefault("n", compare.write_jsonl_predictions(df, p)))
    console.print(f"compare predictions: {counts['n']} predictions from {src} -> {target}")


def register(app: typer.Typer) -> None:
    """Add the ``compare`` group and ``evaluate`` to the main CLI."""
    app.add_typer(compare_app, name="compare")
    app.command("evaluate")(evaluate_command)
