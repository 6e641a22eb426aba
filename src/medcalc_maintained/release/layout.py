"""The files of a built release (a Hugging Face dataset repository), in one place::

    README.md        the card: YAML front matter (``configs``, ``dataset_info``) between '---' lines
    CHANGELOG.md     a draft's opens with :data:`DRAFT_HEADING`
    manifest.json    sha256 of every other file, row counts, the release state
    croissant.json   (:mod:`~medcalc_maintained.release.croissant`)
    releases.json    the release feed (:mod:`~medcalc_maintained.release.feed`)
    data/<config>/<split>-00000-of-00001.parquet

Every module that reads a release directory -- the build and ``publish``
(:mod:`~medcalc_maintained.release.build`, :mod:`~medcalc_maintained.release.publish`), the contract
views (:mod:`medcalc_maintained.contracts.release_views`, :mod:`~medcalc_maintained.contracts.release_content`)
and ``evaluate --against DIR`` (:mod:`medcalc_maintained.scoring.labels`) -- takes the file names,
the front matter, the manifest and the configs from here. Nothing here builds a release.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.json_text import loads_json
from medcalc_maintained.core.readers import read_text_bounded, sha256_file
from medcalc_maintained.core.yaml_text import safe_load

DATA_DIR = "data"  # one parquet file per config and split under this folder
CARD = "README.md"
CHANGELOG = "CHANGELOG.md"
MANIFEST = "manifest.json"
CROISSANT = "croissant.json"  # written by :mod:`~medcalc_maintained.release.croissant`
FEED = "releases.json"  # the release feed, :mod:`~medcalc_maintained.release.feed`
# the calculators' conformance vectors and the errata of other implementations (stage errata's files, copied)
CONFORMANCE_DIR = "conformance"
CONFORMANCE_FILES = (f"{CONFORMANCE_DIR}/vectors.json", f"{CONFORMANCE_DIR}/errata.json", f"{CONFORMANCE_DIR}/errata.md")
MANIFEST_MAX_BYTES = 16 * 1024 * 1024  # a release's manifest is ~20 KB; a hostile-file bound
#: the heading a draft's CHANGELOG.md opens with: what tells a draft by its content (a file the
#: manifest's digests cover), whatever its manifest says
DRAFT_HEADING = "## Draft preview (not a release)"
#: the YAML front matter of a card (the template dataset_card.md and a release's README.md)
FRONT_MATTER = re.compile(r"\A---\n(.*?)\n---\n", re.S)
_PART = re.compile(r"^(?P<split>[A-Za-z0-9_]+)-\d+-of-\d+\.parquet$")


# --- data files -------------------------------------------------------------------------------

def data_file(config: str, split: str) -> str:
    """Path, inside a release directory, of one config's split: ``data/<config>/<split>-00000-of-00001.parquet``."""
    return f"{DATA_DIR}/{config}/{split}-00000-of-00001.parquet"


def split_of(name: str) -> str:
    """The split a data file's name (``test-00000-of-00001.parquet``) belongs to."""
    return name.rsplit("/", 1)[-1].split("-")[0]


def config_of(rel: str) -> tuple[str, str] | None:
    """``(config, split)`` of a release-relative data file path, ``None`` for any other path."""
    parts = rel.split("/")
    if len(parts) != 3 or parts[0] != DATA_DIR or not parts[2].endswith(".parquet"):
        return None
    m = _PART.match(parts[2])
    return parts[1], (m["split"] if m else split_of(parts[2]))


def known_file(rel: str, configs: tuple[str, ...], version: object = None) -> bool:
    """Whether ``rel`` (release-relative) is a file that ``release build`` writes and the release
    contracts check: the card, the changelog, the Croissant metadata, the feed, a data file of one
    of ``configs``, or (releases from ``CONFORMANCE_FROM`` on) one of :data:`CONFORMANCE_FILES`.
    ``manifest.json`` lists every other file, not itself."""
    from medcalc_maintained.core.versions import rules

    if rel in (CARD, CHANGELOG, CROISSANT, FEED):
        return True
    if rel in CONFORMANCE_FILES:
        return rules(version).conformance
    found = config_of(rel)
    return found is not None and found[0] in configs


def config_files(files: list[str], config: str) -> list[str]:
    """The data files of ``config`` among release-relative paths ``files`` (a manifest's listing), sorted."""
    return sorted(f for f in files if f.startswith(f"{DATA_DIR}/{config}/") and f.endswith(".parquet"))


def data_paths(root: Path) -> set[str]:
    """Release-relative paths of every parquet file under ``root``'s data folder."""
    data = Path(root) / DATA_DIR
    return {p.relative_to(root).as_posix() for p in data.rglob("*.parquet")} if data.is_dir() else set()


def config_names(root: Path) -> tuple[str, ...]:
    """The configs of a release directory (the folders of its data folder), sorted."""
    data = Path(root) / DATA_DIR
    return tuple(sorted(p.name for p in data.iterdir() if p.is_dir())) if data.is_dir() else ()


def read_config(root: Path, config: str) -> pd.DataFrame:
    """Every split of one config of a built release directory in one frame, with ``split`` and
    ``uid`` (from ``Row Number`` when the config has none)."""
    files = sorted((Path(root) / DATA_DIR / config).glob("*.parquet"))
    if not files:
        raise DataError(Path(root) / DATA_DIR / config, f"config {config!r} has no parquet file")
    frames = []
    for f in files:
        df = pd.read_parquet(f)
        if "split" not in df.columns:
            df["split"] = split_of(f.name)
        if "uid" not in df.columns:
            df["uid"] = df["Row Number"].astype("int64")
        frames.append(df)
    return pd.concat(frames, ignore_index=True)


