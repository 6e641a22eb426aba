"""The configs of a release, built from the upstream instances and the ledger, and their files.

A release ``V`` is built from the untouched upstream instances plus the ledger records whose
``release`` is ``<= V`` (``apply.build(..., upto=V)``); a release built on another upstream version
than ``upstream.base`` uses that version's instances and the rebased ledger (:mod:`.upstream`). The
campaign records carry ``release: 2.0.0``, so building ``1.0.0`` applies none of them and ``2.0.0`` applies the imported
campaign. Records without a release (``unreleased``) are only part of a draft. When a release pins
``ledger_ref``, the git-tracked ledger paths are read at that ref with ``git archive`` into a
temporary directory (read-only); ledger paths that git does not track (the DVC-generated campaign
file) are read from the working tree, filtered by ``upto`` as always.

Configs: ``default`` (the rows whose label is the release's reference: ``Label Status !=
unverified``, or *every* row when the release says ``default_rows: all``), ``full`` (every row with
the maintained columns), ``original`` (the upstream v1.0 columns verbatim) and ``corrections`` (one
row per ledger record of the releases up to this one, with its ``change_severity``) and ``mini`` (a
stratified subset of ``default``, :mod:`medcalc_maintained.release.mini`). ``full`` carries ``Change
Severity`` (original -> maintained label, ``L0`` when unchanged). ``default``, ``full`` and ``mini``
carry the explanation that matches their label and its ``Explanation Source``
(:mod:`medcalc_maintained.release.explanations`). Every release has every config; a config
without rows (``corrections`` and ``mini`` of the 1.0.0 baseline) is a parquet file with no rows.

Stage ``release-tables`` writes every config of every release once per ``dvc repro``
(:func:`write_release_tables`: ``<release.tables>/<version>/<config>.parquet`` with all splits, and
``state.json``); :func:`load_tables` and :func:`load_config` read them when they are current and
build the release on the fly otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from medcalc_maintained import ledger
from medcalc_maintained.calculators.severity import change_level
from medcalc_maintained.core.io import DataError, read_parquet, sha256_file, write_atomic
from medcalc_maintained.core.rows import UPSTREAM_COLUMNS, row_dicts
from medcalc_maintained.core.versions import UNRELEASED, has_derivations, has_evidence_gate, version_key
from medcalc_maintained.ledger import apply
from medcalc_maintained.ledger.derivation import row_derivations
from medcalc_maintained.project import Project
from medcalc_maintained.release import explanations, git, mini, proposals
from medcalc_maintained.release import upstream as follow
from medcalc_maintained.release.plan import Release, Releases

CONFIGS = ("default", "full", "original", "corrections", "mini")
DERIVATION_STATUS, DERIVATION = "Derivation Status", "Derivation"  # full, from DERIVATIONS_FROM on
DEFAULT_COLUMNS = UPSTREAM_COLUMNS + ["Label Status", explanations.SOURCE_COLUMN]
CORRECTION_COLUMNS = [
    "id", "release", "split", "uid", "Calculator Name", "old_value", "new_value", "decision", "label_status",
    "change_severity", "error_type", "source", "reviewer_id", "reviewer_role", "reviewer_specialty", "proposed_by_id", "proposed_by_role",
    "proposed_by_specialty", "blinded", "decided_at",
    "rationale", "evidence", "scoring_timepoint", "guideline_version", "second_opinion", "ledger_file",
]
# the derivation of each record, in ``corrections`` from DERIVATIONS_FROM on
DERIVATION_RECORD_COLUMNS = ["definition", "inputs", "override_reason", "justification", "adjudicated_value",
                             "adjudicated_definition", "reconstruction"]
INT_COLUMNS = {"uid", "calculator_id", "Row Number", "Calculator ID"}  # integers, as upstream publishes them
BOOL_COLUMNS = {"blinded"}
TABLES_FORMAT = 3  # bump when the stored tables' layout or content rules change
STATE_FILE = "state.json"


# --------------------------------------------------------------------------------------------
# column types


def is_missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


def typed_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with the release's column types: nullable text (``string``), ``int64`` keys and
    ``boolean`` flags, so that readers get the same dtypes as the pipeline's parquet outputs."""
    out = pd.DataFrame(index=range(len(df)))
    for c in df.columns:
        values = df[c].tolist()
        if c in INT_COLUMNS:
            out[c] = pd.array([int(v) for v in values], dtype="int64")
        elif c in BOOL_COLUMNS:
            out[c] = pd.array([None if is_missing(v) else bool(v) for v in values], dtype="boolean")
        else:
            out[c] = pd.array([None if is_missing(v) else str(v) for v in values], dtype="string")
    return out


