"""The one way the project runs git (releases, the published history, dvc.lock's repair)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without ``GIT_*`` variables and without the user's or system's git
    configuration, so that what git writes does not depend on this machine; ``extra`` is added."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    env.update(extra)
    return env


def git(*args: str, cwd: Path | None = None, git_dir: Path | None = None, input: bytes | None = None,
        env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``git ARGS`` in ``cwd`` or on the repository ``git_dir`` (then with fixed line-ending
    settings and a clean environment unless ``env`` is given); output is captured as bytes.

    With ``check``, a non-zero exit raises :class:`~medcalc_maintained.core.errors.DataError` naming
    the repository and git's message.
    """
    from medcalc_maintained.core.errors import DataError

    head = ["git"]
    if git_dir is not None:
        head += [f"--git-dir={git_dir}", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false"]
        env = env or clean_env()
    proc = subprocess.run([*head, *args], cwd=cwd, input=input, capture_output=True, env=env)
    if check and proc.returncode != 0:
        where = git_dir if git_dir is not None else (cwd or Path.cwd())
        shown = args[0] if git_dir is not None else " ".join(args[:3])
        from medcalc_maintained.core.redact import redact

        raise DataError(where, redact(f"git {shown} failed: {proc.stderr.decode(errors='replace').strip()}"))
    return proc


def text(*args: str, **kw) -> str:
    """The stripped standard output of :func:`git`."""
    return git(*args, **kw).stdout.decode().strip()
