"""Releases on a new upstream version: which upstream a release is built on, the MAJOR release
that following a new upstream version adds to the plan, and its changelog section.

Every release of ``releases.yaml`` is built on ``upstream`` (its field), by default the project's
``upstream.base``: ingest's instances and the ledger itself. When the project follows another
upstream version (``upstream.version``) and the latest release is not built on it,
:func:`plan_for` adds the next MAJOR release, built on that version from stage
``ledger-rebase``'s instances and rebased ledger (the rows are upstream's new rows: a new row set
is a major change). Its changelog lists upstream's changes (stage ``upstream-diff``'s counts)
separately from ours (the ledger records and how the rebase classed them). To publish it with
its own date and text, add it to ``releases.yaml`` with ``upstream: <version>``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterable, cast

import pandas as pd

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import bump
from medcalc_maintained.project import Project
from medcalc_maintained.release.plan import Release, Releases, load_releases

_Counts = Iterable[tuple[tuple[str, str], int]]  # rows per (column, reason)

SPLIT = "test"  # the split the row map and the rebase cover
_GIVEN = re.compile(r"^cannot parse .* as (\w+):", re.S)  # the reason without the cell's own value


def upstream_of(project: Project, release: Release) -> str:
    """The upstream version ``release`` is built on."""
    return release.upstream or project.upstream_base


def on_another_upstream(project: Project, release: Release) -> bool:
    """Whether ``release`` is built on an upstream version other than ``upstream.base``: its rows
    are not ingest's, so stage ``apply`` (which works on the base) has no twin of its labels."""
    return upstream_of(project, release) != project.upstream_base


def _followed(project: Project, release: Release) -> bool:
    if not on_another_upstream(project, release):
        return False
    up = upstream_of(project, release)
    if up != project.upstream_version:
        raise DataError(project.releases_file, f"is built on upstream {up!r}, but the project follows "
                        f"{project.upstream_version!r} from base {project.upstream_base!r} (set upstream.version)",
                        row=f"release {release.version}", field="upstream")
    return True


def instances_path(project: Project, release: Release) -> Path:
    """The instances ``release`` is built from."""
    return project.rebase_dir / "instances.parquet" if _followed(project, release) else project.instances


def ledger_paths(project: Project, release: Release) -> list[Path]:
    """The ledger ``release`` is built from: the rebased ledger on the followed version."""
    return [project.rebase_dir / "ledger"] if _followed(project, release) else project.ledger_paths


def plan_for(project: Project) -> Releases:
    """``releases.yaml``, plus the next MAJOR release when the followed upstream version is not the
    one the latest release is built on."""
    plan = load_releases(project.releases_file)
    latest, chosen = plan.latest, project.upstream_version
    if upstream_of(project, latest) == chosen:
        return plan
    version = bump(latest.version, "major")
    text = (f"Rebased onto upstream MedCalc-Bench {chosen} (from {upstream_of(project, latest)}): upstream's new rows "
            f"and labels, with the ledger records of {latest.version} carried to them where the row is unchanged. "
            "Records whose row upstream changed or removed are held for review, and those rows keep the "
            "upstream label as unverified.")
    return plan.with_draft(Release(version, latest.date, "major", text, latest.default_rows, None, chosen))


def quarantine_path(project: Project, release: Release) -> Path:
    """``quarantine.csv`` of the upstream ``release`` is built on: ingest's, or the rebase's."""
    return (project.rebase_dir if _followed(project, release) else project.instances.parent) / "quarantine.csv"


