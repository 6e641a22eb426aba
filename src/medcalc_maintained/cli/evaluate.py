"""Command line of ``evaluate`` (paper section 4): grade a predictions file under label versions.

Argument parsing and printing only: the work is done by
:func:`medcalc_maintained.stages.evaluate_example.evaluate`. The tables printed here are also
``regrade``'s and ``compare example``'s (:func:`print_report`, :func:`print_evaluation`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.core.errors import DataError


def share(k, n) -> str:
    """``k`` of ``n`` as a percentage (``n/a`` when either is missing)."""
    return "n/a" if k is None or k != k or not n else f"{k / n:.1%}"


def print_report(report, compliance=None) -> None:
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
        beside = (share(c.get("tagged"), c.get("outputs")), share(c.get("parsable"), c.get("outputs"))) if shares else ()
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


def print_evaluation(run) -> None:
    """`evaluate`'s tables and the files it wrote (also `compare example`'s)."""
    print_report(run.report)
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
    print_evaluation(run)


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` to the main CLI."""
    app.command("evaluate")(evaluate_command)