def arrow_table(df: pd.DataFrame) -> pa.Table:
    """A frame as an Arrow table with fixed types (string, int64, bool)."""
    typed = typed_frame(df)
    fields = [pa.field(c, pa.int64() if c in INT_COLUMNS else pa.bool_() if c in BOOL_COLUMNS else pa.string())
              for c in typed.columns]
    return pa.Table.from_pandas(typed, schema=pa.schema(fields), preserve_index=False)


def write_parquet(df: pd.DataFrame, path: Path) -> Path:
    """``df`` with the release's column types to ``path`` (atomically), with fixed parquet
    settings: the same frame always gives the same bytes."""
    table = arrow_table(df)
    return write_atomic(path, lambda p: pq.write_table(
        table, p, compression="zstd", compression_level=9, row_group_size=max(1, len(df)), use_dictionary=True,
        write_statistics=True, store_schema=True))


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


# --------------------------------------------------------------------------------------------
# tables


@dataclass
class Tables:
    """The configs of one release: ``tables[config][split]`` is a typed frame (:func:`typed_frame`)
    sorted by uid (``mini`` in the order of :func:`medcalc_maintained.release.mini.select`)."""

    release: Release
    splits: list[str]
    tables: dict[str, dict[str, pd.DataFrame]]
    records: pd.DataFrame  # the released ledger records (all decisions), in the corrections layout
    mini_per_calculator: int = 10  # the rows per calculator rule the mini config was selected with

    def rows(self) -> dict[str, dict[str, int]]:
        return {c: {s: int(len(df)) for s, df in by.items()} for c, by in self.tables.items()}

    def published(self) -> dict[str, list[str]]:
        """The (config, splits) that get a parquet file: every config and split, so every release
        has the same configs; a split without rows (``corrections`` and ``mini`` of the 1.0.0
        baseline) is a parquet file with the config's columns and no rows."""
        return {c: list(self.splits) for c in CONFIGS}

    def identities(self) -> dict[str, dict[str, dict[str, str]]]:
        """Every config's rows by identity (``split:uid``; a record's ``id`` in ``corrections``), each
        row a short sha256 per column value: two releases' config is unchanged only when its rows
        and their values (on the columns both have) are equal."""
        out: dict[str, dict[str, dict[str, str]]] = {}
        for c in CONFIGS:
            frame = self.combined(c)
            keys = frame["id"].astype(str) if c == "corrections" else frame["split"].astype(str) + ":" + frame["uid"].astype(str)
            out[c] = {k: {x: hashlib.sha256(("\x00" if is_missing(v) else str(v)).encode()).hexdigest()[:16]
                          for x, v in r.items()} for k, r in zip(keys, row_dicts(frame))}
        return out

    def empty_configs(self) -> list[str]:
        """The configs without any row in this release."""
        return [c for c in CONFIGS if not any(len(self.tables[c][s]) for s in self.splits)]

    def combined(self, config: str) -> pd.DataFrame:
        """One config with every split in one frame; ``split`` and ``uid`` (from ``Row Number``)
        are added when the config lacks them (the layout of the stage's files and of :func:`load_config`)."""
        if config == "corrections":
            return self.records
        frames = []
        for s in self.splits:
            df = self.tables[config][s]
            added = {c: v for c, v in (("split", s), ("uid", None)) if c not in df.columns}
            if added:
                df = df.copy()
                if "split" in added:
                    df["split"] = pd.array([s] * len(df), dtype="string")
                if "uid" in added:
                    df["uid"] = df["Row Number"].astype("int64")
            frames.append(df)
        return pd.concat(frames, ignore_index=True)