def quarantined(project: Project, release: Release) -> pd.DataFrame:
    """The quarantined row problems of ``release``'s upstream (empty when the file is absent)."""
    path = quarantine_path(project, release)
    if not path.is_file():
        return pd.DataFrame(columns=["split", "row_number", "column", "reason"])
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def quarantine_text(project: Project, release: Release) -> str:
    """One paragraph (and a table of reasons) on the upstream rows left out of ``release``
    because they do not parse: the card and the changelog of a followed version say it."""
    q = quarantined(project, release)
    up = upstream_of(project, release)
    if q.empty:
        return f"Every row of upstream MedCalc-Bench {up} parsed: no row is quarantined (left out)."
    rows = q.drop_duplicates(["split", "row_number"])
    q = q.assign(reason=[_GIVEN.sub(r"cannot parse as \1:", r) for r in q["reason"]])
    by_reason = (q.drop_duplicates(["split", "row_number", "column", "reason"]).groupby(["column", "reason"]).size()
                 .sort_values(ascending=False, kind="stable"))
    table = ["| column | reason | rows |", "|:--|:--|--:|"] + [f"| {_cell(c)} | {_cell(r)} | {n} |"
                                                              for (c, r), n in cast(_Counts, by_reason.items())]
    return (f"{len(rows)} row(s) of upstream MedCalc-Bench {up} are quarantined: they do not parse and are not in "
            "this release (`quarantine.csv` of the pipeline lists them):\n\n" + "\n".join(table))


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def changelog_section(project: Project, release: Release, previous: Release | None) -> list[str]:
    """Markdown lines: upstream's changes and the rebase of our records, for a release built on
    another upstream version than ``previous``; empty otherwise."""
    if previous is None or upstream_of(project, release) == upstream_of(project, previous):
        return []
    if upstream_of(project, release) != project.upstream_version:
        return []
    diff = _read(project.upstream_diff_dir / SPLIT / "summary.json")
    reb = _read(project.rebase_dir / "rebase_summary.json")
    if diff is None or reb is None:
        raise DataError(project.upstream_diff_dir, "upstream diff or rebase summary missing (run `dvc repro ledger-rebase`)")
    old, new = upstream_of(project, previous), upstream_of(project, release)
    out = [f"### Upstream changes (MedCalc-Bench {old} -> {new}, {SPLIT} split)", "",
           "What upstream changed, paired row by row with the row-identity rule (not our corrections): "
           f"{diff['old_rows']} rows before, {diff['new_rows']} after.", "",
           f"{quarantine_text(project, release)}", "",
           "| rows | count |", "|:--|--:|"]
    for k in ("matched_unchanged", "matched_changed", "added", "removed", "ambiguous", "ambiguous_new"):
        out.append(f"| {k.replace('_', ' ')} | {diff.get(k, 0)} |")
    out += ["", f"Matched rows ({diff['matched']}) where a field changed:", "", "| field | rows |", "|:--|--:|"]
    out += [f"| {f} | {n} |" for f, n in diff["changed"].items()]
    out += ["", f"### Our corrections carried to {new}", "",
            f"{reb.get('records', 0)} ledger record(s): {reb.get('carried', 0)} carried (uid renumbered), "
            f"{reb.get('upstreamed', 0)} upstreamed (upstream adopted our value), {reb.get('conflict', 0)} in "
            f"conflict and {reb.get('orphaned', 0)} orphaned. Upstreamed, conflicting and orphaned records are held "
            "(not applied): their rows carry the upstream label with Label Status `unverified` until reviewed again.", ""]
    return out


def add_to_changelog(text: str, project: Project, plan: Releases, version: str) -> str:
    """``text`` (CHANGELOG.md) with :func:`changelog_section` after the heading and description of
    each release up to ``version`` built on a new upstream version."""
    lines = text.split("\n")
    for rel in plan.upto(version):
        extra = changelog_section(project, rel, plan.previous(rel.version))
        if not extra:
            continue
        head = next((i for i, line in enumerate(lines) if line.startswith(f"## {rel.version} (")), None)
        if head is None:
            continue
        at = next((i + 1 for i in range(head + 2, len(lines)) if lines[i] == ""), len(lines))  # after the description
        lines[at:at] = extra
    return "\n".join(lines)
