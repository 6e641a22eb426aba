"""Where a built release keeps things: the YAML front matter of its card and the config and split
a data file belongs to (read by :mod:`~medcalc_maintained.contracts.release_views` and
:mod:`~medcalc_maintained.contracts.release_content`)."""

from __future__ import annotations

import re

from medcalc_maintained.core.versions import RELEASE_DATA_DIR

FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_PART = re.compile(r"^(?P<split>[A-Za-z0-9_]+)-\d+-of-\d+\.parquet$")


def config_of(rel: str) -> tuple[str, str] | None:
    """``(config, split)`` of a release-relative data file path, ``None`` for any other path."""
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != RELEASE_DATA_DIR or not parts[2].endswith(".parquet"):
        return None
    m = _PART.match(parts[2])
    return parts[1], (m["split"] if m else parts[2].split("-")[0])