def _shown_path(f: str | None, root: Path) -> str:
    p = Path(f or "")
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return p.name


def _records_table(records: list[ledger.Record], instances: pd.DataFrame, version: str, root: Path,
                   include_unreleased: bool = False) -> pd.DataFrame:
    key = version_key(version)
    chosen = [r for r in records if r.valid and (
        (r.release == UNRELEASED and include_unreleased)
        or (r.release != UNRELEASED and version_key(r.release) <= key))]
    names = {(str(s), int(u)): str(n) for s, u, n in zip(instances["split"], instances["uid"], instances["Calculator Name"])}
    rows_of = _severity_inputs(instances)
    derived = has_derivations(version)
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
        row["ledger_file"] = _shown_path(d.get("file"), root)
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
    with ledger_at(project, release, releases_path or project.releases_file) as paths:
        collected = ledger.collect(paths)  # read once: applied, and the corrections config
        maintained = apply.build(instances, paths, upto=None if include_unreleased else release.version,
                                 collected=collected)
        records = collected[0]
        corrections = typed_frame(_records_table(records, instances, release.version, project.root, include_unreleased))
    maintained = maintained.sort_values(["split", "uid"], kind="stable").reset_index(drop=True)
    docs = row_derivations(maintained, instances, records, evidence=has_evidence_gate(release.version)) \
        if has_derivations(release.version) else None
    texts, sources = explanations.explain(maintained, corrections, docs)
    maintained["Ground Truth Explanation"] = texts
    maintained[explanations.SOURCE_COLUMN] = sources
    if docs is not None:
        maintained[DERIVATION_STATUS] = [None if d is None else d["status"] for d in docs]
        maintained[DERIVATION] = [None if d is None else json.dumps(d, sort_keys=True, ensure_ascii=False) for d in docs]
        answers, found = proposals.row_proposals(maintained, instances, _findings(project, release))
        maintained[proposals.PROPOSED_ANSWER], maintained[proposals.PROPOSAL] = answers, found
    upstream = instances.sort_values(["split", "uid"], kind="stable").reset_index(drop=True)
    splits = sorted(str(s) for s in upstream["split"].unique())
    tables: dict[str, dict[str, pd.DataFrame]] = {c: {} for c in CONFIGS}
    for s in splits:
        full = maintained[maintained["split"] == s].reset_index(drop=True)
        default = full if release.default_rows == "all" else full[full["Label Status"] != "unverified"]
        tables["default"][s] = typed_frame(default[DEFAULT_COLUMNS])
        tables["full"][s] = typed_frame(full)
        tables["original"][s] = typed_frame(upstream.loc[upstream["split"] == s, UPSTREAM_COLUMNS])
        tables["corrections"][s] = typed_frame(corrections[corrections["split"] == s])
        tables["mini"][s] = typed_frame(mini.select(tables["default"][s], s, project.mini_per_calculator,
                                                      release.version))
    return Tables(release, splits, tables, corrections, project.mini_per_calculator)


# --------------------------------------------------------------------------------------------
# the stage's files: written once per repro, read when current


def inputs_fingerprint(project: Project, release: Release) -> str:
    """sha256 of everything a release's tables are made of: the upstream instances, the ledger
    files of the working tree, the release's rows rule and its pinned ledger commit."""
    commit = None
    if release.ledger_ref:
        proc = git.git("rev-parse", "--verify", "--quiet", f"{release.ledger_ref}^{{commit}}", cwd=project.root,
                       check=False)
        commit = proc.stdout.decode().strip() or None
    files = [[_shown_path(str(f), project.root), sha256_file(f)] 
             for f in ledger.ledger_files([p for p in follow.ledger_paths(project, release) if p.exists()])]
    doc = {"format": TABLES_FORMAT, "instances": sha256_file(follow.instances_path(project, release)),
           "version": release.version,
           "default_rows": release.default_rows, "ledger_ref": release.ledger_ref, "ledger_commit": commit,
           "ledger": files, "mini_per_calculator": project.mini_per_calculator}
    if has_derivations(release.version) and project.findings.is_file():
        doc["findings"] = sha256_file(project.findings)  # the proposals of unverified rows
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()


