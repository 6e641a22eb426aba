"""Where a built release keeps things: the YAML front matter of its card, the config and split
a data file belongs to, and the files a release build writes (read by
:mod:`~medcalc_maintained.contracts.release_views` and :mod:`~medcalc_maintained.contracts.release_content`)."""

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


def known_file(rel: str) -> bool:
    """Whether ``rel`` (release-relative) is a file that ``release build`` writes and the release
    contracts check: the card, the changelog, croissant.json, the feed, or a data file of a config.
    ``manifest.json`` lists every other file, not itself."""
    from medcalc_maintained.release.croissant import FILE as CROISSANT
    from medcalc_maintained.release.feed import FEED_FILE
    from medcalc_maintained.release.tables import CONFIGS

    if rel in ("README.md", "CHANGELOG.md", CROISSANT, FEED_FILE):
        return True
    found = config_of(rel)
    return found is not None and found[0] in CONFIGS
