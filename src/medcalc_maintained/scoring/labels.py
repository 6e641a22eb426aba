"""Where scoring gets labels: the ONE reader of a release's labels, and ``evaluate``'s label sources.

:func:`release_labels` is the only place in scoring that reads what a release labels.
:func:`resolve_against` turns ``evaluate``'s ``--against`` items into :class:`LabelSource` s:

* a release of ``releases.yaml`` by version or tag: ``2.0.0``, ``v2.0.0``, or the minor-line tag
  ``v2.0`` / ``2.0`` (the first release of that line, as ``publish`` tags it; ``v1.0`` is
  release 1.0.0, the upstream v1.0 labels). Its labels are its ``default`` config; the rows of
  its ``full`` config that ``default`` leaves out are *unlabelled in that version*;
* a built release directory (``build/release``, a download of the Hub repository): the same
  from its ``data/default`` and ``data/full`` parquet files
  (:mod:`medcalc_maintained.release.layout`);
* ``PATH`` of a parquet/CSV label file (every row labelled).

``NAME=ITEM`` names the source; otherwise a release is named ``vVERSION``, a directory or a file
after its name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import check_size
from medcalc_maintained.core.versions import looks_like_version
from medcalc_maintained.project import Project
from medcalc_maintained.release import layout
from medcalc_maintained.release.tables import CONFIGS, load_config


def release_labels(project: Project, version: str, config: str = "full") -> pd.DataFrame:
    """One config of release ``version``, all splits in one frame with ``split`` and ``uid``: the
    release-tables stage's file (a :class:`DataError` saying to run ``dvc repro release-tables``
    when it is missing or stale; scoring never applies the ledger)."""
    return load_config(project, version, config)


# What a label file may hold, checked before it is read (pandas holds a CSV at ~7x its size: a 1 GiB
# CSV took 7.4 GB). Measured: release 2.2.0's full config (1,047 rows, every column) is 4.2 MB as CSV
# and 0.8 MB as parquet; upstream v1.0's test_data.csv is 4.0 MB. Hostile-file bounds with headroom.
LABEL_FILE_MAX_BYTES = 64 << 20         # the file: 15x the full config as CSV
LABEL_MAX_ROWS = 100_000                # a parquet file's rows (its footer): ~100x the 1,047 test rows
LABEL_UNPACKED_MAX_BYTES = 256 << 20    # a parquet file's columns uncompressed (its footer)


def _check_parquet(path: Path) -> None:
    """Refuse a parquet file whose footer declares more rows or uncompressed bytes than a label file holds."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
    except Exception as exc:  # pyarrow raises several types for a non-parquet file
        raise DataError(path, f"not a readable parquet file ({exc})") from None
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if meta.num_rows > LABEL_MAX_ROWS:
        raise DataError(path, f"label file: {meta.num_rows} rows, over the {LABEL_MAX_ROWS}-row limit; refused unread")
    if unpacked > LABEL_UNPACKED_MAX_BYTES:
        raise DataError(path, f"label file: unpacks to {unpacked} bytes, over the {LABEL_UNPACKED_MAX_BYTES}-byte "
                              "limit; refused unread")


