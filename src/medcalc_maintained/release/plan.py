"""``releases.yaml``: the release plan (git-tracked, at the project root), oldest release first::

    repo_id: org/medcalc-maintained
    repository: https://github.com/org/medcalc-maintained   # the source repository, linked by the card
    releases:
      - version: 1.0.0
        date: "2026-11-22"
        kind: major            # the bump from the previous release (the first one is major)
        default_rows: all      # which rows the `default` config holds: verified | all
        ledger_ref: null       # optional git ref of this project whose ledger files are used
        gates: {...}           # optional QC gate overrides (read by medcalc_maintained.contracts.validate)
        upstream: v1.0         # optional upstream version it is built on (default: the project's upstream.base)
        description: Upstream baseline ...
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import (
    KINDS,
    SEMVER,
    ReleaseRules,
    bump,
    from_tag,
    full_tag,
    resolve_tag,
    rules,
    short_tag,
    version_key,
)
from medcalc_maintained.core.yaml_text import safe_load

DEFAULT_ROWS = ("verified", "all")
# `gates`: per-release overrides of the validate QC gates, read by medcalc_maintained.contracts.validate
RELEASE_FIELDS = {"version", "date", "kind", "description", "default_rows", "ledger_ref", "gates", "upstream"}
DEFAULT_REPO_ID = "org/medcalc-maintained"
# the source repository of the releases (the card links it from CARD_VISITOR_FROM on): `repository` of releases.yaml
DEFAULT_REPOSITORY = "https://github.com/org/medcalc-maintained"


@dataclass(frozen=True)
class Release:
    version: str
    date: str
    kind: str
    description: str
    default_rows: str = "verified"
    ledger_ref: str | None = None
    upstream: str | None = None  # the upstream version it is built on; None: the project's upstream.base

    @property
    def key(self) -> tuple[int, int, int]:
        return version_key(self.version)

    @property
    def rules(self) -> ReleaseRules:
        """What this release does (``core/versions.py: rules``)."""
        return rules(self.version)


@dataclass
class Releases:
    path: Path
    repo_id: str
    releases: list[Release]
    repository: str = DEFAULT_REPOSITORY

    @property
    def latest(self) -> Release:
        return self.releases[-1]

    def get(self, version: str | None) -> Release:
        """The release ``version`` (``2.0.0`` or ``v2.0.0``); the latest for ``None``."""
        if version is None:
            return self.latest
        v = from_tag(version) or version
        for r in self.releases:
            if r.version == v:
                return r
        known = ", ".join(r.version for r in self.releases)
        raise DataError(self.path, f"release {version!r} is not listed (known: {known})", field="version")

    def resolve_version(self, text: str) -> str | None:
        """The version that ``text`` names, in every form ``evaluate --against`` and the MCP tool
        ``lookup_instance`` accept: ``2.0.0``, ``v2.0.0``, or the minor-line tag ``v2.0`` / ``2.0``
        (the first release of that line; ``v1.0`` is 1.0.0). ``None`` when it names no release."""
        return resolve_tag(str(text), [r.version for r in self.releases])

    def tags_text(self) -> str:
        """The releases with their tags, for error messages: ``1.0.0 (v1.0.0, v1.0), ...``."""
        return ", ".join(f"{r.version} ({full_tag(r.version)}, {short_tag(r.version)})" for r in self.releases)

    def upto(self, version: str) -> list[Release]:
        key = version_key(version)
        return [r for r in self.releases if r.key <= key]

    def previous(self, version: str) -> Release | None:
        earlier = [r for r in self.releases if r.key < version_key(version)]
        return earlier[-1] if earlier else None

    def with_draft(self, draft: Release) -> "Releases":
        return Releases(self.path, self.repo_id, self.releases + [draft], self.repository)


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


def read_document(path: Path) -> dict[str, Any]:
    """The parsed ``releases.yaml`` (a mapping with a non-empty ``releases`` list), unchecked
    otherwise: what :func:`load_releases` checks, and where ``contracts.validate`` can read ``gates``."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "releases file not found (it lists the releases; see medcalc_maintained/release/plan.py)")
    try:
        doc = safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(path, f"malformed YAML: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("releases"), list) or not doc["releases"]:
        raise DataError(path, "expected a mapping with a non-empty 'releases' list", field="releases")
    return doc


def _release(path: Path, raw: Any, i: int) -> Release:
    """One entry of the list, checked on its own."""
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
    up = raw.get("upstream")
    if up is not None and (not isinstance(up, str) or not up.strip() or "/" in up):
        raise DataError(path, f"{up!r} is not an upstream version name (a directory under upstream.dir)", row=where,
                        field="upstream")
    return Release(version, date, kind, str(raw["description"]).strip(), default_rows, ref, up)


def _check_order(path: Path, prev: Release | None, rel: Release) -> None:
    where = f"release {rel.version}"
    if prev is None:
        if rel.kind != "major":
            raise DataError(path, "the first release is a major release", row=where, field="kind")
        return
    if rel.key <= prev.key:
        raise DataError(path, f"versions must increase: {rel.version} follows {prev.version}", row=where, field="version")
    if bump(prev.version, rel.kind) != rel.version:
        raise DataError(path, f"a {rel.kind} release after {prev.version} is {bump(prev.version, rel.kind)}, "
                              f"not {rel.version}", row=where, field="kind")
    if rel.date < prev.date:
        raise DataError(path, f"date {rel.date} is before the previous release's {prev.date}", row=where, field="date")


def load_releases(path: Path) -> Releases:
    """Read and check ``releases.yaml``; a problem raises :class:`DataError` naming the release and field."""
    path = Path(path)
    doc = read_document(path)
    out: list[Release] = []
    for i, raw in enumerate(doc["releases"]):
        rel = _release(path, raw, i)
        _check_order(path, out[-1] if out else None, rel)
        out.append(rel)
    repository = str(doc.get("repository") or DEFAULT_REPOSITORY)
    if not repository.startswith("https://"):
        raise DataError(path, f"repository {repository!r} must be an https:// address", field="repository")
    return Releases(path, str(doc.get("repo_id") or DEFAULT_REPO_ID), out, repository)


def release_gates(path: Path, version: str) -> dict[str, Any] | None:
    """The ``gates`` of release ``version`` in ``releases.yaml`` (``None`` when the file, the
    release or its gates are absent): the QC gate overrides that ``contracts.validate`` applies."""
    if not Path(path).is_file():
        return None
    for entry in read_document(path)["releases"]:
        if isinstance(entry, dict) and str(entry.get("version")) == str(version):
            return entry.get("gates")
    return None
