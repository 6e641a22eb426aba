"""Stage ``apply``: upstream instances + accepted ledger records -> maintained instances.

See :mod:`medcalc_maintained.ledger.apply` for what the output holds. The instances and the ledger
are those of the base upstream version (``upstream.base``, the one the ledger was decided on), so
every stage that joins the maintained labels with ingest, recompute, audit or relabel outputs sees
the same rows. When the project follows another upstream version, only the release tables are built
on it (with stage ``ledger-rebase``'s ledger: :mod:`medcalc_maintained.release.upstream`); the base
moves when the held records have been re-decided. Each record is checked first
(schema, uid exists in its split, ``old_value`` is the current label, values valid for the output
type, status consistent, at most one accepted record per row and release); any problem raises
:class:`~medcalc_maintained.ledger.LedgerError` listing them all, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from medcalc_maintained.core.atomic import write_parquet
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.ledger.published import load_published
from medcalc_maintained.project import Project


def run(project: Project, *, ledger: list[Path] | None = None, instances: Path | None = None,
        out_dir: Path | None = None, upto: str | None = None) -> tuple[pd.DataFrame, Path]:
    if out_dir is not None and Path(out_dir).exists() and not Path(out_dir).is_dir():
        raise DataError(out_dir, "exists and is not a directory (--out names the output directory); nothing written")
    inst = read_parquet(instances or project.instances, "instances", "ingest")
    maintained = build(inst, ledger or project.ledger_paths, upto=upto, history=load_published(project.published),
                       whole_ledger=ledger is None)
    target = Path(out_dir) / "instances.parquet" if out_dir else project.maintained
    if target.is_dir():
        raise DataError(target, "is a directory; nothing written")
    try:
        write_parquet(target, maintained)
    except OSError as exc:
        raise DataError(target, f"cannot be written ({exc.strerror or exc}); nothing written") from None
    return maintained, target