def write_release_tables(project: Project, t: Tables, fingerprint: str, state: dict[str, Any]) -> list[Path]:
    """Every config of ``t`` to ``project.release_table(version, config)``, then ``state.json``
    (``state``: the release state, see :mod:`medcalc_maintained.release.state`)."""
    version = t.release.version
    written = []
    configs = {}
    for c in CONFIGS:
        frame = t.combined(c)
        original = list(t.tables[c][t.splits[0]].columns) if t.splits else list(frame.columns)
        configs[c] = {"columns": original, "added": [x for x in frame.columns if x not in original]}
        written.append(write_parquet(frame, project.release_table(version, c)))
    doc = {"version": version, "inputs": fingerprint, "splits": t.splits, "configs": configs, "rows": t.rows(),
           "state": state}
    target = project.release_tables / version / STATE_FILE
    write_atomic(target, lambda p: p.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8"))
    return written + [target]


def stored_state(project: Project, release: Release) -> dict[str, Any] | None:
    """The ``state.json`` of ``release`` written by stage ``release-tables`` when it matches the
    current inputs (else ``None``)."""
    path = project.release_tables / release.version / STATE_FILE
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    if doc.get("inputs") != inputs_fingerprint(project, release):
        return None
    if not all(project.release_table(release.version, c).is_file() for c in CONFIGS):
        return None
    return doc


def _from_files(project: Project, release: Release, doc: dict[str, Any]) -> Tables:
    splits = list(doc["splits"])
    tables: dict[str, dict[str, pd.DataFrame]] = {c: {} for c in CONFIGS}
    records = pd.DataFrame()
    for c in CONFIGS:
        frame = typed_frame(pq.read_table(project.release_table(release.version, c)).to_pandas())
        columns = doc["configs"][c]["columns"]
        for s in splits:
            part = frame[frame["split"] == s].reset_index(drop=True)
            tables[c][s] = typed_frame(part[columns])
        if c == "corrections":
            records = frame[columns]
    return Tables(release, splits, tables, typed_frame(records), project.mini_per_calculator)


def load_tables(project: Project, release: Release, releases_path: Path | None = None) -> Tables:
    """The tables of ``release``: from stage ``release-tables`` when its files are current, else
    built now (:func:`build_tables`)."""
    doc = stored_state(project, release)
    if doc is not None:
        return _from_files(project, release, doc)
    return build_tables(project, release, releases_path)


def load_config(project: Project, version: str, config: str = "full") -> pd.DataFrame:
    """One config of release ``version``, every split in one frame (with ``split`` and ``uid``
    columns), as ``release build`` publishes it: read from stage ``release-tables`` when current,
    else built on the fly."""
    if config not in CONFIGS:
        raise DataError("config", f"{config!r} is not one of {', '.join(CONFIGS)}")
    plan: Releases = follow.plan_for(project)
    release = plan.get(version)
    doc = stored_state(project, release)
    if doc is not None:
        return typed_frame(pq.read_table(project.release_table(release.version, config)).to_pandas())
    # built on the fly once per project, release and inputs: evaluate --against reads two or three
    # configs of a release, the MCP server every version form of one
    key = (str(project.root), release.version, inputs_fingerprint(project, release))
    if key not in _BUILT:
        while len(_BUILT) >= 4:
            _BUILT.pop(next(iter(_BUILT)))
        _BUILT[key] = build_tables(project, release, plan.path)
    return _BUILT[key].combined(config).copy()


# load_config's tables built on the fly, by (project root, version, inputs_fingerprint): the
# fingerprint covers every input of build_tables, so a changed ledger or instances file is a new key
_BUILT: dict[tuple[str, str, str], Tables] = {}
