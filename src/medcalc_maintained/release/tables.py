"""The stored release tables: the configs of every release as stage ``release-tables`` wrote them.

Configs: ``default`` (the rows whose label is the release's reference: ``Label Status !=
unverified``, or *every* row when the release says ``default_rows: all``), ``full`` (every row with
the maintained columns), ``original`` (the upstream v1.0 columns verbatim) and ``corrections`` (one
row per ledger record of the releases up to this one, with its ``change_severity``) and ``mini`` (a
stratified subset of ``default``, :mod:`medcalc_maintained.release.mini`). ``full`` carries ``Change
Severity`` (original -> maintained label, ``L0`` when unchanged). ``default``, ``full`` and ``mini``
carry the explanation that matches their label and its ``Explanation Source``
(:mod:`medcalc_maintained.release.explanations`). Releases from ``INPUTS_CONFIG_FROM`` on add ``inputs``
(one row per input of every verified row: :mod:`medcalc_maintained.release.inputs_config`);
:func:`configs_of` gives a release's configs. A release has each of its configs; a config without
rows (``corrections`` and ``mini`` of the 1.0.0 baseline) is a parquet file with no rows.

This module is what a *reader* of a release imports: the column layout and types
(:func:`typed_frame`), the in-memory :class:`Tables`, the fingerprint of a release's inputs
(:func:`inputs_fingerprint`) and the stage's files (:func:`write_release_tables`: ``<release.tables>/
<version>/<config>.parquet`` with all splits, and ``state.json``). :func:`load_config` reads those
files when they match the current inputs (:func:`require_current`; a ledger record without a
release, such as a pending proposal, is no input of any release) and otherwise raises a
:class:`~medcalc_maintained.core.errors.DataError` that says to run ``dvc repro release-tables``: a reader
never applies the ledger. Building the tables from the upstream instances and the ledger is
:mod:`medcalc_maintained.release.table_builder`, imported only by the stages that build
(``release-tables``, ``release``) and by :mod:`medcalc_maintained.release.build`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from medcalc_maintained.core import git
from medcalc_maintained.core.atomic import write_atomic
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.ledger_files import ledger_files, released_content
from medcalc_maintained.core.readers import sha256_file
from medcalc_maintained.core.rows import UPSTREAM_COLUMNS
from medcalc_maintained.core.versions import rules
from medcalc_maintained.project import Project
from medcalc_maintained.release import upstream as follow
from medcalc_maintained.release.plan import Release, Releases

CONFIGS = ("default", "full", "original", "corrections", "mini")  # every release's
INPUTS = "inputs"  # from INPUTS_CONFIG_FROM on (release/inputs_config.py)
ALL_CONFIGS = CONFIGS + (INPUTS,)
DERIVATION_STATUS, DERIVATION = "Derivation Status", "Derivation"  # full, from DERIVATIONS_FROM on
SOURCE_COLUMN = "Explanation Source"  # which explanation a row carries (:mod:`.explanations`)
DEFAULT_COLUMNS = UPSTREAM_COLUMNS + ["Label Status", SOURCE_COLUMN]
CORRECTION_COLUMNS = [
    "id", "release", "split", "uid", "Calculator Name", "old_value", "new_value", "decision", "label_status",
    "change_severity", "error_type", "source", "reviewer_id", "reviewer_role", "reviewer_specialty", "proposed_by_id", "proposed_by_role",
    "proposed_by_specialty", "blinded", "decided_at",
    "rationale", "evidence", "scoring_timepoint", "guideline_version", "second_opinion", "ledger_file",
]
# the derivation of each record, in ``corrections`` from DERIVATIONS_FROM on
DERIVATION_RECORD_COLUMNS = ["definition", "inputs", "override_reason", "justification", "adjudicated_value",
                             "adjudicated_definition", "reconstruction"]
# config ``inputs`` (from INPUTS_CONFIG_FROM on, release/inputs_config.py): the row, then one of its inputs in
# the shape of stage ``certify``'s table (ledger/evidence_rows.py: COLUMNS)
INPUT_ROW_COLUMNS = ["Row Number", "Calculator ID", "Calculator Name", "Label Status", "Evidence Status"]
INPUT_COLUMNS = INPUT_ROW_COLUMNS + ["name", "value", "unit", "source", "verdict", "convention", "quote_start",
                                     "quote_end", "quote_text", "quote_in", "note_value", "rule", "reason", "declared",
                                     "used"]
INT_COLUMNS = {"uid", "calculator_id", "Row Number", "Calculator ID"}  # integers, as upstream publishes them
NULLABLE_INT_COLUMNS = {"quote_start", "quote_end"}  # inputs: a quote's offsets, null without a quote
BOOL_COLUMNS = {"blinded", "convention", "used"}
TABLES_FORMAT = 4  # bump when the stored tables' layout or content rules change
STATE_FILE = "state.json"
REFRESH = "dvc repro release-tables"  # the command that writes current tables (or `medcalc-maintained release tables`)


def configs_of(version: str) -> tuple[str, ...]:
    """The configs of release ``version``: :data:`CONFIGS`, and ``inputs`` from ``INPUTS_CONFIG_FROM`` on."""
    return ALL_CONFIGS if rules(version).inputs_config else CONFIGS


def row_keys(frame: pd.DataFrame, config: str) -> list[str]:
    """Each row's identity in ``config``: a record's ``id`` in ``corrections``, ``split:uid:name`` in
    ``inputs`` (an input of a row), else ``split:uid``."""
    if config == "corrections":
        return [str(v) for v in frame["id"]]
    keys = [f"{s}:{int(u)}" for s, u in zip(frame["split"], frame["uid"])]
    return [f"{k}:{n}" for k, n in zip(keys, frame["name"])] if config == INPUTS else keys


# --------------------------------------------------------------------------------------------
# column types


def is_missing(v: Any) -> bool:
    return v is None or v is pd.NA or (isinstance(v, float) and v != v)


@lru_cache(maxsize=32768)  # every release repeats most values (the notes): the changelog hashes each one once
def _value_hash(text: str) -> str:
    """A cell value's short sha256 in :meth:`Tables.identities`."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def typed_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with the release's column types: nullable text (``string``), ``int64`` keys and
    ``boolean`` flags, so that readers get the same dtypes as the pipeline's parquet outputs."""
    out = pd.DataFrame(index=range(len(df)))
    for c in df.columns:
        # a numeric or flag column already of the release's type (a table read back, or typed before) is copied as
        # it is; a text column is always built anew: an Arrow-backed one keeps its buffers' layout, which the
        # card's num_bytes (the Arrow size of the table) reads, so a copy could change the card
        want = "int64" if c in INT_COLUMNS else "Int64" if c in NULLABLE_INT_COLUMNS else "boolean" if c in BOOL_COLUMNS \
            else None
        if want is not None and df[c].dtype == want:
            out[c] = df[c].array.copy()
            continue
        values = df[c].tolist()
        if c in INT_COLUMNS:
            out[c] = pd.array([int(v) for v in values], dtype="int64")
        elif c in NULLABLE_INT_COLUMNS:
            out[c] = pd.array([None if is_missing(v) else int(v) for v in values], dtype="Int64")
        elif c in BOOL_COLUMNS:
            out[c] = pd.array([None if is_missing(v) else bool(v) for v in values], dtype="boolean")
        else:
            out[c] = pd.array([None if is_missing(v) else str(v) for v in values], dtype="string")
    return out


