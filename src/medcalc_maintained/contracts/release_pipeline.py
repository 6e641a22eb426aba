"""Contract views that tie a built release to what the pipeline builds and to the published history.

A manifest that hashes its own files proves only that they were not changed after it was written;
labels edited in ``build/release`` with the manifest, feed and Croissant file re-hashed would pass
every check of :mod:`.release_views`. So ``validate DIR`` (and ``release publish``, which runs it)
compares every config of the release with the tables the pipeline builds for the same version from
upstream and the ledger (stage ``release-tables`` when current; the command line builds them when
not, and for a draft with its unreleased records: ``release/build.py: pipeline_tables``), and checks
its ``corrections`` against the published history (:mod:`medcalc_maintained.ledger.published`):

``pipeline``   one row per (config, row) of the release or of the pipeline's tables:
               ``difference`` (null when the row is the pipeline's, value for value; else the first
               column that differs with both values, or which side lacks the row)
``published``  one row per record of ``corrections``: ``history_problem`` (null, or why the record
               rewrites a published release)
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.project import Project
from medcalc_maintained.release.tables import Tables, is_missing, row_keys

ID_COLUMNS = {"pipeline": ["config", "row"], "published": ["id"]}
MAX_SHOWN = 60


def _text(v: Any) -> str | None:
    return None if is_missing(v) else str(v)


def _short(v: str | None) -> str:
    return "null" if v is None else repr(v if len(v) <= MAX_SHOWN else v[:MAX_SHOWN] + "...")


def config_differences(built: pd.DataFrame, expected: pd.DataFrame, config: str) -> list[dict[str, Any]]:
    """One row per row of either frame: ``difference`` is null when the row is in both with equal
    values in every column (the columns of either), else names the first difference."""
    have = dict(zip(row_keys(built, config), row_dicts(built))) if not built.empty else {}
    want = dict(zip(row_keys(expected, config), row_dicts(expected))) if not expected.empty else {}
    columns = list(dict.fromkeys([*expected.columns, *built.columns]))
    out = []
    for key in sorted(set(have) | set(want)):
        a, b = have.get(key), want.get(key)
        if a is None:
            diff: str | None = "missing from the release (the pipeline builds it)"
        elif b is None:
            diff = "not a row the pipeline builds for this release"
        else:
            diff = next((f"column {c!r}: release {_short(_text(a.get(c)))}, pipeline {_short(_text(b.get(c)))}"
                         for c in columns if _text(a.get(c)) != _text(b.get(c))), None)
        out.append({"config": config, "row": key, "difference": diff})
    return out


def pipeline_view(configs: dict[str, pd.DataFrame], expected: Tables | None, version: Any) -> pd.DataFrame:
    """:func:`config_differences` of every config (``configs``: the release's rows by config); one
    failing row when the pipeline's tables of the release are not at hand."""
    if expected is None:
        return pd.DataFrame([{"config": "*", "row": "*", "difference": (
            f"the pipeline's tables of release {version} are not current, so nothing shows the release is what "
            "the pipeline builds: run `dvc repro release-tables`, or validate through `medcalc-maintained "
            "validate DIR` / `release publish`, which build them")}], columns=["config", "row", "difference"])
    rows: list[dict[str, Any]] = []
    for c in expected.configs:
        rows += config_differences(configs.get(c, pd.DataFrame()), expected.combined(c), c)
    return pd.DataFrame(rows, columns=["config", "row", "difference"])


def stored_tables(project: Project, manifest: dict[str, Any]) -> Tables | None:
    """The tables stage ``release-tables`` wrote for the release of ``manifest`` when they are
    current (a reader never applies the ledger: the command line builds them when they are not,
    ``release/build.py: pipeline_tables``); ``None`` otherwise, or for a draft."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.release import upstream as follow
    from medcalc_maintained.release.tables import stored_state, tables_from_files

    if manifest.get("draft"):
        return None
    try:
        rel = follow.plan_for(project).get(str(manifest.get("version")))
    except DataError:
        return None
    doc = stored_state(project, rel)
    return tables_from_files(project, rel, doc) if doc is not None else None


def published_view(corrections: pd.DataFrame, project: Project) -> pd.DataFrame:
    """Every record of the release's ``corrections`` with ``history_problem``."""
    from medcalc_maintained.ledger.published import load_published, release_row_problems

    if corrections.empty or "id" not in corrections.columns:
        return pd.DataFrame(columns=["id", "release", "history_problem"])
    rows = row_dicts(corrections)
    bad = release_row_problems(rows, load_published(project.published))
    return pd.DataFrame([{"id": str(r.get("id")), "release": _text(r.get("release")),
                          "history_problem": bad.get(str(r.get("id")))} for r in rows],
                        columns=["id", "release", "history_problem"])


__all__ = ["ID_COLUMNS", "config_differences", "pipeline_view", "published_view", "stored_tables"]
