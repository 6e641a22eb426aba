"""Stage ``upstream-diff``: the rows of the base upstream (``upstream.base``) paired with the rows
of the followed version (``upstream.version``), split by split.

Writes ``<upstream.diff_out>/<split>/row_map.csv``, ``summary.json`` and
``changes_per_calculator.png`` (see :mod:`medcalc_maintained.upstream.diff`); when the two versions
are the same, every row is matched to itself (``exact``, nothing changed). Splits absent from either
version are left out. Paths in ``summary.json`` are relative to the project root, so the files do
not depend on the checkout.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from medcalc_maintained.project import Project
from medcalc_maintained.upstream import diff as d


def _shown(project: Project, path: Path) -> str:
    try:
        return path.resolve().relative_to(project.root.resolve()).as_posix()
    except ValueError:
        return path.name


def pairs(project: Project) -> list[tuple[str, Path, Path]]:
    """``(split, base csv, followed csv)`` of every split both versions hold."""
    new = {s: p for s, p, _ in project.version_sources(project.upstream_version)}
    return [(s, p, new[s]) for s, p, _ in project.version_sources(project.upstream_base)
            if s in new and p.is_file() and new[s].is_file()]


def run(project: Project) -> dict[str, d.Diff]:
    """Diff every split; returns the diffs by split."""
    out = project.upstream_diff_dir
    if out.exists():
        shutil.rmtree(out)
    diffs: dict[str, d.Diff] = {}
    for split, old, new in pairs(project):
        result = d.diff_files(old, new)
        result.summary = {**result.summary, "old": _shown(project, old), "new": _shown(project, new),
                          "base": project.upstream_base, "version": project.upstream_version, "split": split}
        d.write(result, out / split)
        diffs[split] = result
    out.mkdir(parents=True, exist_ok=True)
    return diffs
