"""Stage ``errata``: every implementation of ``report.errata.implementations`` held to the
conformance vectors and compared with the declared definitions on the v1.0 entities of all rows
(:mod:`medcalc_maintained.conformance.errata`).

Reads the ingest stage's v1.0 rows and the ``full`` config of every release (release-tables), for
the release whose label first follows the definition on a row whose v1.0 label carries an
implementation's error. Writes to ``report.errata.out``: ``errata.json`` (per implementation: its
vector score and every erratum with cases, consequence on v1.0 and adjudicated status) and
``errata.md`` (the same as a table people read; the docs show it, and every release from
``CONFORMANCE_FROM`` ships both beside the vectors).
Refuses, writing nothing, when an erratum has no adjudication in ``conformance/errata.yaml``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from medcalc_maintained.conformance import load_vectors, resolve
from medcalc_maintained.conformance.base import Implementation
from medcalc_maintained.conformance.errata import REGISTRY_FILE, ErrataReport, find_errata, markdown, unreviewed, unused
from medcalc_maintained.conformance.rows import V1Row, v1_rows
from medcalc_maintained.conformance.vectors import VectorFile, digest_of
from medcalc_maintained.core.atomic import replace_files
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.project import Project
from medcalc_maintained.release import upstream as follow
from medcalc_maintained.release.tables import load_config


def _labels(project: Project) -> dict[str, dict[int, str]]:
    out = {}
    for release in follow.plan_for(project).releases:
        full = load_config(project, release.version, "full")
        out[release.version] = {int(r): str(a) for r, a in zip(full["Row Number"], full["Ground Truth Answer"])}
    return out


def refuse_unadjudicated(reports: list[ErrataReport]) -> None:
    """A :class:`DataError` naming every erratum ``errata.yaml`` does not adjudicate as it is now, and
    every adjudication no erratum has any longer (none: nothing)."""
    where = f"src/medcalc_maintained/conformance/{REGISTRY_FILE}"
    pending = [e for r in reports for e in unreviewed(r)]
    if pending:
        raise DataError(where, f"{len(pending)} erratum(s) not adjudicated as they are now: " + "; ".join(
            f"{e.implementation} calculator {e.calculator_id}" + (f" ({e.reason})" if e.reason else "")
            for e in pending) + "; check each against its cited source, then write its status, reason and counts; "
            "nothing written")
    stale = unused(reports)
    if stale:
        raise DataError(where, f"{len(stale)} adjudication(s) of no erratum: " + ", ".join(
            f"{impl} calculator {cid}" for impl, cid in stale) + "; remove them; nothing written")


def _writer(text: str) -> Callable[[Path], object]:
    return lambda path: path.write_text(text, encoding="utf-8")


def errata_of(project: Project, impl: Implementation, files: list[VectorFile], digest: str, *,
              rows: list[V1Row] | None = None, labels: dict[str, dict[int, str]] | None = None) -> ErrataReport:
    """The errata of ``impl`` on ``files`` and on the v1.0 entities of every row (the ingest stage's),
    each with the first release whose label follows the definition (the release-tables stage's).
    ``rows`` and ``labels``, when given, are those already read (a run over several implementations
    reads them once)."""
    if rows is None:
        rows = v1_rows(read_parquet(project.instances, "instances", "ingest"))
    if labels is None:
        labels = _labels(project)
    return find_errata(impl, files, rows, release_labels=labels, digest=digest)


def run(project: Project, *, out: Path | None = None) -> tuple[list[ErrataReport], Path]:
    target = Path(out) if out is not None else project.errata_dir
    files = load_vectors()
    digest = digest_of(files)
    rows = v1_rows(read_parquet(project.instances, "instances", "ingest"))
    labels = _labels(project)
    reports = []
    for spec in project.section("report.errata")["implementations"]:
        impl = resolve(str(spec))
        try:
            reports.append(errata_of(project, impl, files, digest, rows=rows, labels=labels))
        finally:
            impl.close()
    refuse_unadjudicated(reports)
    implementations = [r.as_dict() for r in reports]
    doc = {"vectors_sha256": digest, "implementations": implementations}
    texts = {"errata.json": json.dumps(doc, indent=1, ensure_ascii=False) + "\n",
             "errata.md": markdown(implementations),
             }
    replace_files(target, {name: _writer(text) for name, text in texts.items()})
    return reports, target
