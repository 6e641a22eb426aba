"""Releases: semantic versions of the maintained benchmark, built as Hugging Face dataset repositories.

``releases.yaml`` (git-tracked, at the project root) lists every release, oldest first::

    repo_id: org/medcalc-maintained
    releases:
      - version: 1.0.0
        date: "2026-11-22"
        kind: major            # the bump from the previous release (the first one is major)
        default_rows: all      # which rows the `default` config holds (see below)
        ledger_ref: null       # optional git ref of this project whose ledger files are used
        description: Upstream baseline ...

A release ``V`` is built from the untouched upstream instances (``data/interim/instances.parquet``)
plus the ledger records whose ``release`` is ``<= V`` (``apply.build(..., upto=V)``): the campaign
records carry ``release: 2.0.0``, so building ``1.0.0`` applies none of them and ``2.0.0`` applies
the imported campaign. Records without a release (``unreleased``) are never part of a release.
When a release pins ``ledger_ref``, the git-tracked ledger paths are read at that ref with
``git archive`` into a temporary directory (read-only); ledger paths that git does not track (the
DVC-generated campaign file) are read from the working tree, filtered by ``upto`` as always.

The built directory is a Hugging Face dataset repository::

    README.md                 rendered from dataset_card.md (YAML front matter with `configs`)
    CHANGELOG.md              every release up to this one, newest first
    manifest.json             sha256 of every other file, row counts, and the release state
    data/<config>/<split>-00000-of-00001.parquet

Configs: ``default`` (the rows whose label is the release's reference: rows with a verified label,
i.e. ``Label Status != unverified``, or *every* row when the release says ``default_rows: all`` --
the 1.0.0 baseline, whose reference labels are the upstream ones), ``full`` (every row with the
maintained columns), ``original`` (the upstream v1.0 columns verbatim) and ``corrections`` (one row
per ledger record of the releases up to this one). Two builds from the same inputs are
byte-identical: rows are sorted, parquet metadata is fixed, and the only date is the release date.

The next version is derived from what changed since the previous release (:func:`derive_bump`):
MAJOR for a schema or label-space change, MINOR for label changes, PATCH for the card only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from medcalc_maintained import config, ledger
from medcalc_maintained.ledger import apply
from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.io import DataError, sha256_file, write_text_atomic

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")
KINDS = ("major", "minor", "patch")
DEFAULT_ROWS = ("verified", "all")
# `gates`: per-release overrides of the validate QC gates, read by medcalc_maintained.contracts.validate
RELEASE_FIELDS = {"version", "date", "kind", "description", "default_rows", "ledger_ref", "gates"}
CONFIGS = ("default", "full", "original", "corrections")
UPSTREAM_COLUMNS = [
    "Row Number", "Calculator ID", "Calculator Name", "Category", "Output Type", "Note ID", "Note Type",
    "Patient Note", "Question", "Relevant Entities", "Ground Truth Answer", "Lower Limit", "Upper Limit",
    "Ground Truth Explanation",
]
DEFAULT_COLUMNS = UPSTREAM_COLUMNS + ["Label Status"]
CORRECTION_COLUMNS = [
    "id", "release", "split", "uid", "Calculator Name", "old_value", "new_value", "decision", "label_status",
    "error_type", "source", "reviewer_id", "reviewer_role", "reviewer_specialty", "blinded", "decided_at",
    "rationale", "evidence", "scoring_timepoint", "guideline_version", "second_opinion", "ledger_file",
]
INT_COLUMNS = {"uid", "calculator_id"}
BOOL_COLUMNS = {"blinded"}
DEFAULT_REPO_ID = "org/medcalc-maintained"
GENERATOR = "medcalc-maintained release build"


# --------------------------------------------------------------------------------------------
# versions and releases.yaml


def version_key(version: str) -> tuple[int, int, int]:
    m = SEMVER.match(str(version))
    if not m:
        raise ValueError(f"{version!r} is not a MAJOR.MINOR.PATCH version")
    return int(m[1]), int(m[2]), int(m[3])


def bump(version: str, kind: str) -> str:
    """The version after ``version`` for a ``kind`` (major | minor | patch) change."""
    major, minor, patch = version_key(version)
    if kind == "major":
        return f"{major + 1}.0.0"
    if kind == "minor":
        return f"{major}.{minor + 1}.0"
    if kind == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ValueError(f"unknown change kind {kind!r} (expected one of {', '.join(KINDS)})")


def full_tag(version: str) -> str:
    return f"v{version}"


def short_tag(version: str) -> str:
    major, minor, _ = version_key(version)
    return f"v{major}.{minor}"


@dataclass(frozen=True)
class Release:
    version: str
    date: str
    kind: str
    description: str
    default_rows: str = "verified"
    ledger_ref: str | None = None

    @property
    def key(self) -> tuple[int, int, int]:
        return version_key(self.version)


@dataclass
class Releases:
    path: Path
    repo_id: str
    releases: list[Release]

    @property
    def latest(self) -> Release:
        return self.releases[-1]

    def get(self, version: str | None) -> Release:
        if version is None:
            return self.latest
        v = version[1:] if version.startswith("v") else version
        for r in self.releases:
            if r.version == v:
                return r
        known = ", ".join(r.version for r in self.releases)
        raise DataError(self.path, f"release {version!r} is not listed (known: {known})", field="version")

    def upto(self, version: str) -> list[Release]:
        key = version_key(version)
        return [r for r in self.releases if r.key <= key]

    def previous(self, version: str) -> Release | None:
        earlier = [r for r in self.releases if r.key < version_key(version)]
        return earlier[-1] if earlier else None


def _date_text(value: Any) -> str | None:
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            return None
    return None


def load_releases(path: Path) -> Releases:
    """Read and check ``releases.yaml``; a problem raises :class:`DataError` naming the release and field."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "releases file not found (it lists the releases; see medcalc_maintained/release.py)")
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(path, f"malformed YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("releases"), list) or not doc["releases"]:
        raise DataError(path, "expected a mapping with a non-empty 'releases' list", field="releases")
    repo_id = str(doc.get("repo_id") or DEFAULT_REPO_ID)
    out: list[Release] = []
    for i, raw in enumerate(doc["releases"]):
        where = f"release #{i + 1}"
        if not isinstance(raw, dict):
            raise DataError(path, "each release must be a mapping", row=where)
        unknown = sorted(set(raw) - RELEASE_FIELDS)
        if unknown:
            raise DataError(path, f"unknown field(s) {unknown} (allowed: {sorted(RELEASE_FIELDS)})", row=where)
        for req in ("version", "date", "kind", "description"):
            if raw.get(req) in (None, ""):
                raise DataError(path, "required", row=where, field=req)
        version = str(raw["version"])
        if not SEMVER.match(version):
            raise DataError(path, f"{version!r} is not MAJOR.MINOR.PATCH", row=where, field="version")
        where = f"release {version}"
        date = _date_text(raw["date"])
        if date is None:
            raise DataError(path, f"{raw['date']!r} is not a YYYY-MM-DD date", row=where, field="date")
        kind = str(raw["kind"])
        if kind not in KINDS:
            raise DataError(path, f"{kind!r} is not one of {', '.join(KINDS)}", row=where, field="kind")
        default_rows = str(raw.get("default_rows") or "verified")
        if default_rows not in DEFAULT_ROWS:
            raise DataError(path, f"{default_rows!r} is not one of {', '.join(DEFAULT_ROWS)}", row=where, field="default_rows")
        ref = raw.get("ledger_ref")
        if ref is not None and (not isinstance(ref, str) or not ref.strip() or ref.startswith("-")):
            raise DataError(path, f"{ref!r} is not a git ref", row=where, field="ledger_ref")
        gates = raw.get("gates")
        if gates is not None and not isinstance(gates, dict):
            raise DataError(path, "must be a mapping of gate name to settings", row=where, field="gates")
        rel = Release(version, date, kind, str(raw["description"]).strip(), default_rows, ref)
        if out:
            prev = out[-1]
            if rel.key <= prev.key:
                raise DataError(path, f"versions must increase: {version} follows {prev.version}", row=where, field="version")
            if bump(prev.version, kind) != version:
                raise DataError(path, f"a {kind} release after {prev.version} is {bump(prev.version, kind)}, not {version}",
                                row=where, field="kind")
            if rel.date < prev.date:
                raise DataError(path, f"date {date} is before the previous release's {prev.date}", row=where, field="date")
        elif kind != "major":
            raise DataError(path, "the first release is a major release", row=where, field="kind")
        out.append(rel)
    return Releases(path, repo_id, out)


# --------------------------------------------------------------------------------------------
# inputs


@dataclass
class Inputs:
    root: Path
    instances: Path
    ledger: list[Path]
    releases: Path
    card: Path
    maintained: Path | None = None

    @classmethod
    def from_root(cls, root: Path | None = None, **overrides: Any) -> "Inputs":
        root = Path(root or config.project_root()).resolve()
        params = config.load_params(root)
        ledger_paths = (params.get("apply") or {}).get("ledger") or ["data/corrections"]
        out = (params.get("apply") or {}).get("out") or "data/maintained"
        base = cls(
            root=root,
            instances=root / "data" / "interim" / "instances.parquet",
            ledger=[_under(root, p) for p in ledger_paths],
            releases=root / "releases.yaml",
            card=root / "dataset_card.md",
            maintained=_under(root, out) / "instances.parquet",
        )
        for k, v in overrides.items():
            if v is not None:
                setattr(base, k, v)
        return base

    def ledger_dir(self) -> Path:
        """The hand-written ledger directory: the last directory of params.yaml apply.ledger."""
        dirs = [p for p in self.ledger if p.is_dir() or not p.suffix]
        if not dirs:
            raise DataError(self.root / "params.yaml", "apply.ledger lists no directory for hand-written corrections",
                            field="apply.ledger")
        return dirs[-1]


def _under(root: Path, p: str | Path) -> Path:
    p = Path(p)
    return p if p.is_absolute() else root / p


def _git(root: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None,
         check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True, env=env)
    if check and proc.returncode != 0:
        raise DataError(root, f"git {' '.join(args[:3])} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc


def _tracked(root: Path, ref: str, rel: str) -> bool:
    proc = _git(root, "ls-tree", "-r", "--name-only", ref, "--", rel, check=False)
    return proc.returncode == 0 and bool(proc.stdout.strip())


@contextlib.contextmanager
def ledger_at(inputs: Inputs, release: Release, releases_path: Path) -> Iterator[list[Path]]:
    """The ledger paths of ``release``: the working tree, or the git-tracked ones at its ``ledger_ref``."""
    if not release.ledger_ref:
        yield list(inputs.ledger)
        return
    root = inputs.root
    ref = release.ledger_ref
    if _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False).returncode != 0:
        raise DataError(releases_path, f"git ref {ref!r} does not exist in {root}", row=f"release {release.version}",
                        field="ledger_ref")
    with tempfile.TemporaryDirectory(prefix="medcalc-ledger-") as tmp:
        paths: list[Path] = []
        for p in inputs.ledger:
            try:
                rel = p.resolve().relative_to(root).as_posix()
            except ValueError:
                paths.append(p)  # outside the repository: used as is
                continue
            if _tracked(root, ref, rel):
                archive = _git(root, "archive", "--format=tar", ref, "--", rel).stdout
                with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
                    tar.extractall(tmp, filter="data")
                paths.append(Path(tmp) / rel)
            elif _tracked(root, "HEAD", rel):
                # tracked now, absent at the ref: the ledger then had no such file
                continue
            elif p.exists():
                paths.append(p)  # not tracked by git (a DVC output): the release filter applies
        yield paths


# --------------------------------------------------------------------------------------------
# tables


@dataclass
class Tables:
    """The configs of one release: ``tables[config][split]`` is a frame sorted by uid."""

    release: Release
    splits: list[str]
    tables: dict[str, dict[str, pd.DataFrame]]
    records: pd.DataFrame  # the released ledger records (all decisions), in the corrections layout

    def rows(self) -> dict[str, dict[str, int]]:
        return {c: {s: int(len(df)) for s, df in by.items()} for c, by in self.tables.items()}

    def published(self) -> dict[str, list[str]]:
        """The (config, splits) that get a parquet file: empty splits are left out (readers cannot
        load a parquet file without rows), and so is a config without rows, e.g. ``corrections``
        of the 1.0.0 baseline."""
        out = {}
        for c in CONFIGS:
            splits = [s for s in self.splits if len(self.tables[c][s])]
            if splits:
                out[c] = splits
        return out


def _records_table(records: list[ledger.Record], instances: pd.DataFrame, version: str, root: Path,
                   include_unreleased: bool = False) -> pd.DataFrame:
    key = version_key(version)
    chosen = [r for r in records if r.valid and (
        (r.release == ledger.UNRELEASED and include_unreleased)
        or (r.release != ledger.UNRELEASED and version_key(r.release) <= key))]
    names = {(str(s), int(u)): str(n) for s, u, n in zip(instances["split"], instances["uid"], instances["Calculator Name"])}
    rows = []
    frame = ledger.records_frame(chosen) if chosen else pd.DataFrame()
    for d in frame.to_dict("records"):
        f = Path(d.get("file") or "")
        try:
            shown = f.resolve().relative_to(root).as_posix()
        except ValueError:
            shown = f.name
        row = {c: d.get(c) for c in CORRECTION_COLUMNS}
        row["uid"] = int(d["uid"])
        row["Calculator Name"] = names.get((str(d["split"]), int(d["uid"])), "")
        row["blinded"] = bool(d.get("blinded"))
        row["ledger_file"] = shown
        if d.get("release") == ledger.UNRELEASED:
            row["release"] = version  # a draft: unreleased records are shown under the draft version
        for c in CORRECTION_COLUMNS:
            if c not in ("uid", "blinded") and row[c] is not None and not (isinstance(row[c], float) and pd.isna(row[c])):
                row[c] = str(row[c])
            elif c not in ("uid", "blinded"):
                row[c] = None
        rows.append(row)
    out = pd.DataFrame(rows, columns=CORRECTION_COLUMNS)
    if len(out):
        out["_k"] = out["release"].map(version_key)
        out = out.sort_values(["_k", "split", "uid", "id"], kind="stable").drop(columns="_k")
    return out.reset_index(drop=True)


def build_tables(inputs: Inputs, release: Release, releases_path: Path | None = None,
                 include_unreleased: bool = False) -> Tables:
    """Every config of ``release`` from the upstream instances and the ledger (raises on ledger
    problems). ``include_unreleased`` also applies the records without a release (a draft)."""
    if not inputs.instances.is_file():
        raise DataError(inputs.instances, "upstream instances not found (run `dvc repro ingest` or `medcalc-maintained ingest`)")
    instances = pd.read_parquet(inputs.instances)
    missing = [c for c in UPSTREAM_COLUMNS + ["uid", "split"] if c not in instances.columns]
    if missing:
        raise DataError(inputs.instances, f"missing column(s) {missing}")
    with ledger_at(inputs, release, releases_path or inputs.releases) as paths:
        maintained = apply.build(instances, paths, upto=None if include_unreleased else release.version)
        records, _ = ledger.collect(paths)
        corrections = _records_table(records, instances, release.version, inputs.root, include_unreleased)
    maintained = maintained.sort_values(["split", "uid"], kind="stable").reset_index(drop=True)
    upstream = instances.sort_values(["split", "uid"], kind="stable").reset_index(drop=True)
    splits = sorted(str(s) for s in upstream["split"].unique())
    tables: dict[str, dict[str, pd.DataFrame]] = {c: {} for c in CONFIGS}
    for s in splits:
        full = maintained[maintained["split"] == s].reset_index(drop=True)
        if release.default_rows == "all":
            default = full
        else:
            default = full[full["Label Status"] != "unverified"]
        tables["default"][s] = default[DEFAULT_COLUMNS].reset_index(drop=True)
        tables["full"][s] = full
        tables["original"][s] = upstream.loc[upstream["split"] == s, UPSTREAM_COLUMNS].reset_index(drop=True)
        tables["corrections"][s] = corrections[corrections["split"] == s].reset_index(drop=True)
    return Tables(release, splits, tables, corrections)


def typed_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The frame with the release's column types: nullable text (``string``), ``int64`` keys and
    ``boolean`` flags, so that readers get the same dtypes as the pipeline's parquet outputs."""
    out = pd.DataFrame(index=range(len(df)))
    for c in df.columns:
        values = df[c].tolist()
        if c in INT_COLUMNS:
            out[c] = pd.array([int(v) for v in values], dtype="int64")
        elif c in BOOL_COLUMNS:
            out[c] = pd.array([None if v is None else bool(v) for v in values], dtype="boolean")
        else:
            out[c] = pd.array([None if v is None or v is pd.NA or (isinstance(v, float) and pd.isna(v)) else str(v)
                               for v in values], dtype="string")
    return out


def arrow_table(df: pd.DataFrame) -> pa.Table:
    """A frame as an Arrow table with fixed types (string, int64, bool)."""
    typed = typed_frame(df)
    fields = [pa.field(c, pa.int64() if c in INT_COLUMNS else pa.bool_() if c in BOOL_COLUMNS else pa.string())
              for c in typed.columns]
    return pa.Table.from_pandas(typed, schema=pa.schema(fields), preserve_index=False)


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    table = arrow_table(df)
    pq.write_table(table, path, compression="zstd", compression_level=9, row_group_size=max(1, len(df)),
                   use_dictionary=True, write_statistics=True, store_schema=True)


# --------------------------------------------------------------------------------------------
# state and version derivation


def _label_class(text: str, output_type: str) -> str:
    kind = parse_answer(text, output_type).kind
    return "number" if kind in ("decimal", "integer") else kind


def _sha(parts: Iterable[str]) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8"))
        h.update(b"\x1f")
    return h.hexdigest()


def release_state(tables: dict[str, dict[str, pd.DataFrame]], card_template: str) -> dict[str, Any]:
    """What a release is, for comparing two releases: schema, rows, calculators, label space,
    labels and card (see :func:`derive_bump`)."""
    schema: dict[str, Any] = {}
    for cfg in sorted(tables):
        splits = tables[cfg]
        cols = None
        for s in sorted(splits):
            t = arrow_table(splits[s]).schema
            cols = [[f.name, str(f.type)] for f in t]
        schema[cfg] = {"splits": sorted(splits), "columns": cols or []}
    full = pd.concat([tables["full"][s] for s in sorted(tables["full"])], ignore_index=True) if tables.get("full") else pd.DataFrame()
    full = full.sort_values(["split", "uid"], kind="stable") if len(full) else full
    rows = _sha(f"{s}:{u}" for s, u in zip(full.get("split", []), full.get("uid", [])))
    calculators = sorted({f"{i}:{n}" for i, n in zip(full.get("Calculator ID", []), full.get("Calculator Name", []))})
    space: dict[str, set[str]] = {}
    for lab, ot in zip(full.get("Ground Truth Answer", []), full.get("Output Type", [])):
        space.setdefault(str(ot), set()).add(_label_class(str(lab), str(ot)))
    labels = _sha(
        f"{s}|{u}|{a}|{lo}|{hi}|{st}"
        for s, u, a, lo, hi, st in zip(*(full.get(c, []) for c in
                                        ("split", "uid", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status")))
    )
    return {
        "schema": schema,
        "rows_sha256": rows,
        "calculators": calculators,
        "label_space": {k: sorted(v) for k, v in sorted(space.items())},
        "labels_sha256": labels,
        "card_sha256": hashlib.sha256(card_template.encode("utf-8")).hexdigest(),
    }


def derive_bump(previous: dict[str, Any], current: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The kind of change from the ``previous`` release state to the ``current`` one, with reasons.

    MAJOR: a schema change (configs, splits, columns or their types), a change of the set of rows
    or calculators, or a change of the label space (a class of label, e.g. ``N/A``, appearing in or
    disappearing from an output type). MINOR: any label, limit or label-status change. PATCH: the
    card template only. ``None``: nothing changed.
    """
    reasons: list[str] = []
    if previous.get("schema") != current.get("schema"):
        a, b = previous.get("schema") or {}, current.get("schema") or {}
        for cfg in sorted(set(a) | set(b)):
            if a.get(cfg) != b.get(cfg):
                reasons.append(f"schema of config {cfg!r} changed")
    if previous.get("rows_sha256") != current.get("rows_sha256"):
        reasons.append("the set of rows changed")
    if previous.get("calculators") != current.get("calculators"):
        reasons.append("the set of calculators changed")
    if previous.get("label_space") != current.get("label_space"):
        a, b = previous.get("label_space") or {}, current.get("label_space") or {}
        for ot in sorted(set(a) | set(b)):
            added, removed = set(b.get(ot, [])) - set(a.get(ot, [])), set(a.get(ot, [])) - set(b.get(ot, []))
            if added or removed:
                reasons.append(f"label space of {ot} outputs: +{sorted(added)} -{sorted(removed)}")
    if reasons:
        return "major", reasons
    if previous.get("labels_sha256") != current.get("labels_sha256"):
        return "minor", ["labels, limits or label statuses changed"]
    if previous.get("card_sha256") != current.get("card_sha256"):
        return "patch", ["the dataset card changed"]
    return None, []


def next_version(previous_version: str, previous: dict[str, Any], current: dict[str, Any]) -> tuple[str | None, str | None, list[str]]:
    kind, reasons = derive_bump(previous, current)
    return (bump(previous_version, kind) if kind else None), kind, reasons


# --------------------------------------------------------------------------------------------
# card and changelog


def _md(text: Any) -> str:
    """Text for one Markdown table cell."""
    if text is None or (isinstance(text, float) and pd.isna(text)):
        return ""
    s = " ".join(str(text).split())
    return s.replace("\\", "\\\\").replace("|", "\\|")


def md_table(header: list[str], rows: Iterable[Iterable[Any]], align: list[str] | None = None) -> str:
    align = align or ["l"] * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _counts(series: pd.Series, missing: str = "(none)") -> list[tuple[str, int]]:
    vals = [missing if (v is None or v == "" or (isinstance(v, float) and pd.isna(v))) else str(v) for v in series]
    counts: dict[str, int] = {}
    for v in vals:
        counts[v] = counts.get(v, 0) + 1
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def _uid_text(split: str, uid: int) -> str:
    return str(uid) if split == "test" else f"{split}:{uid}"


def render_changelog(releases: list[Release], records: pd.DataFrame) -> str:
    """CHANGELOG.md: one section per release (newest first) with counts and the label changes."""
    out = [
        "# Changelog",
        "",
        "Every label change of the maintained benchmark, newest release first. Each change is a",
        "reviewed record of the corrections ledger; its full text (evidence, reviewer, date) is in the",
        "`corrections` config. Releases are tagged `vMAJOR.MINOR.PATCH` on the dataset repository, and",
        "the first release of a minor line also `vMAJOR.MINOR`.",
        "",
    ]
    for i in range(len(releases) - 1, -1, -1):
        rel = releases[i]
        recs = records[records["release"] == rel.version] if len(records) else records
        out += [f"## {rel.version} ({rel.date}, {rel.kind})", "", rel.description, ""]
        if not len(recs):
            if i == 0 or not len(records) or not (records["release"].map(version_key) < rel.key).any():
                out += ["No ledger records: every label is the upstream MedCalc-Bench v1.0 label.", ""]
            else:
                out += [f"No ledger records: labels are those of {releases[i - 1].version}.", ""]
            continue
        accepted = recs[recs["decision"] == "accepted"]
        out += [f"{len(recs)} ledger record(s), {len(accepted)} accepted.", ""]
        out += ["### Accepted records by label status and source", ""]
        pairs: dict[tuple[str, str], int] = {}
        for st, src in zip(accepted["label_status"], accepted["source"]):
            pairs[(st, src)] = pairs.get((st, src), 0) + 1
        sources = sorted({s for _, s in pairs})
        statuses = [s for s in ("corrected", "abstain", "confirmed") if any(k[0] == s for k in pairs)]
        out += [md_table(["label status", *sources, "total"],
                         [[st, *[pairs.get((st, so), 0) for so in sources], sum(pairs.get((st, so), 0) for so in sources)]
                          for st in statuses], ["l"] + ["r"] * (len(sources) + 1)), ""]
        out += ["### Accepted records by error type", ""]
        out += [md_table(["error type", "records"], _counts(accepted["error_type"], "(none: confirmation)"), ["l", "r"]), ""]
        if (recs["decision"] != "accepted").any():
            out += ["### Records by decision", ""]
            out += [md_table(["decision", "records"], _counts(recs["decision"]), ["l", "r"]), ""]
        changes = accepted[accepted["label_status"].isin(["corrected", "abstain"])]
        out += [f"### Label changes ({len(changes)})", ""]
        if len(changes):
            out += [md_table(
                ["uid", "calculator", "old → new", "error type", "reviewer role", "rationale"],
                [[_uid_text(r["split"], r["uid"]), r["Calculator Name"], f"{r['old_value']} → {r['new_value']}",
                  r["error_type"], r["reviewer_role"], r["rationale"]] for r in changes.to_dict("records")]), ""]
        else:
            out += ["None (confirmations only).", ""]
        confirmed = int((accepted["label_status"] == "confirmed").sum())
        if confirmed:
            out += [f"{confirmed} accepted record(s) confirm the upstream label (listed in the `corrections` config).", ""]
    return "\n".join(out).rstrip() + "\n"


PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
COMMENT = re.compile(r"<!--.*?-->\n?", re.S)
FRONT = re.compile(r"\A---\n(.*?)\n---\n", re.S)


def split_card(text: str, path: Path) -> tuple[dict[str, Any], str]:
    m = FRONT.match(text)
    if not m:
        raise DataError(path, "the card must start with YAML front matter between '---' lines")
    try:
        front = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        raise DataError(path, f"malformed YAML front matter: {exc}") from None
    if not isinstance(front, dict):
        raise DataError(path, "the front matter must be a mapping")
    return front, text[m.end():]


def card_context(t: Tables, plan: Releases) -> dict[str, str]:
    rel = t.release
    splits = t.splits
    full = pd.concat([t.tables["full"][s] for s in splits], ignore_index=True)
    default_rule = (
        "every row, with the upstream MedCalc-Bench v1.0 label (no ledger record is applied in this "
        "release, so every `Label Status` is `unverified`)"
        if rel.default_rows == "all" else
        "the rows whose label was verified by the maintenance process (`Label Status` is `confirmed`, "
        "`corrected` or `abstain`); rows still `unverified` are only in `full`"
    )
    configs_rows = [
        ["default", "every row, upstream labels" if rel.default_rows == "all" else "verified rows (`Label Status` ≠ `unverified`)",
         "the 14 upstream columns + `Label Status`"],
        ["full", "every row: maintained label and provenance", "all the fields below"],
        ["original", "every row exactly as published upstream (v1.0 labels)", "the 14 upstream columns"],
        ["corrections", "one row per ledger record of the releases up to this one", "the record's fields"],
    ]
    published = t.published()
    for row in configs_rows:
        if row[0] not in published:
            row[1] = "no rows in this release: the config is absent"
    splits_rows = [[c, *[len(t.tables[c][s]) for s in splits]] for c in CONFIGS]
    status = _counts(full["Label Status"])
    acc = t.records[t.records["decision"] == "accepted"] if len(t.records) else t.records
    if len(acc):
        reviewers = [[role, n] for role, n in _counts(acc["reviewer_role"])]
        blinded = int(acc["blinded"].sum())
        etypes = _counts(acc["error_type"], "(none: confirmation)")
    else:
        reviewers, blinded, etypes = [], 0, []
    history = [[r.version, r.date, r.kind, f"`{full_tag(r.version)}`", r.description.split(". ")[0].rstrip(".")]
               for r in plan.upto(rel.version)]
    unverified = int((full["Label Status"] == "unverified").sum())
    return {
        "version": rel.version,
        "date": rel.date,
        "kind": rel.kind,
        "description": rel.description,
        "repo_id": plan.repo_id,
        "tag": full_tag(rel.version),
        "short_tag": short_tag(rel.version),
        "rows": f"{len(full):,}",
        "default_rows": f"{sum(len(t.tables['default'][s]) for s in splits):,}",
        "unverified_rows": f"{unverified:,}",
        "default_rule": default_rule,
        "splits": ", ".join(f"`{s}`" for s in splits),
        "configs_table": md_table(["config", "rows", "columns"], configs_rows),
        "splits_table": md_table(["config", *splits], splits_rows, ["l"] + ["r"] * len(splits)),
        "status_table": md_table(["Label Status", "rows"], status, ["l", "r"]),
        "reviewers_table": (md_table(["reviewer role", "accepted records"], reviewers, ["l", "r"])
                            + f"\n\n{blinded} of {len(acc)} accepted records were decided blind to the upstream label."
                            if len(acc) else "No ledger record is part of this release."),
        "error_types_table": (md_table(["error type", "accepted records"], etypes, ["l", "r"]) if etypes
                              else "No ledger record is part of this release."),
        "releases_table": md_table(["version", "date", "kind", "tag", "summary"], history),
    }


def render_card(template: str, path: Path, t: Tables, plan: Releases) -> str:
    front, body = split_card(template, path)
    for key in ("configs", "version"):
        if key in front:
            raise DataError(path, f"front matter key {key!r} is generated by the release build; remove it", field=key)
    front = dict(front)
    front["version"] = t.release.version
    front["configs"] = [
        {"config_name": c, **({"default": True} if c == "default" else {}),
         "data_files": [{"split": s, "path": f"data/{c}/{s}-00000-of-00001.parquet"} for s in splits]}
        for c, splits in t.published().items()
    ]
    body = COMMENT.sub("", body).lstrip("\n")  # template notes are not part of the card
    ctx = card_context(t, plan)
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(body)} - set(ctx))
    if unknown:
        raise DataError(path, f"unknown placeholder(s) {unknown}; known: {sorted(ctx)}")
    body = PLACEHOLDER.sub(lambda m: ctx[m.group(1)], body)
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n{body}"


# --------------------------------------------------------------------------------------------
# build


@dataclass
class BuildResult:
    out: Path
    release: Release
    rows: dict[str, dict[str, int]]
    files: dict[str, str]
    state: dict[str, Any]
    draft: bool = False
    reasons: list[str] = field(default_factory=list)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _check_current(t: Tables, inputs: Inputs, plan: Releases) -> None:
    """For the latest release without unreleased accepted records, the maintained labels of the
    pipeline (``apply``) must be the release's labels: otherwise data/maintained is stale."""
    m = inputs.maintained
    if m is None or not m.is_file() or t.release.version != plan.latest.version:
        return
    records, _ = ledger.collect(inputs.ledger)
    if any(r.release == ledger.UNRELEASED and r.get("decision") == "accepted" for r in records):
        return
    cols = ["split", "uid", "Ground Truth Answer", "Label Status"]
    have = pd.read_parquet(m, columns=cols).sort_values(["split", "uid"]).reset_index(drop=True).astype(str)
    want = pd.concat([t.tables["full"][s][cols] for s in t.splits]).sort_values(["split", "uid"]).reset_index(drop=True).astype(str)
    if not have.equals(want):
        raise DataError(m, f"maintained labels differ from release {t.release.version} built from the ledger: "
                           "the file is stale (run `dvc repro apply`)")


def draft_release(inputs: Inputs, plan: Releases, template: str) -> tuple[Release, list[str]]:
    """The next release as the working tree would make it (version derived), and why."""
    latest = plan.latest
    previous = release_state(build_tables(inputs, latest, plan.path).tables, template)
    probe = Release("999999.0.0", latest.date, "major", "draft", latest.default_rows, None)
    current = release_state(build_tables(inputs, probe, plan.path, include_unreleased=True).tables, template)
    version, kind, reasons = next_version(latest.version, previous, current)
    if version is None:
        return latest, ["nothing changed since " + latest.version]
    text = (f"Draft of {version} ({kind}): the accepted ledger records not yet in a release, applied to "
            f"{latest.version}. Not a release; it cannot be published.")
    return Release(version, dt.date.today().isoformat(), kind or "patch", text, latest.default_rows, None), reasons


def build(out: Path, *, version: str | None = None, inputs: Inputs | None = None,
          progress: Callable[[str], None] | None = None, draft: bool = False) -> BuildResult:
    """Build release ``version`` (default: the latest in releases.yaml) into ``out``, atomically:
    the directory is replaced only when the whole build succeeded.

    ``draft``: build a preview of the next release instead -- every accepted record applied, the
    version derived with :func:`derive_bump`; its manifest says ``draft: true`` and publish refuses it.
    """
    inputs = inputs or Inputs.from_root()
    say = progress or (lambda _msg: None)
    plan = load_releases(inputs.releases)
    if not inputs.card.is_file():
        raise DataError(inputs.card, "dataset card template not found")
    template = inputs.card.read_text(encoding="utf-8")
    reasons: list[str] = []
    if draft:
        if version is not None:
            raise DataError("--version", "a draft's version is derived; do not pass --version with --draft")
        say("deriving the next version")
        rel, reasons = draft_release(inputs, plan, template)
        draft = rel.version != plan.latest.version
        if draft:
            plan = Releases(plan.path, plan.repo_id, plan.releases + [rel])
    else:
        rel = plan.get(version)
    say(f"applying the ledger up to {rel.version}")
    t = build_tables(inputs, rel, plan.path, include_unreleased=draft)
    if not draft:
        _check_current(t, inputs, plan)
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "manifest.json").is_file())):
        raise DataError(out, "exists and is not a release build (no manifest.json); refusing to replace it")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        say("writing parquet files")
        for cfg, splits in t.published().items():
            for s in splits:
                write_parquet(t.tables[cfg][s], tmp / "data" / cfg / f"{s}-00000-of-00001.parquet")
        say("rendering the card and the changelog")
        (tmp / "README.md").write_text(render_card(template, inputs.card, t, plan), encoding="utf-8")
        (tmp / "CHANGELOG.md").write_text(render_changelog(plan.upto(rel.version), t.records), encoding="utf-8")
        files = {f: sha256_file(tmp / f) for f in _files(tmp)}
        state = release_state(t.tables, template)
        manifest = {
            "name": plan.repo_id,
            "version": rel.version,
            "date": rel.date,
            "kind": rel.kind,
            "description": rel.description,
            "tag": full_tag(rel.version),
            "default_rows": rel.default_rows,
            "generator": GENERATOR,
            "rows": t.rows(),
            "files": files,
            "state": state,
        }
        if draft:
            manifest["draft"] = True
            manifest["draft_reasons"] = reasons
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                           encoding="utf-8")
        os.chmod(tmp, 0o755)
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return BuildResult(out, rel, t.rows(), files, state, draft, reasons)


def current_state(inputs: Inputs | None = None) -> tuple[dict[str, Any], Releases]:
    """The state the working tree would release now: every released and unreleased record applied."""
    inputs = inputs or Inputs.from_root()
    plan = load_releases(inputs.releases)
    probe = Release("999999.0.0", plan.latest.date, "major", "draft", plan.latest.default_rows, None)
    t = build_tables(inputs, probe, plan.path, include_unreleased=True)
    return release_state(t.tables, inputs.card.read_text(encoding="utf-8")), plan


def read_manifest(release_dir: Path) -> dict[str, Any]:
    path = Path(release_dir) / "manifest.json"
    if not path.is_file():
        raise DataError(path, "not found: not a release build (run `medcalc-maintained release build`)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON: {exc}") from None


def verify_manifest(release_dir: Path) -> list[str]:
    """Problems of a release directory against its manifest: missing, extra or changed files."""
    release_dir = Path(release_dir)
    man = read_manifest(release_dir)
    listed = man.get("files") or {}
    present = [f for f in _files(release_dir) if f != "manifest.json"]
    problems = []
    for f in sorted(set(listed) - set(present)):
        problems.append(f"{f}: listed in manifest.json but missing")
    for f in sorted(set(present) - set(listed)):
        problems.append(f"{f}: not listed in manifest.json")
    for f in sorted(set(present) & set(listed)):
        if sha256_file(release_dir / f) != listed[f]:
            problems.append(f"{f}: sha256 differs from manifest.json")
    return problems


# --------------------------------------------------------------------------------------------
# publish


class PublishRefused(DataError):
    """Publishing was refused before anything was written."""


@dataclass
class Target:
    scheme: str  # "hf" | "file"
    location: str  # repo id or absolute path

    @classmethod
    def parse(cls, text: str) -> "Target":
        if text.startswith("hf://"):
            repo = text[len("hf://"):].strip("/")
            if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", repo):
                raise DataError("--target", f"{text!r}: expected hf://ORG/NAME")
            return cls("hf", repo)
        if text.startswith("file://"):
            path = text[len("file://"):]
            if not path.startswith("/"):
                raise DataError("--target", f"{text!r}: expected file:///absolute/path/repo.git")
            return cls("file", path)
        raise DataError("--target", f"{text!r}: expected hf://ORG/NAME or file:///path/repo.git")

    def __str__(self) -> str:
        return f"{self.scheme}://{self.location}" if self.scheme == "hf" else f"file://{self.location}"


@dataclass
class PublishResult:
    target: str
    version: str
    tags: list[str]
    actions: list[str]
    dry_run: bool
    commit: str | None = None
    notes: list[str] = field(default_factory=list)


def check_release(release_dir: Path) -> tuple[list[str], list[str]]:
    """(problems, notes) of a built release: manifest integrity, then the data contracts
    (``medcalc_maintained.contracts.validate.validate_release``)."""
    problems = verify_manifest(release_dir)
    notes: list[str] = []
    from medcalc_maintained.contracts import validate as contracts

    result = contracts.validate_release(Path(release_dir))
    failures = list(getattr(result, "failures", []) or [])
    blocking = list(getattr(result, "blocking", failures))
    if not result.success:
        problems += [f"contract: {f}" for f in (blocking or ["validation failed"])]
    warnings = [f for f in failures if f not in blocking]
    if warnings:
        names = sorted({getattr(w, "expectation", str(w)) for w in warnings})
        notes.append(f"{len(warnings)} non-blocking contract warning(s) ({', '.join(names)}); "
                     "`medcalc-maintained validate DIR` shows them")
    return problems, notes


def _version_tags(names: Iterable[str]) -> list[str]:
    return sorted((n[1:] for n in names if re.fullmatch(r"v\d+\.\d+\.\d+", n)), key=version_key)


def _plan_tags(version: str, existing: set[str], where: str) -> tuple[list[str], list[str]]:
    tag = full_tag(version)
    if tag in existing:
        raise PublishRefused(where, f"tag {tag} already exists; tags are never moved or overwritten")
    published = _version_tags(existing)
    if published and version_key(published[-1]) > version_key(version):
        raise PublishRefused(where, f"v{published[-1]} is already published; {tag} would move the branch backwards")
    short = short_tag(version)
    notes = []
    tags = [tag]
    if short in existing:
        notes.append(f"{short} already marks the first release of {short[1:]}; it is not moved")
    else:
        tags.append(short)
    return tags, notes


def _git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0")
    return env


def _git_dir(args: list[str], git_dir: Path, env: dict[str, str] | None = None, input: bytes | None = None,
             check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["git", f"--git-dir={git_dir}", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false", *args],
                          input=input, capture_output=True, env=env or _git_env())
    if check and proc.returncode != 0:
        raise DataError(git_dir, f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc


def _file_refs(git_dir: Path) -> dict[str, str]:
    proc = _git_dir(["for-each-ref", "--format=%(refname) %(objectname)"], git_dir)
    out = {}
    for line in proc.stdout.decode().splitlines():
        name, sha = line.split(" ", 1)
        out[name] = sha
    return out


def _publish_file(release_dir: Path, target: Target, man: dict[str, Any], dry_run: bool, say: Callable[[str], None]
                  ) -> PublishResult:
    repo = Path(target.location)
    version = man["version"]
    exists = repo.exists()
    if exists:
        if not (repo / "HEAD").is_file() or not (repo / "objects").is_dir():
            raise PublishRefused(repo, "exists but is not a bare git repository (create one with `git init --bare`)")
        refs = _file_refs(repo)
        head = _git_dir(["symbolic-ref", "HEAD"], repo).stdout.decode().strip()
    else:
        refs, head = {}, "refs/heads/main"
    tags_present = {r[len("refs/tags/"):] for r in refs if r.startswith("refs/tags/")}
    tags, notes = _plan_tags(version, tags_present, str(repo))
    parent = refs.get(head)
    actions = ([] if exists else [f"create bare git repository {repo} (branch {head[len('refs/heads/'):]})"])
    actions.append(f"commit {len(man['files']) + 1} files of release {version} on {head[len('refs/heads/'):]}"
                   + (f" (parent {parent[:12]})" if parent else " (first commit)"))
    actions += [f"create tag {t}" for t in tags]
    result = PublishResult(str(target), version, tags, actions, dry_run, notes=notes)
    if dry_run:
        return result
    created = False
    try:
        if not exists:
            repo.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(repo)], check=True, capture_output=True,
                           env=_git_env())
            created = True
        stamp = f"{man['date']} 00:00:00 +0000"
        env = _git_env()
        env.update(GIT_AUTHOR_NAME="medcalc-maintained release", GIT_AUTHOR_EMAIL="release@medcalc-maintained.invalid",
                   GIT_COMMITTER_NAME="medcalc-maintained release", GIT_COMMITTER_EMAIL="release@medcalc-maintained.invalid",
                   GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        with tempfile.TemporaryDirectory(prefix="medcalc-publish-") as tmp:
            env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
            _git_dir([f"--work-tree={release_dir}", "add", "--all", "--force", "."], repo, env)
            tree = _git_dir(["write-tree"], repo, env).stdout.decode().strip()
        message = f"Release {version} ({man['kind']})\n\n{man.get('description') or ''}".rstrip() + "\n"
        args = ["commit-tree", tree] + (["-p", parent] if parent else [])
        commit = _git_dir(args, repo, env, input=message.encode()).stdout.decode().strip()
        zero = "0" * 40
        lines = ["start", f"update {head} {commit} {parent or zero}"]
        lines += [f"create refs/tags/{t} {commit}" for t in tags]
        lines += ["prepare", "commit", ""]
        _git_dir(["update-ref", "--stdin"], repo, env, input="\n".join(lines).encode())
        result.commit = commit
        say(f"committed {commit[:12]} and tagged {', '.join(tags)}")
        return result
    except BaseException:
        if created:
            shutil.rmtree(repo, ignore_errors=True)
        raise


def _hub_error(exc: Exception) -> str:
    """A one-line description of a Hub error without secrets (the token is never part of it)."""
    first = (str(exc).strip().splitlines() or [""])[0]
    token = os.environ.get("HF_TOKEN")
    if token:
        first = first.replace(token, "***")
    return f"{type(exc).__name__}: {first}"[:300]


def _publish_hf(release_dir: Path, target: Target, man: dict[str, Any], dry_run: bool, say: Callable[[str], None]
                ) -> PublishResult:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    token = os.environ.get("HF_TOKEN") or None
    if token is None and not dry_run:
        raise PublishRefused("HF_TOKEN", "is not set: a write token is needed to publish to the Hub")
    api = HfApi(token=token)
    version = man["version"]
    notes: list[str] = []
    try:
        refs = api.list_repo_refs(target.location, repo_type="dataset")
        existing = {t.name for t in refs.tags}
        exists = True
    except RepositoryNotFoundError:
        existing, exists = set(), False
    except Exception as exc:  # network or Hub errors: say which, never the token
        raise PublishRefused(str(target), f"cannot list the tags of the dataset repository ({_hub_error(exc)})") from None
    tags, tag_notes = _plan_tags(version, existing, str(target))
    notes += tag_notes
    actions = ([] if exists else [f"create dataset repository {target.location}"])
    actions.append(f"upload {len(man['files']) + 1} files of release {version} to main (files not in the release are deleted)")
    actions += [f"create tag {t}" for t in tags]
    result = PublishResult(str(target), version, tags, actions, dry_run, notes=notes)
    if dry_run:
        return result
    try:
        if not exists:
            api.create_repo(target.location, repo_type="dataset", exist_ok=True)
        info = api.upload_folder(repo_id=target.location, folder_path=str(release_dir), repo_type="dataset",
                                 commit_message=f"Release {version} ({man['kind']})",
                                 commit_description=man.get("description") or None, delete_patterns="*")
        commit = getattr(info, "oid", None)
        for t in tags:
            api.create_tag(target.location, tag=t, revision=commit, repo_type="dataset",
                           tag_message=f"medcalc-maintained {version}")
    except Exception as exc:
        raise DataError(str(target), f"publishing failed ({_hub_error(exc)})") from None
    result.commit = commit
    say(f"uploaded commit {str(commit)[:12]} and tagged {', '.join(tags)}")
    return result


def publish(release_dir: Path, target: str, *, dry_run: bool = False, say: Callable[[str], None] | None = None
            ) -> PublishResult:
    """Publish a built release to ``hf://ORG/NAME`` or ``file:///path/repo.git``.

    Refuses (raising :class:`PublishRefused`, with nothing written) when the release fails its
    manifest or data contracts, when its tag exists, or when a later version is already published.
    """
    say = say or (lambda _m: None)
    release_dir = Path(release_dir).resolve()
    tgt = Target.parse(target)
    man = read_manifest(release_dir)
    if man.get("draft"):
        raise PublishRefused(release_dir, f"is a draft of {man.get('version')} (`release build --draft`); "
                                          "add the release to releases.yaml and build it to publish")
    problems, notes = check_release(release_dir)
    if problems:
        shown = "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
        raise PublishRefused(release_dir, f"validation failed, nothing published: {shown}")
    fn = _publish_hf if tgt.scheme == "hf" else _publish_file
    result = fn(release_dir, tgt, man, dry_run, say)
    result.notes = notes + result.notes
    return result
