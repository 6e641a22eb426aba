"""The builder of the release tables: every config of a release from the upstream instances and the ledger.

A release ``V`` is built from the untouched upstream instances plus the ledger records whose
``release`` is ``<= V`` (``apply.build(..., upto=V)``); a release built on another upstream version
than ``upstream.base`` uses that version's instances and the rebased ledger (:mod:`.upstream`). The
campaign records carry ``release: 2.0.0``, so building ``1.0.0`` applies none of them and ``2.0.0`` applies the imported
campaign. Records without a release (``unreleased``) are only part of a draft. When a release pins
``ledger_ref``, the git-tracked ledger paths are read at that ref with ``git archive`` into a
temporary directory (read-only); ledger paths that git does not track (the DVC-generated campaign
file) are read from the working tree, filtered by ``upto`` as always.

The configs and their layout are :mod:`medcalc_maintained.release.tables` (the stored side, what
readers import). Stage ``release-tables`` runs :func:`build_tables` once per release and ``dvc
repro``; ``release build`` (:mod:`medcalc_maintained.release.build`) reads those files through
:func:`load_tables` when they are current and builds the release here otherwise (and always for a
draft, whose unreleased records no stored table holds). No reader of a release imports this
module (``tests/architecture/test_layout.py`` checks it).
"""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from medcalc_maintained import ledger
from medcalc_maintained.calculators.severity import change_level
from medcalc_maintained.core import git
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import in_default
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.core.rows import UPSTREAM_COLUMNS, row_dicts
from medcalc_maintained.core.versions import UNRELEASED, rules, version_key
from medcalc_maintained.ledger import apply
from medcalc_maintained.ledger.derivation import row_derivations
from medcalc_maintained.ledger.published import load_published
from medcalc_maintained.project import Project
from medcalc_maintained.release import explanations, inputs_config, mini, proposals, row_evidence
from medcalc_maintained.release import upstream as follow
from medcalc_maintained.release.plan import Release
from medcalc_maintained.release.tables import (
    CORRECTION_COLUMNS,
    DEFAULT_COLUMNS,
    DERIVATION,
    DERIVATION_RECORD_COLUMNS,
    DERIVATION_STATUS,
    SOURCE_COLUMN,
    Tables,
    configs_of,
    is_missing,
    shown_path,
    stored_state,
    tables_from_files,
    typed_frame,
)

# --------------------------------------------------------------------------------------------
# the ledger of a release


@contextlib.contextmanager
def ledger_at(project: Project, release: Release, releases_path: Path) -> Iterator[list[Path]]:
    """The ledger paths of ``release``: the working tree, or the git-tracked ones at its ``ledger_ref``."""
    paths_now = follow.ledger_paths(project, release)
    if not release.ledger_ref:
        yield paths_now
        return
    root, ref = project.root, release.ledger_ref
    if git.git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", cwd=root, check=False).returncode != 0:
        raise DataError(releases_path, f"git ref {ref!r} does not exist in {root}", row=f"release {release.version}",
                        field="ledger_ref")
    with tempfile.TemporaryDirectory(prefix="medcalc-ledger-") as tmp:
        paths: list[Path] = []
        for p in paths_now:
            try:
                rel = p.resolve().relative_to(root).as_posix()
            except ValueError:
                paths.append(p)  # outside the repository: used as is
                continue
            if _tracked(root, ref, rel):
                archive = git.git("archive", "--format=tar", ref, "--", rel, cwd=root).stdout
                with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                    tar.extractall(tmp, filter="data")
                paths.append(Path(tmp) / rel)
            elif _tracked(root, "HEAD", rel):
                continue  # tracked now, absent at the ref: the ledger then had no such file
            elif p.exists():
                paths.append(p)  # not tracked by git (a DVC output): the release filter applies
        yield paths


def _tracked(root: Path, ref: str, rel: str) -> bool:
    proc = git.git("ls-tree", "-r", "--name-only", ref, "--", rel, cwd=root, check=False)
    return proc.returncode == 0 and bool(proc.stdout.strip())