def arrow_table(df: pd.DataFrame) -> pa.Table:
    """A frame as an Arrow table with fixed types (string, int64, bool)."""
    typed = typed_frame(df)
    fields = [pa.field(c, pa.int64() if c in INT_COLUMNS | NULLABLE_INT_COLUMNS else pa.bool_() if c in BOOL_COLUMNS
                       else pa.string())
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

    @property
    def configs(self) -> tuple[str, ...]:
        """This release's configs (:func:`configs_of`)."""
        return configs_of(self.release.version)

    def rows(self) -> dict[str, dict[str, int]]:
        return {c: {s: int(len(df)) for s, df in by.items()} for c, by in self.tables.items()}

    def published(self) -> dict[str, list[str]]:
        """The (config, splits) that get a parquet file: every config of the release and every split;
        a split without rows (``corrections`` and ``mini`` of the 1.0.0 baseline) is a parquet file
        with the config's columns and no rows."""
        return {c: list(self.splits) for c in self.configs}

    def identities(self) -> dict[str, dict[str, dict[str, str]]]:
        """Every config's rows by identity (:func:`row_keys`), each row a short sha256 per column
        value: two releases' config is unchanged only when its rows and their values (on the columns
        both have) are equal."""
        out: dict[str, dict[str, dict[str, str]]] = {}
        for c in self.configs:
            frame = self.combined(c)
            keys = row_keys(frame, c)
            # column by column (the values row_dicts gives), each distinct text hashed once
            columns = {x: [_value_hash("\x00" if is_missing(v) else str(v)) for v in frame[x].tolist()]
                       for x in frame.columns}
            out[c] = {k: {x: hashes[i] for x, hashes in columns.items()} for i, k in enumerate(keys)}
        return out

    def empty_configs(self) -> list[str]:
        """The configs without any row in this release."""
        return [c for c in self.configs if not any(len(self.tables[c][s]) for s in self.splits)]

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


def shown_path(f: str | None, root: Path) -> str:
    """``f`` relative to the project ``root`` (its name when outside it), as the tables show a ledger file."""
    p = Path(f or "")
    try:
        return p.resolve().relative_to(root).as_posix()
    except ValueError:
        return p.name


# --------------------------------------------------------------------------------------------
# the stage's files: written once per repro, read only when current


def inputs_fingerprint(project: Project, release: Release) -> str:
    """sha256 of everything a release's tables are made of: the upstream instances, the ledger
    files of the working tree as far as their records of a release go (:func:`~medcalc_maintained.core.
    ledger_files.released_content`: a pending proposal, or any record without a release, is in no
    release's tables and never makes them stale), the release's rows rule and its pinned ledger commit."""
    return _fingerprint(project, release, released_content)


def _whole_file(path: Path) -> bytes | None:
    return path.read_bytes()


def _fingerprint(project: Project, release: Release, content: Callable[[Path], bytes | None]) -> str:
    """:func:`inputs_fingerprint` with each ledger file read as ``content`` gives it (``None``: left out)."""
    commit = None
    if release.ledger_ref:
        proc = git.git("rev-parse", "--verify", "--quiet", f"{release.ledger_ref}^{{commit}}", cwd=project.root,
                       check=False)
        commit = proc.stdout.decode().strip() or None
    files = [[shown_path(str(f), project.root), hashlib.sha256(data).hexdigest()]
             for f in ledger_files([p for p in follow.ledger_paths(project, release) if p.exists()])
             if (data := content(f)) is not None]
    doc = {"format": TABLES_FORMAT, "instances": sha256_file(follow.instances_path(project, release)),
           "version": release.version,
           "default_rows": release.default_rows, "ledger_ref": release.ledger_ref, "ledger_commit": commit,
           "ledger": files, "mini_per_calculator": project.mini_per_calculator}
    if rules(release.version).derivations and project.findings.is_file():
        doc["findings"] = sha256_file(project.findings)  # the proposals of unverified rows
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode("utf-8")).hexdigest()


