"""What every command-line module shares: the consoles, the error exit, and project paths."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

console = Console(stderr=False)
err = Console(stderr=True)


def fail(exc: object, code: int = 2) -> None:
    """Print an input problem (one line per problem when the error lists several) and exit."""
    problems = getattr(exc, "problems", None)
    if problems and len(problems) > 1:
        for p in problems[:50]:
            err.print(f"  {escape(str(p))}", highlight=False, soft_wrap=True)
        err.print(f"[bold red]error:[/] {len(problems)} problem(s); nothing written", highlight=False)
    else:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def fail_ledger(exc: object) -> None:
    """Print every ledger problem, then one line naming the first problem's file, and exit 2."""
    from medcalc_maintained.core.io import DataError

    problems = list(getattr(exc, "problems", []))
    for prob in problems[:50]:
        err.print(f"  {escape(str(prob))}", highlight=False, soft_wrap=True)
    fail(DataError(problems[0].path, f"{len(problems)} ledger problem(s); nothing written"))


def project_path(root: Path, value: str | Path) -> Path:
    """``value`` as given when absolute, else relative to the project root."""
    p = Path(value)
    return p if p.is_absolute() else root / p