def read_label_file(path: os.PathLike | str) -> pd.DataFrame:
    """A label set from a parquet (or CSV) file; a CSV is read with every column as text. A file over
    :data:`LABEL_FILE_MAX_BYTES` (a parquet file declaring more than :data:`LABEL_MAX_ROWS` rows or
    :data:`LABEL_UNPACKED_MAX_BYTES` unpacked) is refused before it is read."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "label file not found (expected a release version or tag, a built release "
                        "directory, or a parquet/CSV label file)")
    check_size(path, LABEL_FILE_MAX_BYTES, "label file")
    if path.suffix.lower() == ".csv":
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    _check_parquet(path)
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a non-parquet file
        raise DataError(path, f"not a readable parquet file ({exc})") from exc


@dataclass
class LabelSource:
    """One ``--against`` item: its labelled rows, the uids it knows, and its configs."""

    name: str
    origin: str
    labels: pd.DataFrame
    universe: frozenset[int] | None = None  # every uid of the version (its `full` config); None: a label file
    config_names: tuple[str, ...] = ()
    read_config: Callable[[str], pd.DataFrame] | None = field(default=None, repr=False)
    version: str | None = None  # the release it is (None: a label file)

    def config_uids(self, config: str) -> frozenset[int] | None:
        """The uids of one of its configs, ``None`` when it has no such config (or is a label file)."""
        if self.read_config is None or config not in self.config_names:
            return None
        return frozenset(int(u) for u in self.read_config(config)["uid"])


def _uids(df: pd.DataFrame) -> frozenset[int]:
    return frozenset(int(u) for u in df["uid"])


def _release_source(project: Project, name: str, version: str) -> LabelSource:
    extra = project.release_tables / version
    names = set(CONFIGS) | ({p.stem for p in extra.glob("*.parquet")} if extra.is_dir() else set())

    def read(config: str) -> pd.DataFrame:
        if config in CONFIGS:
            return release_labels(project, version, config)
        return pd.read_parquet(project.release_table(version, config))

    return LabelSource(name, f"release {version}", read("default"), _uids(read("full")), tuple(sorted(names)), read,
                       version)


def _directory_source(name: str, directory: Path) -> LabelSource:
    # graded only against an untouched release: every file of its manifest's sha256, and no draft
    version = layout.check_release_dir(directory, "evaluate --against").get("version", "?")
    names = layout.config_names(directory)
    for needed in ("default", "full"):
        if needed not in names:
            raise DataError(directory / layout.DATA_DIR / needed, f"release directory has no {needed!r} config")

    def read(config: str) -> pd.DataFrame:
        return layout.read_config(directory, config)

    return LabelSource(name, f"release directory {directory} ({version})", read("default"), _uids(read("full")),
                       names, read, version)


def resolve_against(project: Project, against: list[str]) -> list[LabelSource]:
    """The label sources of ``--against`` items, in order (see the module doc)."""
    sources: list[LabelSource] = []
    for item in against:
        name, sep, value = item.partition("=")
        name, value = (name, value) if sep else ("", item)
        if sep and not name:
            raise ValueError(f"--against {item!r}: empty label set name; use NAME=ITEM")
        path = Path(value)
        if path.is_dir():
            src = _directory_source(name or path.resolve().name, path)
        elif looks_like_version(value) and path.suffix.lower() not in (".csv", ".parquet"):
            from medcalc_maintained.release.plan import load_releases

            plan = load_releases(project.releases_file)
            version = plan.resolve_version(value)
            if version is None:
                raise DataError(project.releases_file, f"--against {value!r}: no such release or tag; "
                                f"releases (tags): {plan.tags_text()}")
            src = _release_source(project, name or f"v{version}", version)
        else:
            src = LabelSource(name or path.stem, f"label file {path}", read_label_file(path))
        if any(s.name == src.name for s in sources):
            raise ValueError(f"--against: two label sets are called {src.name!r}; name them with NAME=ITEM")
        sources.append(src)
    return sources


def subset_uids(sources: list[LabelSource], config: str) -> tuple[frozenset[int], list[str]]:
    """The uids of config ``config``: the rows it holds in every release among ``sources`` whose
    ``config`` has rows (a release without it, one where it is empty -- ``mini`` of 1.0.0 --, or a
    label file, is restricted to those rows too). Notes say which sources lack it or have it empty;
    a :class:`DataError` when none has it, or every one that has it is empty."""
    found = {s.name: s.config_uids(config) for s in sources}
    have = [u for u in found.values() if u]
    if not have:
        if any(u is not None for u in found.values()):
            empty = ", ".join(n for n, u in found.items() if u is not None)
            raise DataError("--subset", f"config {config!r} has no rows in any of the --against releases "
                            f"(empty in: {empty})")
        listed = "; ".join(f"{s.name}: {', '.join(s.config_names) or 'a label file, no configs'}" for s in sources)
        raise DataError("--subset", f"config {config!r} is in none of the --against releases (their configs: {listed})")
    uids = frozenset.intersection(*have)
    with_rows = [n for n, u in found.items() if u]
    notes = [f"--subset {config}: {len(uids)} rows"]
    lacking = [n for n, u in found.items() if u is None]
    if lacking:
        notes.append(f"--subset {config}: {', '.join(lacking)} have no {config!r} config; restricted to its rows "
                     "in the other releases")
    empty_in = [n for n, u in found.items() if u is not None and not u]
    if empty_in:
        notes.append(f"--subset {config}: {', '.join(empty_in)} {'has' if len(empty_in) == 1 else 'have'} an empty "
                     f"{config!r} config; scored on the {len(uids)} {config!r} rows of {', '.join(with_rows)}")
    if len({len(u) for u in have}) > 1 or any(u != uids for u in have):
        notes.append(f"--subset {config}: the releases hold different rows; their {len(uids)} common rows are used")
    return uids, notes


# the columns a label set's content hash covers: what a row is graded against
HASHED_COLUMNS = ("uid", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type")


def labels_sha256(labels: pd.DataFrame) -> str:
    """The content hash of a label set: sha256 of one line per row, sorted by ``uid``, of the
    :data:`HASHED_COLUMNS` as text joined by tabs (``uid<TAB>label<TAB>lower<TAB>upper<TAB>type``,
    each line ending in a newline). Two label sets with this hash grade every answer alike,
    whatever their release, file or row order."""
    import hashlib

    missing = [c for c in HASHED_COLUMNS if c not in labels.columns]
    if missing:
        raise DataError("label set", f"missing column(s) {missing} for its content hash")
    rows = sorted((int(r[0]), *("" if v is None else str(v) for v in r[1:]))
                  for r in labels[list(HASHED_COLUMNS)].itertuples(index=False, name=None))
    text = "".join("\t".join(str(v) for v in r) + "\n" for r in rows)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
