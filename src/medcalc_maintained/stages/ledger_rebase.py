"""Stage ``ledger-rebase``: the ledger carried from the base upstream to the followed version.

When ``upstream.version`` is ``upstream.base`` this is a no-op: only ``rebase_summary.json``
(``noop: true``) is written, and the release tables read ingest's instances and the ledger itself
(:mod:`medcalc_maintained.release.upstream`), so the default pipeline's outputs are unchanged.
``apply`` and the analysis stages always work on the base version.

Otherwise, in ``<upstream.rebase_out>``:

``instances.parquet``   the followed version's instances (ingest's reading, with ``instance_key``)
``quarantine.csv``      its rows that do not parse (not ingested; records on them are conflicts).
                        The ceiling is ingest's: more than ``ingest.max_quarantine`` quarantined
                        problems fail the stage (naming the file, rows and reasons) before anything
                        is written. The release changelog and card count these rows with reasons
``ledger/``             the rebased ledger: the ``carried`` records, uid renumbered
``held/``               ``upstreamed``, ``conflict`` and ``orphaned`` records, unchanged, never applied
``rebase_report.csv``   every record: class, reason, old/new uid, both upstream labels
``rebase_summary.json`` counts per class

The row map is the one of stage ``upstream-diff`` (split ``test``; records of other splits are
conflicts). A held record is not applied, so its row keeps the new upstream label with Label
Status ``unverified`` until someone re-decides it against the new row: a conflict or an orphan
never applies silently (see :mod:`medcalc_maintained.upstream.rebase`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_json
from medcalc_maintained.core.csv_for_people import write_csv_for_people
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import read_upstream_csv
from medcalc_maintained.ledger.published import load_published
from medcalc_maintained.ledger.records import load
from medcalc_maintained.project import Project
from medcalc_maintained.stages.ingest import ingest
from medcalc_maintained.upstream.diff import Diff, diff_frames
from medcalc_maintained.upstream.rebase import Rebase, rebase

SPLIT = "test"


def read_row_map(project: Project, split: str = SPLIT) -> Diff:
    """The row map and summary that stage ``upstream-diff`` wrote for ``split``."""
    base = project.upstream_diff_dir / split
    path = base / "row_map.csv"
    if not path.is_file():
        raise DataError(path, "row map not found (run `dvc repro upstream-diff`)")
    rm = pd.read_csv(path, dtype={"changed_fields": "string", "basis": "string", "candidates": "string",
                                  "status": "string"})
    for c in ("changed_fields", "basis", "candidates"):
        rm[c] = rm[c].fillna("").astype(str)
    rm = rm.astype({"old_uid": "Int64", "new_uid": "Int64", "similarity": "Float64"})
    summary = json.loads((base / "summary.json").read_text(encoding="utf-8"))
    return Diff(rm, summary, [])


def check_quarantine(quarantine: pd.DataFrame, path, limit: int) -> None:
    """Raise :class:`DataError` when more than ``limit`` problems are quarantined: the ceiling of
    stage ``ingest`` (``ingest.max_quarantine``), naming the rows and their reasons."""
    if len(quarantine) <= limit:
        return
    rows = quarantine.drop_duplicates(["split", "row_number"])
    reasons = quarantine.groupby("reason", sort=True).size().sort_values(ascending=False, kind="stable")
    listed = "; ".join(f"{n}x {r}" for r, n in reasons.head(3).items())
    raise DataError(path, f"{len(quarantine)} row problem(s) on {len(rows)} row(s) would be quarantined, more than "
                    f"ingest.max_quarantine={limit} (rows {', '.join(map(str, rows['row_number'].head(10)))}"
                    f"{', ...' if len(rows) > 10 else ''}): {listed}")


def run(project: Project) -> dict[str, Any]:
    """Rebase (or, on the base version, record the no-op); returns the summary."""
    out = project.rebase_dir
    if project.follows_base:
        if out.exists():
            shutil.rmtree(out)
        summary = {"base": project.upstream_base, "onto": project.upstream_version, "noop": True,
                   "records": len(load([p for p in project.ledger_paths if p.exists()]))}
        write_json(out / "rebase_summary.json", summary)
        return summary
    old = dict((s, p) for s, p, _ in project.version_sources(project.upstream_base))
    new_sources = [(s, p) for s, p, req in project.version_sources(project.upstream_version) if p.is_file() or req]
    new = dict(new_sources)
    if SPLIT not in old or SPLIT not in new:
        raise DataError(project.params_file, f"split {SPLIT!r} is needed in both upstream versions", field="upstream.splits")
    diff = read_row_map(project)
    ingested = ingest(new_sources)
    check_quarantine(ingested.quarantine, new[SPLIT], int(project.param("ingest.max_quarantine")))
    if out.exists():
        shutil.rmtree(out)
    inst = ingested.instances
    result = rebase(project.ledger_paths, diff, read_upstream_csv(old[SPLIT]), read_upstream_csv(new[SPLIT]), inst, out,
                    onto=project.upstream_version, split=SPLIT, published=load_published(project.published).keys())
    write_atomic(out / "instances.parquet", lambda p: inst.to_parquet(p, index=False))
    write_csv_for_people(out / "quarantine.csv", ingested.quarantine)
    summary = {"base": project.upstream_base, **result.summary, "noop": False, "rows": len(inst),
               "quarantined_rows": int(ingested.quarantine[["split", "row_number"]].drop_duplicates().shape[0])}
    write_json(out / "rebase_summary.json", summary)
    return summary


def rebase_files(project: Project, base: Path | None, onto: Path, out: Path, *, ledger: list[Path] | None = None,
                 split: str = SPLIT, progress: Callable[[str], None] | None = None) -> Rebase:
    """``ledger rebase --onto``: the ledger (``ledger``, default the project's) carried from the upstream
    CSV ``base`` (default: the project's file of ``split``) to the upstream CSV ``onto``, matched here
    (no row map of stage ``upstream-diff``), into the new directory ``out``. ``progress`` is told each
    step ("matching rows", then "rebasing and checking the rebased ledger"). Raises
    :class:`~medcalc_maintained.ledger.LedgerError` when the rebased ledger does not apply (its
    problems name files under ``out``) and :class:`DataError` for an unreadable file."""
    say = progress or (lambda step: None)
    base_path = base if base is not None else dict((s, p) for s, p, _ in project.upstream_sources())[split]
    say("matching rows")
    old_df, new_df = read_upstream_csv(base_path), read_upstream_csv(onto)
    diff = diff_frames(old_df, new_df)
    new_inst = ingest([(split, onto)]).instances
    say("rebasing and checking the rebased ledger")
    return rebase(list(ledger) if ledger else project.ledger_paths, diff, old_df, new_df, new_inst, out,
                  onto=str(onto), split=split)
