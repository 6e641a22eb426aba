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

from medcalc_maintained.core.versions import SEMVER
from medcalc_maintained.project import Project
from medcalc_maintained.release import upstream as follow
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


def run(project: Project) -> dict[str, list[Path]]:
    """Build and write the tables of every release; returns the files written, by version."""
    plan = follow.plan_for(project)  # releases.yaml, plus the MAJOR release on a newly followed upstream
    template = read_card(project)
    written: dict[str, list[Path]] = {}
    for rel in plan.releases:
        fingerprint = inputs_fingerprint(project, rel)
        t = build_tables(project, rel, plan.path)
        written[rel.version] = write_release_tables(project, t, fingerprint, release_state(t.tables, template, rel.version))
    _remove_unlisted(project, {r.version for r in plan.releases})
    return written