def _keeps_history(project: Project, release: Release) -> bool:
    """Whether the ledger of ``release`` must keep the published history (:mod:`medcalc_maintained.ledger.published`):
    not a ledger read at a git ref or rebased onto another upstream version (its records are derived from the
    ledger that keeps it; they keep their published decisions all the same)."""
    return not (release.ledger_ref or follow.on_another_upstream(project, release))


def _records_table(records: list[ledger.Record], instances: pd.DataFrame, version: str, root: Path,
                   include_unreleased: bool = False) -> pd.DataFrame:
    key = version_key(version)
    chosen = [r for r in records if r.valid and (
        (r.release == UNRELEASED and include_unreleased)
        or (r.release != UNRELEASED and version_key(r.release) <= key))]
    names = {(str(s), int(u)): str(n) for s, u, n in zip(instances["split"], instances["uid"], instances["Calculator Name"])}
    rows_of = _severity_inputs(instances)
    derived = rules(version).derivations
    columns = CORRECTION_COLUMNS + (DERIVATION_RECORD_COLUMNS if derived else [])
    rows = []
    frame = ledger.records_frame(chosen) if chosen else pd.DataFrame()
    for d in row_dicts(frame):
        row = {c: d.get(c) for c in CORRECTION_COLUMNS}
        if derived:
            row.update(_derivation_fields(d))
        row["uid"] = int(d["uid"])
        row["Calculator Name"] = names.get((str(d["split"]), int(d["uid"])), "")
        row["blinded"] = bool(d.get("blinded"))
        row["ledger_file"] = shown_path(d.get("file"), root)
        row["change_severity"] = _record_severity(d, rows_of.get((str(d["split"]), int(d["uid"]))))
        if d.get("release") == UNRELEASED:
            row["release"] = version  # a draft: unreleased records are shown under the draft version
        for c in columns:
            if c not in ("uid", "blinded"):
                row[c] = None if is_missing(row[c]) else str(row[c])
        rows.append(row)
    out = pd.DataFrame(rows, columns=columns)
    if len(out):
        out["_k"] = out["release"].map(version_key)
        out = out.sort_values(["_k", "split", "uid", "id"], kind="stable").drop(columns="_k")
    return out.reset_index(drop=True)


def _derivation_fields(d: dict[str, Any]) -> dict[str, Any]:
    """The :data:`DERIVATION_RECORD_COLUMNS` of one flattened record (``inputs`` as JSON text)."""
    def get(key: str) -> Any:
        v = d.get(key)
        return None if not isinstance(v, (list, dict)) and is_missing(v) else v
    override, adjudicated = get("override") or {}, get("adjudicated") or {}
    inputs = get("inputs")
    return {"definition": get("definition"),
            "inputs": json.dumps(inputs, ensure_ascii=False, sort_keys=True) if inputs else None,
            "override_reason": override.get("reason"), "justification": get("justification"),
            "adjudicated_value": adjudicated.get("value"), "adjudicated_definition": adjudicated.get("definition"),
            "reconstruction": get("reconstruction")}


def _severity_inputs(instances: pd.DataFrame) -> dict[tuple[str, int], tuple[Any, str, Any]]:
    ents = instances["entities"] if "entities" in instances.columns else [None] * len(instances)
    return {(str(s), int(u)): (c, str(t), e) for s, u, c, t, e in
            zip(instances["split"], instances["uid"], instances["Calculator ID"], instances["Output Type"], ents)}


def _record_severity(d: dict[str, Any], row: tuple[Any, str, Any] | None) -> str | None:
    """``change_severity`` of a record: the level it states (apply has refused every stated level
    that differs from ``old_value`` -> ``new_value``, ``calculators/severity.py``), computed only for a
    record that states none. ``None`` for a row that does not exist."""
    if row is None:
        return None
    if not is_missing(d.get("change_severity")):
        return str(d["change_severity"])
    return change_level(row[0], str(d["old_value"]), str(d["new_value"]), row[1], row[2])


