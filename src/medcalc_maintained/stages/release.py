"""Stage ``release``: the latest release of releases.yaml (or ``version``) as a Hugging Face
dataset repository in ``project.release_build``.

The tables come from stage ``release-tables`` when current (no ledger record is applied again);
otherwise they are built on the fly, with the same result byte for byte. See
:mod:`medcalc_maintained.release.build`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from medcalc_maintained.project import Project
from medcalc_maintained.release.build import BuildResult, build


def run(project: Project, out: Path | None = None, version: str | None = None, draft: bool = False,
        progress: Callable[[str], None] | None = None) -> BuildResult:
    default = project.release_draft if draft else project.release_build
    return build(project, Path(out) if out is not None else default, version=version, draft=draft,
                 progress=progress)