def write_release_tables(project: Project, t: Tables, fingerprint: str, state: dict[str, Any]) -> list[Path]:
    """Every config of ``t`` to ``project.release_table(version, config)``, then ``state.json``
    (``state``: the release state, see :mod:`medcalc_maintained.release.state`)."""
    version = t.release.version
    written = []
    configs = {}
    for c in t.configs:
        frame = t.combined(c)
        original = list(t.tables[c][t.splits[0]].columns) if t.splits else list(frame.columns)
        configs[c] = {"columns": original, "added": [x for x in frame.columns if x not in original]}
        written.append(write_parquet(frame, project.release_table(version, c)))
    doc = {"version": version, "inputs": fingerprint, "splits": t.splits, "configs": configs, "rows": t.rows(),
           "state": state}
    target = project.release_tables / version / STATE_FILE
    write_atomic(target, lambda p: p.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8"))
    return written + [target]


def _state(project: Project, release: Release) -> tuple[dict[str, Any] | None, str]:
    """The ``state.json`` of ``release`` when its tables match the current inputs, else ``None``
    and why not."""
    path = project.release_tables / release.version / STATE_FILE
    if not path.is_file():
        return None, "are missing"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None, "have an unreadable state.json"
    # the whole files first: the same value when no file holds a record without a release, and no YAML is parsed
    stored = doc.get("inputs")
    if stored != _fingerprint(project, release, _whole_file) and stored != inputs_fingerprint(project, release):
        return None, ("are stale: the upstream instances, the ledger files (their records of a release: a pending "
                      "record without one does not count), the release's entry in releases.yaml, "
                      "release.mini_per_calculator or the check findings changed since they were written")
    if not all(project.release_table(release.version, c).is_file() for c in configs_of(release.version)):
        return None, "are incomplete (a config's parquet file is missing)"
    return doc, ""


def stored_state(project: Project, release: Release) -> dict[str, Any] | None:
    """The ``state.json`` of ``release`` written by stage ``release-tables`` when it matches the
    current inputs (else ``None``)."""
    return _state(project, release)[0]


def require_current(project: Project, release: Release) -> dict[str, Any]:
    """:func:`stored_state`, or a :class:`DataError` naming the release's ``state.json``, why its
    tables cannot be read and the command that writes them (:data:`REFRESH`)."""
    doc, why = _state(project, release)
    if doc is None:
        raise DataError(project.release_tables / release.version / STATE_FILE,
                        f"the release tables of {release.version} {why}; run `{REFRESH}` "
                        "(or `medcalc-maintained release tables`) to write them")
    return doc


def tables_from_files(project: Project, release: Release, doc: dict[str, Any]) -> Tables:
    """The :class:`Tables` of ``release`` from the stage's files (``doc``: its current state, :func:`stored_state`)."""
    splits = list(doc["splits"])
    tables: dict[str, dict[str, pd.DataFrame]] = {c: {} for c in configs_of(release.version)}
    records = pd.DataFrame()
    for c in tables:
        frame = typed_frame(pq.read_table(project.release_table(release.version, c)).to_pandas())
        columns = doc["configs"][c]["columns"]
        for s in splits:
            part = frame[frame["split"] == s].reset_index(drop=True)
            tables[c][s] = typed_frame(part[columns])
        if c == "corrections":
            records = frame[columns]
    return Tables(release, splits, tables, typed_frame(records), project.mini_per_calculator)


def load_config(project: Project, version: str, config: str = "full") -> pd.DataFrame:
    """One config of release ``version`` (a version or tag of releases.yaml), every split in one
    frame with ``split`` and ``uid`` columns, as ``release build`` publishes it: read from stage
    ``release-tables``; a :class:`DataError` saying to run :data:`REFRESH` when its files are
    missing or stale (the ledger is never applied here)."""
    plan: Releases = follow.plan_for(project)
    release = plan.get(version)
    if config not in configs_of(release.version):
        raise DataError("config", f"{config!r} is not a config of release {release.version} "
                                  f"(one of {', '.join(configs_of(release.version))})")
    require_current(project, release)
    return typed_frame(pq.read_table(project.release_table(release.version, config)).to_pandas())