def _read_instances(project: Project, release: Release) -> pd.DataFrame:
    path = follow.instances_path(project, release)
    instances = read_parquet(path, "upstream instances", "ingest")
    missing = [c for c in UPSTREAM_COLUMNS + ["uid", "split"] if c not in instances.columns]
    if missing:
        raise DataError(path, f"missing column(s) {missing}")
    return instances


def _findings(project: Project, release: Release) -> dict:
    """The check findings of the release's instances (stage ``recompute`` checks the base version's
    instances: a release built on a followed upstream version gets none)."""
    if follow.instances_path(project, release) != project.instances:
        return {}
    return proposals.read_findings(project.findings)


def build_tables(project: Project, release: Release, releases_path: Path | None = None,
                 include_unreleased: bool = False) -> Tables:
    """Every config of ``release`` from the upstream instances and the ledger (raises on ledger
    problems): the ledger is applied once. ``include_unreleased`` also applies the records without
    a release (a draft)."""
    instances = _read_instances(project, release)
    history = load_published(project.published)  # read once: the records it keeps, their verdicts, this release's
    with ledger_at(project, release, releases_path or project.releases_file) as paths:
        collected = ledger.collect(paths)  # read once: applied, and the corrections config
        maintained = apply.build(instances, paths, upto=None if include_unreleased else release.version,
                                 collected=collected, history=history if _keeps_history(project, release) else None,
                                 frozen={v: p.verdicts for v, p in history.items()})
        records = collected[0]
        corrections = typed_frame(_records_table(records, instances, release.version, project.root, include_unreleased))
    maintained = maintained.sort_values(["split", "uid"], kind="stable").reset_index(drop=True)
    published = history.get(release.version)
    docs = row_derivations(maintained, instances, records, rules=release.rules,
                           frozen=published.verdicts if published else None) if release.rules.derivations else None
    texts, sources = explanations.explain(maintained, corrections, docs)
    maintained["Ground Truth Explanation"] = texts
    maintained[SOURCE_COLUMN] = sources
    if docs is not None:
        maintained[DERIVATION_STATUS] = [None if d is None else d["status"] for d in docs]
        maintained[DERIVATION] = [None if d is None else json.dumps(d, sort_keys=True, ensure_ascii=False) for d in docs]
        answers, found = proposals.row_proposals(maintained, instances, _findings(project, release))
        maintained[proposals.PROPOSED_ANSWER], maintained[proposals.PROPOSAL] = answers, found
    if docs is not None and release.rules.evidence_rows:
        maintained[row_evidence.EVIDENCE_STATUS], maintained[row_evidence.EVIDENCE] = \
            row_evidence.columns(project, maintained, instances, records, published.evidence if published else None)
    upstream = instances.sort_values(["split", "uid"], kind="stable").reset_index(drop=True)
    splits = sorted(str(s) for s in upstream["split"].unique())
    tables: dict[str, dict[str, pd.DataFrame]] = {c: {} for c in configs_of(release.version)}
    for s in splits:
        full = maintained[maintained["split"] == s].reset_index(drop=True)
        default = full if release.default_rows == "all" else full[full["Label Status"].map(in_default)]
        tables["default"][s] = typed_frame(default[DEFAULT_COLUMNS])
        tables["full"][s] = typed_frame(full)
        tables["original"][s] = typed_frame(upstream.loc[upstream["split"] == s, UPSTREAM_COLUMNS])
        tables["corrections"][s] = typed_frame(corrections[corrections["split"] == s])
        tables["mini"][s] = typed_frame(mini.select(tables["default"][s], s, project.mini_per_calculator,
                                                      release.version))
        if inputs_config.NAME in tables:
            tables[inputs_config.NAME][s] = typed_frame(inputs_config.table(tables["full"][s]))
    return Tables(release, splits, tables, corrections, project.mini_per_calculator)


def load_tables(project: Project, release: Release, releases_path: Path | None = None) -> Tables:
    """The tables of ``release``: from stage ``release-tables`` when its files are current, else
    built now (:func:`build_tables`)."""
    doc = stored_state(project, release)
    if doc is not None:
        return tables_from_files(project, release, doc)
    return build_tables(project, release, releases_path)
