"""Where scoring gets labels: the ONE reader of a release's labels, and label files.

:func:`release_labels` is the only place in scoring that reads what a release labels;
:func:`label_sets` turns ``evaluate``'s ``--against`` items (a version ``1.0.0``, a tag ``v1.0.0``,
``PATH`` or ``NAME=PATH``) into named label sets.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from medcalc_maintained.core.io import DataError
from medcalc_maintained.core.versions import from_tag
from medcalc_maintained.project import Project


def release_labels(project: Project, version: str, config: str = "full") -> pd.DataFrame:
    """One config of release ``version``, all splits in one frame with ``split`` and ``uid``
    (the release-tables stage's file when current, else built on the fly)."""
    from medcalc_maintained.release.tables import load_config

    return load_config(project, version, config)


def read_label_file(path: os.PathLike | str) -> pd.DataFrame:
    """A label set from a parquet (or CSV) file; a CSV is read with every column as text."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "label file not found")
    if path.suffix.lower() == ".csv":
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    try:
        return pd.read_parquet(path)
    except Exception as exc:  # pyarrow raises several types for a non-parquet file
        raise DataError(path, f"not a readable parquet file ({exc})") from exc


def label_sets(against: list[str]) -> dict[str, str | Path]:
    """NAME -> a release version (``1.0.0``/``v1.0.0``: its ``default`` config) or a label file.

    An item without ``NAME=`` is named ``vVERSION`` (a release) or after the file's stem.
    """
    sets: dict[str, str | Path] = {}
    for item in against:
        name, sep, value = item.partition("=")
        value = value if sep else item
        version = from_tag(value)
        source: str | Path = version if version is not None else Path(value)
        if not sep:
            name = f"v{version}" if version is not None else Path(value).stem
        if not name:
            raise ValueError(f"--against {item!r}: empty label set name; use NAME=PATH")
        if name in sets:
            raise ValueError(f"--against: two label sets are called {name!r}; name them with NAME=PATH")
        sets[name] = source
    return sets


def load_label_sets(project: Project, sets: dict[str, str | Path]) -> dict[str, pd.DataFrame]:
    """The frames of :func:`label_sets`: a release's ``default`` config, or a label file."""
    return {name: release_labels(project, source, "default") if isinstance(source, str) else read_label_file(source)
            for name, source in sets.items()}
