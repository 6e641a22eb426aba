"""What every command-line module shares: the consoles, the error exit, and project paths."""

from __future__ import annotations

import errno
import functools
import os
from typing import Any, Callable, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from medcalc_maintained.core.redact import install_log_filter, redact

console = Console(stderr=False)
err = Console(stderr=True)
install_log_filter()  # nothing the logging module prints shows a secret


def fail(exc: object, code: int = 2) -> NoReturn:
    """Print an input problem (one line per problem when the error lists several; secrets masked
    by ``core.redact``) and exit."""
    problems = getattr(exc, "problems", None)
    if problems and len(problems) > 1:
        for p in problems[:50]:
            err.print(f"  {escape(redact(p))}", highlight=False, soft_wrap=True)
        err.print(f"[bold red]error:[/] {len(problems)} problem(s); nothing written", highlight=False)
    else:
        err.print(f"[bold red]error:[/] {escape(redact(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def fail_ledger(exc: object, *, path: str | os.PathLike[str] | None = None, what: str = "ledger problem(s)",
                code: int = 2) -> NoReturn:
    """Print every ledger problem, then one line naming ``path`` (default: the first problem's
    file) with the count of ``what``, and exit ``code``."""
    from medcalc_maintained.core.errors import DataError

    problems = list(getattr(exc, "problems", []))
    for prob in problems[:50]:
        err.print(f"  {escape(redact(prob))}", highlight=False, soft_wrap=True)
    fail(DataError(problems[0].path if path is None else path, f"{len(problems)} {what}; nothing written"), code=code)


def guarded(out: str | os.PathLike[str] | None, **options):
    """The project, after checking the command's ``--out`` with :meth:`Project.guard_out` (raises
    ``DataError`` for a target over or inside the hand-written ledger, ``data/`` or the root)."""
    from medcalc_maintained.project import Project

    project = Project.load()
    project.guard_out(out, **options)
    return project


def guarded_if_in_project(out: str | os.PathLike[str] | None):
    """Inside a project checkout, the project after :func:`guarded` checked ``out``; outside one (an
    installed package, no ``params.yaml`` to find), ``None``: there are no project paths to protect."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.project import Project

    try:
        project = Project.load()
    except (DataError, OSError):
        return None
    project.guard_out(out)
    return project


# Errors of a path the user named: one line (the file and the system's words) and exit 2, not a traceback.
PATH_ERRNOS = frozenset({errno.ENAMETOOLONG, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.ELOOP,
                         errno.EROFS, errno.ENOENT, errno.EEXIST})


def shown_path(path: object, limit: int = 160) -> str:
    """A path cut to about ``limit`` characters (a 4,000-character name is not printed whole)."""
    text = str(path)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-limit // 2:]}"


def no_space_exits(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` that, when a write fails for want of space, prints one line naming the file
    (``error: <file>: no space left on device; nothing written``) and exits 1 instead of a
    traceback; the writers (``core/atomic.py: naming_target``) have removed what they had begun. A
    path that cannot be used (:data:`PATH_ERRNOS`: a name too long, no permission...) is one line too,
    exit 2."""
    from medcalc_maintained.core.atomic import is_no_space

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except OSError as exc:
            if not is_no_space(exc):
                if exc.errno not in PATH_ERRNOS:
                    raise
                # a path the user gave that cannot be used (too long, not a directory, no permission...)
                where = exc.filename or "a file"
                err.print(f"[bold red]error:[/] {escape(redact(shown_path(where)))}: {exc.strerror or exc}; "
                          "nothing written", highlight=False, soft_wrap=True)
                raise typer.Exit(2) from None
            where = exc.filename or "a file being written"
            err.print(f"[bold red]error:[/] {escape(redact(where))}: no space left on device; nothing written",
                      highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None

    return run


def guard_commands(app: typer.Typer) -> None:
    """Wrap every command of ``app`` and of its sub-command groups with :func:`no_space_exits`."""
    for info in app.registered_commands:
        if info.callback is not None and not hasattr(info.callback, "__wrapped__"):
            info.callback = no_space_exits(info.callback)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            guard_commands(group.typer_instance)
