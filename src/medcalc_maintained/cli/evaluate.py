"""Command line of ``evaluate`` (paper section 4): grade a predictions file under label versions.

Argument parsing and printing only: the work is done by
:func:`medcalc_maintained.stages.evaluate_example.evaluate`. The tables printed here are also
``regrade``'s and ``compare example``'s (:func:`print_report`, :func:`print_evaluation`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.core.errors import DataError


def share(k, n) -> str:
    """``k`` of ``n`` as a percentage (``n/a`` when either is missing)."""
    return "n/a" if k is None or k != k or not n else f"{k / n:.1%}"


def _table(title: str, names: tuple[str, ...], numbers: tuple[str, ...], lines: bool = False) -> Table:
    """A table readable at 80 columns: the ``names`` columns (label sets, graders: text from the
    report, never read as markup) wrap at spaces, the ``numbers`` columns keep their width, so a
    narrow terminal folds a name onto two lines rather than cutting a header to ``lab…``."""
    table = Table(title=escape(title), show_lines=lines)
    for col in names:
        table.add_column(col, overflow="fold")
    for col in numbers:
        table.add_column(col, justify="right", no_wrap=True)
    return table


def _ci(lo, hi, sign: str = "") -> str:
    return f"{lo:{sign}.1%}–{hi:{sign}.1%}"


def print_report(report, compliance=None, *, to: Console | None = None) -> None:
    """evaluate's tables, each readable at 80 columns; with ``compliance`` (regrade's table), a
    table of the tagged and parsable shares of each label set's scored outputs. A label set graded
    by several graders is named ``VERSION [GRADER]`` as in the files (evaluation.json, the CSVs).
    ``to``: the console (default: the command line's)."""
    out = to or console
    accuracy = _table(f"accuracy of {report.n_predictions} predictions, per label set on the rows it labels",
                      ("label set",), ("scored", "correct", "accuracy", "95% CI"))
    errors = _table("errors and skipped rows, per label set (severe: another decision band than the label)",
                    ("label set",), ("wrong", "N/A", "unparsable", "severe", "skipped"))
    for r in report.accuracy.to_dict("records"):
        name = escape(str(r["label_set"]))
        skipped = (r["skipped_no_prediction"] + r["skipped_unlabelled_in_this_version"]
                   + r["skipped_not_in_this_label_set"])
        accuracy.add_row(name, str(r["n"]), str(r["correct"]), f"{r['accuracy']:.1%}", _ci(r["ci_low"], r["ci_high"]))
        errors.add_row(name, str(r["wrong"]), str(r["abstained"]), str(r["unparsable"]), str(r["severe_errors"]),
                       str(skipped))
        out.print(f"[dim]{name}: skipped {r['skipped_no_prediction']} without prediction, "
                  f"{r['skipped_unlabelled_in_this_version']} unlabelled in this version, "
                  f"{r['skipped_not_in_this_label_set']} not in this label set; errors by severity "
                  + ", ".join(f"{lv} {r['errors_' + lv]}" for lv in ("L0", "L1", "L2", "L3"))
                  + f", unknown {r['errors_without_level']}[/]")
    out.print(accuracy)
    out.print(errors)
    if len(report.abstention):
        _print_abstention(report, out)
    if compliance is not None:
        _print_compliance(compliance, out)
    if len(report.accuracy) > 1:
        common = _table(f"common rows ({report.n_common}, scored under every label set)", ("label set",),
                        ("correct", "accuracy", "95% CI"))
        for r in report.common.to_dict("records"):
            common.add_row(escape(str(r["label_set"])), str(r["correct"]), f"{r['accuracy']:.1%}",
                           _ci(r["ci_low"], r["ci_high"]))
        out.print(common)
    if len(report.comparisons):
        comp = _table(f"paired comparison of label sets A and B on the {report.n_common} common rows (McNemar "
                      f"exact test; A − B: accuracy of A minus B); {len(report.flips)} flips", ("A / B",),
                      ("A only", "B only", "A − B", "95% CI", "p"), lines=True)
        for r in report.comparisons.to_dict("records"):
            comp.add_row(escape(f"{r['a']}\n{r['b']}"), str(r["a_only"]), str(r["b_only"]),
                         f"{r['difference']:+.1%}", _ci(r["diff_ci_low"], r["diff_ci_high"], "+"),
                         f"{r['mcnemar_p']:.3g}")
        out.print(comp)
    if len(report.decomposition):
        _print_decomposition(report, out)
    if report.steps is not None:
        _print_steps(report.steps, out)
    for note in report.notes:
        out.print(f"[dim]{escape(note)}[/]")


def _print_abstention(report, out: Console) -> None:
    table = _table("refusals (answer N/A), apart from accuracy: warranted on the N/A rows, unwarranted on the "
                   "answerable rows (abstention.csv)", ("label set",),
                   ("N/A rows", "refused", "answerable", "refused", "accuracy"))
    for r in report.abstention.to_dict("records"):
        table.add_row(escape(str(r["label_set"])), str(r["na_rows"]), share(r["refused_na"], r["na_rows"]),
                      str(r["answerable_rows"]), share(r["refused_answerable"], r["answerable_rows"]),
                      "n/a" if r["accuracy_answerable"] != r["accuracy_answerable"] else f"{r['accuracy_answerable']:.1%}")
    out.print(table)


def _print_steps(steps, out: Console) -> None:
    """The step-wise breakdown (evaluate/regrade --steps): per label set (a column each, so it fits 80
    columns), the right answers, those reached from wrong inputs and each class of wrong answer; then the
    blocks that could not be read, by kind."""
    names = list(steps.summaries)
    table = _table("how the answers were reached (--steps; steps.csv)", ("answers",), tuple(names))
    lines = [("step-graded rows", lambda s: str(s["rows"])), ("right", lambda s: str(s["classes"]["right"])),
             ("  with a readable <inputs> block", lambda s: str(s["right_with_readable_inputs"])),
             ("    of them from wrong inputs", lambda s: f"{s['right_from_wrong_inputs']} "
              f"({share(s['right_from_wrong_inputs'], s['right_with_readable_inputs'])})"),
             ("wrong: extraction", lambda s: str(s["classes"]["extraction"])),
             ("wrong: arithmetic", lambda s: str(s["classes"]["arithmetic"])),
             ("wrong: both", lambda s: str(s["classes"]["both"])),
             ("wrong: format (answer or <inputs>)", lambda s: str(s["classes"]["format"])),
             ("wrong: N/A given or withheld", lambda s: str(s["classes"]["abstention"])),
             ("wrong: unjudged", lambda s: str(s["classes"]["unjudged"]))]
    for label, cell in lines:
        table.add_row(label, *(cell(steps.summaries[n]) for n in names))
    out.print(table)
    for name, s in steps.summaries.items():
        b = s["block_problems"]
        out.print(f"[dim]{escape(name)}: accuracy {share(s['accuracy'], 1)}, counting a right answer only from right "
                  f"inputs {share(s['accuracy_from_right_inputs'], 1)}; <inputs> blocks: {b['absent']} absent, "
                  f"{b['not_json']} not JSON, {b['no_declared_input']} naming no declared input, {b['bad_unit']} with a "
                  f"unit the input cannot have; {s['rows_without_certified_inputs']} row(s) without a certified input "
                  "not step-graded; per calculator: steps_calculators.csv, steps.png[/]")


def _print_compliance(compliance, out: Console) -> None:
    table = _table("tag compliance of the scored outputs, per label set (compliance.csv)", ("label set",),
                   ("outputs", "tagged", "parsable"))
    for c in compliance.to_dict("records"):
        if c["scope"] == "label set":
            table.add_row(escape(str(c["name"])), str(c["outputs"]), share(c.get("tagged"), c.get("outputs")),
                          share(c.get("parsable"), c.get("outputs")))
    out.print(table)


def _print_decomposition(report, out: Console) -> None:
    from medcalc_maintained.scoring.evaluate import graded_name

    grid = _table(f"accuracy on the {report.n_common} common rows: label version x grader", ("labels",),
                  tuple(report.graders))
    labels = report.decomposition[report.decomposition["change"] == "labels"]
    versions = list(dict.fromkeys([*labels["from"], *labels["to"]]))
    common = dict(zip(report.common["label_set"], report.common["accuracy"]))
    for v in versions:
        grid.add_row(escape(v), *(f"{common[graded_name(v, g)]:.1%}" for g in report.graders))
    out.print(grid)
    dec = _table("the accuracy change due to labels and the change due to grading, separately (accuracy "
                 "before and after: the table above; decomposition.csv)", ("change", "held fixed", "from → to"),
                 ("difference", "95% CI"))
    for r in report.decomposition.to_dict("records"):
        dec.add_row(r["change"], escape(str(r["held_fixed"])), escape(f"{r['from']} → {r['to']}"),
                    f"{r['difference']:+.1%}", _ci(r["diff_ci_low"], r["diff_ci_high"], "+"))
    out.print(dec)


def print_evaluation(run) -> None:
    """`evaluate`'s tables and the files it wrote (also `compare example`'s)."""
    print_report(run.report)
    console.print(f"wrote {run.out_dir}/: evaluation.json, per_calculator.csv, per_status.csv, graded.csv, "
                  "flips.csv, skipped.csv, abstention.csv, accuracy.png"
                  + ("; steps.csv, steps_inputs.csv, steps_calculators.csv, steps.png" if run.report.steps is not None
                     else ""))


def evaluate_command(
    predictions: Path = typer.Argument(..., help='Predictions: JSONL, one {"uid": int, "output": str} per line ("answer" may stand for "output"), or CSV (.csv) with columns uid and output (or answer).'),
    against: list[str] = typer.Option(..., "--against", help="A label version; repeat it. A release version or tag (2.0.0, v2.0.0, v2.0 = the first release of the 2.0 line, v1.0 = release 1.0.0, the upstream v1.0 labels), a built release directory (build/release), or a parquet/CSV label file; NAME=ITEM names it."),
    subset: Optional[str] = typer.Option(None, "--subset", help="Score only the rows of this config of the releases (e.g. mini): the rows it holds in every release given that has it with rows (1.0.0's empty mini is scored on the mini rows of the other releases, and the output says so); refused when no release given has rows in it."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory; must not exist or be empty unless --force (default: a new directory under params compare.evaluate.runs, build/evaluations/)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Bootstrap seed (default: params compare.evaluate.seed)."),
    n_boot: Optional[int] = typer.Option(None, "--n-boot", help="Bootstrap resamples (default: params compare.evaluate.n_boot)."),
    grader: Optional[list[str]] = typer.Option(None, "--grader", help="A grading rule; repeat it: ours (default), upstream (MedCalc-Bench's check_correctness), helm (HELM's MedCalcBenchMetric, with its category defect), opencompass, inspect and lm-eval (the tools' stock tag matchers). With several, each label version is scored once per grader, and with two or more versions the change due to labels and the change due to grading are reported separately."),
    steps: bool = typer.Option(False, "--steps", help="Also grade how each output got there (prompt variant stepwise asks for an <inputs> JSON block before the answer): each stated input against the release's certified inputs, the answer against the calculator on the model's own stated inputs, and every wrong answer classed as extraction, arithmetic, both, format or abstention (steps*.csv, steps.png). Needs a release from 2.4.0 on among --against (config inputs)."),
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
    differs between versions), skipped.csv, abstention.csv, accuracy.png.

    **Refusals apart from accuracy** (abstention.csv, a table after the errors): on the rows
    labelled `N/A`, the share the model answered `N/A` (warranted); on the answerable rows, the
    share it answered `N/A` anyway (unwarranted), each with its 95% interval, and the accuracy on
    the answerable rows alone.

    **Graders** (`--grader`, repeatable; `grading/graders.py`): `ours` (the rule above),
    `upstream` (MedCalc-Bench's `check_correctness`: no abstention), `helm` (HELM's
    `MedCalcBenchMetric`, whose range check knows only the categories `physical` and `dosage
    conversion`, so every `lab` and `dosage` row scores 0: the output names this defect and counts
    its rows), `opencompass` (upstream's rule after OpenCompass's answer extraction), `inspect` and
    `lm-eval` (each tool's stock matcher on the `<answer>` tag: exact text, no tolerance; they need
    the inspect and lm-eval extras). How often each is wrong: docs/grader-check.md. With any
    grader but `ours` alone, each version is scored as `VERSION [GRADER]`; with two versions and two
    graders a 2x2 table of accuracy on the common rows and the change due to labels (per grader)
    and due to grading (per version), each with a paired bootstrap 95% interval, are printed and
    written to decomposition.csv and evaluation.json.
    """
    from medcalc_maintained.stages import evaluate_example as stage

    try:
        run = stage.evaluate(guarded(out), predictions, against, out_dir=out, seed=seed, n_boot=n_boot,
                             subset=subset, max_line_bytes=max_line_bytes, force=force, graders=grader,
                             steps=steps)
    except (DataError, ValueError) as exc:
        fail(exc)
    print_evaluation(run)


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` to the main CLI."""
    app.command("evaluate")(evaluate_command)
