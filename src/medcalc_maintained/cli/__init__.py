"""The ``medcalc-maintained`` command line: argument parsing and printing only.

Each module of this package adds its commands to the one :data:`app` through ``register(app)``;
the work itself is done by the stage and library modules they call.
"""

from __future__ import annotations

import typer

from medcalc_maintained.cli import (
    compare,
    conformance,
    dvc_deps,
    evaluate,
    harness,
    ledger,
    llm,
    lock,
    mcp,
    model,
    pipeline,
    regrade,
    release,
    review,
    upstream,
)
from medcalc_maintained.cli.common import guard_commands
from medcalc_maintained.cli.help_format import install as _install_help_format

_install_help_format()

app = typer.Typer(
    help=(
        "Maintain MedCalc-Bench labels like code: ingest the upstream split, apply the ledger of "
        "adjudicated corrections, audit, triage for physicians, validate and release."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)


@app.callback()
def _root() -> None:
    """Maintain MedCalc-Bench labels like code (see docs/pipeline.md for the pipeline)."""


for _module in (pipeline, llm, ledger, review, release, compare, evaluate, regrade, model, mcp, upstream, harness,
                conformance, lock, dvc_deps):
    _module.register(app)
guard_commands(app)  # a full disk ends any command with one line naming the file, exit 1
