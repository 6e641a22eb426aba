"""Command line of ``regrade``: re-grade a harness's saved results under each release and grader.

Argument parsing and printing only: the work is done by :mod:`medcalc_maintained.scoring.regrade`;
the accuracy tables are ``evaluate``'s (:func:`medcalc_maintained.cli.evaluate.print_report`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from medcalc_maintained.cli.common import console, fail, guarded
from medcalc_maintained.cli.evaluate import print_report, share
from medcalc_maintained.core.errors import DataError


def regrade_command(
    results: list[Path] = typer.Argument(..., help="Saved results of a harness run: an lm-eval samples_<task>_<date>.jsonl, an Inspect log (.eval/.json), a HELM run directory, a verifiers results directory (results.jsonl + metadata.json), MedCalc-Bench's run.py output (JSONL), or evaluate's predictions (JSONL/CSV). Several: the parts of one run (one output per row over all of them)."),
    against: Optional[list[str]] = typer.Option(None, "--against", help="A label version to re-score under; repeat it (as for evaluate: a release version or tag, a built release directory, or a label file; NAME=ITEM names it). Default: v1.0 and the latest release of releases.yaml. The first release given identifies the rows."),
    grader: Optional[list[str]] = typer.Option(None, "--grader", help="A grading rule to re-score with; repeat it: ours, upstream, helm, opencompass, inspect, lm-eval (default: ours, plus the harness's own rule when it is another, e.g. upstream for MedCalc-Bench's run.py output)."),
    fmt: Optional[str] = typer.Option(None, "--format", help="The results' format when its detection is not wanted: lm-eval, inspect, helm, verifiers, upstream, eee (Every Eval Ever), jsonl, csv."),
    out: Optional[Path] = typer.Option(None, "--out", help="Output directory; must not exist or be empty unless --force (default: a new directory under params compare.evaluate.runs, build/evaluations/)."),
    force: bool = typer.Option(False, "--force", help="Replace a non-empty --out that holds an earlier regrade (only its files)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Bootstrap seed (default: params compare.evaluate.seed)."),
    n_boot: Optional[int] = typer.Option(None, "--n-boot", help="Bootstrap resamples (default: params compare.evaluate.n_boot)."),
    steps: bool = typer.Option(False, "--steps", help="Also grade how each output got there, as `evaluate --steps` does: the inputs its <inputs> block states against the release's certified inputs, its answer against the calculator on its own stated inputs (needs a release from 2.4.0 on among --against)."),
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
    accuracy.png, flips, refusals on N/A and on answerable rows apart from accuracy (abstention.csv),
    and with two versions and two graders the change due to labels apart from the change due to
    grading), with the **tag compliance**: the share of outputs with an `<answer>`
    tag and the share whose answer parses, per label set (a table after the accuracy tables), per
    calculator and overall (compliance.csv). MedCalc-Bench's run.py keeps only its extracted answer, so no tag is
    counted there, and its `N/A` (no answer found) is read as no answer, not as an abstention.

    **Output**: evaluate's files plus regrade.json (inputs, reproductions, compliance, the EEE files),
    reproduction.csv, compliance.csv and eee/LABEL-SET.jsonl: the re-graded rows as Every Eval Ever
    instance-level logs, each with the release tag and the content hash of the labels it was graded
    against. RESULTS may itself be an Every Eval Ever instance-level file (its converters' output
    from lm-eval, Inspect or HELM): its rows are found by the note and question of their prompt.
    """
    from medcalc_maintained.core.out_dirs import new_run_dir
    from medcalc_maintained.scoring.regrade import regrade

    try:
        project = guarded(out)
        report, where = regrade(project, results, against, out_dir=out or new_run_dir(project.evaluation_runs), graders=grader,
                                fmt=fmt, force=force, seed=seed, n_boot=n_boot, steps=steps)
    except (DataError, ValueError) as exc:
        fail(exc)
    for rep in report.reproductions:
        console.print(("[green]" if rep.exact else "[yellow]") + escape(rep.message) + "[/]")
    print_report(report.evaluation, report.compliance)
    overall = report.compliance.iloc[0]
    console.print(f"tag compliance over {overall['outputs']} outputs: {share(overall['tagged'], overall['outputs'])} "
                  f"with an <answer> tag, {share(overall['parsable'], overall['outputs'])} with a parsable answer")
    console.print(f"wrote {where}/: regrade.json, reproduction.csv, compliance.csv, evaluation.json, "
                  "per_calculator.csv, per_status.csv, graded.csv, flips.csv, skipped.csv, abstention.csv, accuracy.png")


def register(app: typer.Typer) -> None:
    """Add ``regrade`` to the main CLI."""
    app.command("regrade")(regrade_command)
