"""The command line's click command built once per app and shape, for every test's ``CliRunner().invoke``.

typer's ``CliRunner.invoke(app, ...)`` turns the Typer app into its click command on every call, reading
the signatures of every command again each time (the fast tier in one process took 99.8 s so, 85.6 s with
one build per app). The command is the same for the same app, and a real process builds it once
(``app()``), so this plugin (loaded by the root ``conftest.py``) keeps it per app, built again when the app
gains or loses a command, group or callback (a test that builds its own small app and extends it).
Invocation itself is untouched: each ``invoke`` parses its arguments in a fresh click context.
"""

from __future__ import annotations

from typing import Any

import typer.main
import typer.testing

_BUILD = typer.main.get_command
_BUILT: dict[int, tuple[Any, tuple, Any]] = {}  # id(app) -> (app, its shape when built, command)


def _shape(app: typer.Typer) -> tuple:
    return (tuple(id(c) for c in app.registered_commands), tuple(id(g) for g in app.registered_groups),
            id(app.registered_callback), id(app.info.callback))


def command(app: typer.Typer):
    """The click command of ``app``: built once per app while its commands, groups and callback stay the same."""
    shape = _shape(app)
    kept = _BUILT.get(id(app))
    if kept is not None and kept[0] is app and kept[1] == shape:
        return kept[2]
    built = _BUILD(app)
    _BUILT[id(app)] = (app, shape, built)
    return built


def pytest_configure(config) -> None:
    typer.testing._get_command = command  # what CliRunner.invoke calls (typer/testing.py imports it by name)
