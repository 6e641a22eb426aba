"""Contract view of a built release's feed, ``releases.json`` (:mod:`medcalc_maintained.release.feed`),
read without trusting it:

``feed``  the document and each of its entries (``item``: ``releases.json`` or ``release <version>``):

          ``readable``            the file is a JSON object of the feed's format (the release's own:
                                  ``release/feed.py: feed_format``) with a ``releases`` list
          ``lists_releases``      its entries are the manifest's ``releases``, in order, and ``latest`` is
                                  the manifest's version
          ``well_formed``         an entry has its fields, its tags (``vMAJOR.MINOR.PATCH`` first), the
                                  previous entry as ``previous``, a known class per config and
                                  ``comparable`` as its `default` class says
          ``classes_consistent``  each config's class agrees with the entry's own counts and sha256:
                                  ``first`` only for the first entry; ``identical`` exactly when every
                                  data file has the previous entry's sha256; ``rows-changed`` exactly
                                  when rows came in or left; ``labels-changed`` only with changed labels,
                                  ``labels-unchanged`` only without; the rows per calculator add up to
                                  `default`'s counts
          ``matches_release``     the entry of this release names exactly the manifest's data files with
                                  their sha256 and the manifest's rows per config and split

A format-2 feed (``release/feed.py``) must also give each entry its ``description`` (``well_formed``)
and, per config, as many distinct ids in ``labels_changed_ids``, ``rows_in_ids`` and ``rows_out_ids``
as its counts say (``classes_consistent``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.versions import full_tag
from medcalc_maintained.release.layout import config_of

COLUMNS = ["item", "readable", "lists_releases", "well_formed", "classes_consistent", "matches_release"]
ENTRY_FIELDS = ("version", "tag", "tags", "previous", "comparability", "comparable", "configs",
                "changed_rows_per_calculator", "ledger_commit")
COUNTS = ("rows_in", "rows_out", "labels_changed")


def _row(item: str, **facts: bool) -> dict[str, Any]:
    return {"item": item, **{c: facts.get(c, True) for c in COLUMNS[1:]}}


def read_feed(root: Path) -> dict[str, Any] | None:
    from medcalc_maintained.release.feed import FEED_FILE, FEED_FORMATS

    try:
        doc = json.loads((Path(root) / FEED_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or doc.get("format") not in FEED_FORMATS or not isinstance(doc.get("releases"), list) \
            or not all(isinstance(e, dict) for e in doc["releases"]):
        return None
    return doc


def _well_formed(e: dict[str, Any], previous: str | None, fmt: int = 1) -> bool:
    from medcalc_maintained.release.feed import CLASSES, COMPARABLE

    if any(k not in e for k in ENTRY_FIELDS) or not isinstance(e["configs"], dict) or not e["configs"]:
        return False
    if fmt >= 2 and not (isinstance(e.get("description"), str) and e["description"].strip()):
        return False
    tags = e["tags"] if isinstance(e["tags"], list) else []
    classes = [c.get("class") if isinstance(c, dict) else None for c in e["configs"].values()]
    default = e["configs"].get("default") or {}
    return (e["tag"] == full_tag(str(e["version"])) and tags[:1] == [e["tag"]] and e["previous"] == previous
            and all(c in CLASSES for c in classes) and e["comparability"] == default.get("class")
            and e["comparable"] == (e["comparability"] in COMPARABLE or e["comparability"] == "first"))


def _ids_consistent(c: dict[str, Any]) -> bool:
    """A format-2 config diff: as many distinct ids behind each count as the count says."""
    from medcalc_maintained.release.feed import ID_FIELDS

    return all(isinstance(c.get(ids), list) and len(set(map(str, c[ids]))) == len(c[ids]) == c.get(count)
               for count, ids in ID_FIELDS.items())


def _config_consistent(config: str, c: dict[str, Any], before: dict[str, Any] | None, fmt: int = 1) -> bool:
    cls = c.get("class")
    if before is None:
        return cls == "first"
    if fmt >= 2 and not _ids_consistent(c):
        return False
    files, prior = c.get("files") or {}, before.get("files") or {}
    same = bool(files) and files == prior
    if cls == "first" or same != (cls == "identical"):
        return False
    if not all(isinstance(c.get(k), int) and c[k] >= 0 for k in COUNTS):
        return False
    moved = c["rows_in"] + c["rows_out"] > 0
    if cls == "identical":
        return not moved and c["labels_changed"] == 0
    if cls == "rows-changed":
        return moved
    return not moved and (c["labels_changed"] > 0) == (cls == "labels-changed")


def _classes_consistent(e: dict[str, Any], before: dict[str, Any] | None, fmt: int = 1) -> bool:
    configs = e["configs"]
    prior = (before or {}).get("configs") or {}
    if not all(isinstance(c, dict) and _config_consistent(n, c, prior.get(n) if before else None, fmt)
               for n, c in configs.items()):
        return False
    calcs = e["changed_rows_per_calculator"]
    if before is None:
        return calcs == []
    default = configs.get("default") or {}
    return isinstance(calcs, list) and all(isinstance(r, dict) for r in calcs) and all(
        sum(int(r.get(k) or 0) for r in calcs) == default.get(k) for k in COUNTS)


def _matches_release(e: dict[str, Any], manifest: dict[str, Any], listed: dict[str, str]) -> bool:
    data = {f: h for f, h in listed.items() if config_of(f)}
    files = {f: h for c in e["configs"].values() for f, h in (c.get("files") or {}).items()}
    rows = {n: c.get("rows") for n, c in e["configs"].items()}
    return files == data and rows == manifest.get("rows")


def feed_view(root: Path, manifest: dict[str, Any], listed: dict[str, str]) -> pd.DataFrame:
    """The ``feed`` view of release ``root`` (``listed``: the manifest's files and their sha256)."""
    from medcalc_maintained.release.feed import FEED_FILE

    doc = read_feed(root)
    if doc is None:
        return pd.DataFrame([_row(FEED_FILE, readable=False)], columns=COLUMNS)
    entries = doc["releases"]
    versions = [str(e.get("version")) for e in entries]
    from medcalc_maintained.release.feed import feed_format

    own = str(manifest.get("version"))
    rows = [_row(FEED_FILE, readable=doc["format"] == (feed_format(own) if own[:1].isdigit() else doc["format"]),
                 lists_releases=versions == manifest.get("releases")
                 and doc.get("latest") == manifest.get("version") == (versions[-1] if versions else None))]
    for i, e in enumerate(entries):
        before = entries[i - 1] if i else None
        ok = _well_formed(e, versions[i - 1] if i else None, doc["format"])
        rows.append(_row(f"release {versions[i]}", well_formed=ok,
                         classes_consistent=ok and _classes_consistent(e, before, doc["format"]),
                         matches_release=versions[i] != manifest.get("version") or (
                             ok and _matches_release(e, manifest, listed))))
    return pd.DataFrame(rows, columns=COLUMNS)
