"""Stage ``release-tables``: every config of every release of releases.yaml, built once.

For each release, the ledger is applied once (:func:`~medcalc_maintained.release.table_builder.build_tables`)
and each config (default, full, original, corrections) is written with all its splits to
``project.release_table(version, config)`` (``<release.tables>/<version>/<config>.parquet``, the
release's fixed column types), with ``state.json`` beside it: the inputs' fingerprint, the splits,
the column layout, the row counts and the release state. Stage ``release`` and the readers
(:func:`~medcalc_maintained.release.tables.load_config`) use these files instead of applying the
ledger again; a reader refuses them, saying to run this stage, once the inputs changed. Directories of versions no longer in releases.yaml are removed.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Sequence

from medcalc_maintained.core.parallel import map_chunks
from medcalc_maintained.core.versions import SEMVER
from medcalc_maintained.project import Project
from medcalc_maintained.release import upstream as follow
from medcalc_maintained.release.plan import Release
from medcalc_maintained.release.state import read_card, release_state
from medcalc_maintained.release.table_builder import build_tables
from medcalc_maintained.release.tables import STATE_FILE, inputs_fingerprint, write_release_tables


def _remove_unlisted(project: Project, versions: set[str]) -> None:
    base = project.release_tables
    if not base.is_dir():
        return
    for d in base.iterdir():
        if d.is_dir() and SEMVER.match(d.name) and d.name not in versions and (d / STATE_FILE).is_file():
            shutil.rmtree(d)


def run(project: Project, *, workers: int | None = 1, progress: str | None = None) -> dict[str, list[Path]]:
    """Build and write the tables of every release; returns the files written, by version. The releases
    are independent (each reads the upstream instances and the ledger, and writes its own folder), so
    they can be built in ``workers`` processes, one release at a time each: ``None`` is one per core, what
    the stage's command asks for; a caller in its own process (a test beside others) builds them here by
    default. ``progress``: a progress bar's description."""
    plan = follow.plan_for(project)  # releases.yaml, plus the MAJOR release on a newly followed upstream
    template = read_card(project)

    def build(releases: Sequence[Release]) -> list[tuple[str, list[Path]]]:
        out = []
        for rel in releases:
            fingerprint = inputs_fingerprint(project, rel)
            t = build_tables(project, rel, plan.path)
            out.append((rel.version, write_release_tables(project, t, fingerprint,
                                                          release_state(t.tables, template, rel.version))))
        return out

    written = dict(map_chunks(build, plan.releases, workers=workers, chunk=1, rows_per_worker=1, progress=progress))
    _remove_unlisted(project, {r.version for r in plan.releases})
    return written