def read_full(files: list[str], read: Callable[[str], bytes]) -> pd.DataFrame | None:
    """The ``full`` config of a release from its data files (``read(path) -> bytes``: a directory,
    or a published target at a tag), with ``split``; ``None`` when it has no such file."""
    frames = []
    for f in config_files(files, "full"):
        df = pd.read_parquet(io.BytesIO(read(f)))
        if "split" not in df.columns:
            df["split"] = split_of(f)
        frames.append(df)
    return pd.concat(frames, ignore_index=True) if frames else None


def release_files(root: Path) -> list[str]:
    """Release-relative paths of every file under ``root``, sorted."""
    return sorted(p.relative_to(root).as_posix() for p in Path(root).rglob("*") if p.is_file())


# --- the card's front matter ------------------------------------------------------------------

def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """``(front matter, body)`` of a card; a :class:`DataError` naming ``path`` when it has none or
    it is not a YAML mapping."""
    m = FRONT_MATTER.match(text)
    if not m:
        raise DataError(path, "the card must start with YAML front matter between '---' lines")
    try:
        front = safe_load(m.group(1)) or {}
    except yaml.YAMLError as exc:
        raise DataError(path, f"malformed YAML front matter: {exc}") from None
    if not isinstance(front, dict):
        raise DataError(path, "the front matter must be a mapping")
    return front, text[m.end():]


def card_front_matter(root: Path) -> dict[str, Any] | None:
    """The front matter of a release directory's README.md, read without trusting it: ``None``
    when the file is missing or unreadable, has none, or it is not a YAML mapping."""
    try:
        m = FRONT_MATTER.match((Path(root) / CARD).read_text(encoding="utf-8"))
        front = safe_load(m.group(1)) if m else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return front if isinstance(front, dict) else None


# --- the manifest -----------------------------------------------------------------------------

def read_manifest(release_dir: Path) -> dict[str, Any]:
    """``manifest.json`` of a built release; a :class:`DataError` when it is missing, over
    :data:`MANIFEST_MAX_BYTES`, not JSON or not an object."""
    path = Path(release_dir) / MANIFEST
    if not path.is_file():
        raise DataError(path, "not found: not a release build (run `medcalc-maintained release build`)")
    try:
        man = loads_json(read_text_bounded(path, MANIFEST_MAX_BYTES, "manifest"), path)
    except DataError as exc:
        raise DataError(path, f"malformed JSON: {exc.problem}") from None
    if not isinstance(man, dict):
        raise DataError(path, "malformed: not a JSON object")
    return man


def manifest_or_empty(release_dir: Path) -> dict[str, Any]:
    """``manifest.json`` read without trusting it (the contract views): ``{}`` when it is missing,
    unreadable, not JSON or not an object."""
    try:
        return read_manifest(release_dir)
    except (DataError, OSError):
        return {}


def manifest_listing(manifest: dict[str, Any]) -> dict[str, str]:
    """The ``files`` of a manifest as ``{path: sha256}`` (a list of ``{path, sha256}`` is read too;
    anything else is no listing)."""
    listed = manifest.get("files", {})
    if isinstance(listed, list):
        listed = {d.get("path"): d.get("sha256") for d in listed if isinstance(d, dict)}
    return {str(k): str(v) for k, v in listed.items()} if isinstance(listed, dict) else {}


def verify_manifest(release_dir: Path) -> list[str]:
    """Problems of a release directory against its manifest: missing, extra or changed files."""
    release_dir = Path(release_dir)
    man = read_manifest(release_dir)
    listed = man.get("files") or {}
    present = [f for f in release_files(release_dir) if f != MANIFEST]
    problems = []
    for f in sorted(set(listed) - set(present)):
        problems.append(f"{f}: listed in manifest.json but missing")
    for f in sorted(set(present) - set(listed)):
        problems.append(f"{f}: not listed in manifest.json")
    for f in sorted(set(present) & set(listed)):
        if sha256_file(release_dir / f) != listed[f]:
            problems.append(f"{f}: sha256 differs from manifest.json")
    return problems


def draft_evidence(release_dir: Path, man: dict[str, Any] | None = None) -> str | None:
    """Why ``release_dir`` is a draft (``release build --draft``), or None: its manifest's ``draft``
    or ``draft_reasons``, or, whatever the manifest says, the draft heading of its CHANGELOG.md (a
    file that manifest.json's digests cover, so deleting the manifest's keys does not hide it)."""
    man = read_manifest(release_dir) if man is None else man
    if man.get("draft") or "draft_reasons" in man:
        return "its manifest says draft"
    log = Path(release_dir) / CHANGELOG
    if log.is_file():
        with log.open(encoding="utf-8", errors="replace") as fh:
            if any(line.rstrip("\r\n") == DRAFT_HEADING for line in fh):
                return f"its CHANGELOG.md holds {DRAFT_HEADING[3:]!r}"
    return None


def check_release_dir(release_dir: Path, use: str) -> dict[str, Any]:
    """The manifest of a built release that ``use`` (``evaluate --against``, ``publish``) may read:
    every file present, listed and of the manifest's sha256, and not a draft; else a
    :class:`DataError` naming the directory and the first problems."""
    release_dir = Path(release_dir)
    man = read_manifest(release_dir)
    problems = verify_manifest(release_dir)
    if problems:
        shown = "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" if len(problems) > 5 else "")
        raise DataError(release_dir, f"does not match its manifest.json ({shown}); {use} reads only an untouched "
                                     "release build: rebuild it with `release build`")
    why = draft_evidence(release_dir, man)
    if why:
        raise DataError(release_dir, f"is a draft of {man.get('version')} (`release build --draft`; {why}); {use} "
                                     "reads only a release: add it to releases.yaml and build it")
    return man
