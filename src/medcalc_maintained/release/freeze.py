"""``release freeze``: record what a published release carried, so that nothing rewrites it.

After ``release publish``, the maintainer freezes the release from what was published (the built
release directory, a checkout of its tag, or a ``release-tables`` directory ``<version>/``): the
ledger records its ``corrections`` config lists as of that version, each by the fingerprint of the
ledger record that made it, the evidence verifier's verdict on every recorded input its
``full`` config published and, from ``EVIDENCE_ROWS_FROM`` on, every verified row's ``Evidence`` cell. The entry goes into ``release.published``
(:mod:`medcalc_maintained.ledger.published`); an entry once written is never changed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained import ledger
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.versions import rules
from medcalc_maintained.ledger.derivation import parse_document
from medcalc_maintained.ledger.published import (
    Published,
    evidence_key,
    fingerprint,
    load_published,
    verdict_key,
    write_published,
)
from medcalc_maintained.project import Project
from medcalc_maintained.release.layout import MANIFEST
from medcalc_maintained.release.plan import load_releases

COMPARED = ("split", "uid", "old_value", "new_value", "decision", "label_status")  # a record's decision


def _config(src: Path, config: str) -> pd.DataFrame:
    """One config of a published release: ``data/<config>/*.parquet`` of a release directory, or
    ``<config>.parquet`` of a ``release-tables`` directory."""
    if (src / MANIFEST).is_file():
        files = sorted((src / "data" / config).glob("*.parquet"))
        if not files:
            raise DataError(src, f"has no data/{config}/*.parquet: not a built release")
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    path = src / f"{config}.parquet"
    if not path.is_file():
        raise DataError(src, f"is neither a built release (manifest.json) nor a release-tables directory ({config}.parquet)")
    return pd.read_parquet(path)


def _records(project: Project, corrections: pd.DataFrame, version: str, src: Path) -> dict[str, str]:
    """Fingerprints of the ledger records the published ``corrections`` config lists for ``version``;
    a record missing from the ledger or deciding otherwise than published is refused."""
    records, problems = ledger.collect([p for p in project.ledger_paths if p.exists()])
    if problems:
        raise ledger.LedgerError(problems)
    by_id = {r.id: r for r in records}
    out = {}
    for row in row_dicts(corrections[corrections["release"].astype(str) == version]):
        rid = str(row["id"])
        rec = by_id.get(rid)
        if rec is None:
            raise DataError(src, f"published record {rid} is not in the ledger", row=rid, field="id")
        wrong = [c for c in COMPARED if str(rec.get(c)) != str(row.get(c))]
        if wrong:
            raise DataError(src, f"the ledger's record {rid} ({rec.path}) differs from the published one in "
                                 f"{', '.join(wrong)}: freeze what was published", row=rid, field=wrong[0])
        out[rid] = fingerprint(rec.data)
    return out


def _verdicts(full: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """The verdict on every recorded input of the published ``full`` config, by :func:`verdict_key`."""
    out: dict[str, dict[str, Any]] = {}
    if "Derivation" not in full.columns:
        return out
    for row in row_dicts(full):
        doc = parse_document(row.get("Derivation"))
        for inp in (doc or {}).get("inputs") or []:
            if isinstance(inp, dict) and isinstance(inp.get("verdict"), dict):
                out[verdict_key(int(row["Calculator ID"]), row.get("Patient Note"), inp)] = inp["verdict"]
    return out


def _evidence(full: pd.DataFrame) -> dict[str, str]:
    """Every verified row's ``Evidence`` cell of the published ``full`` config, by :func:`evidence_key`."""
    if "Evidence" not in full.columns:
        return {}
    return {evidence_key(row["split"], row["uid"]): str(row["Evidence"]) for row in row_dicts(full)
            if isinstance(row.get("Evidence"), str) and row["Evidence"]}


def freeze(project: Project, version: str, src: Path) -> tuple[Published, bool]:
    """Freeze release ``version`` from its published files in ``src`` into ``release.published``;
    returns the entry and whether it was new (an identical entry already there is left as it is;
    a different one is refused: a published release is never rewritten)."""
    src = Path(src)
    rel = load_releases(project.releases_file).get(version)
    if (src / MANIFEST).is_file():
        man = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
        if man.get("version") != version or man.get("draft"):
            raise DataError(src / MANIFEST, f"is {'a draft of ' if man.get('draft') else 'release '}"
                                            f"{man.get('version')}, not the published release {version}")
    full = _config(src, "full")
    entry = Published(version, str(rel.date), _records(project, _config(src, "corrections"), version, src),
                      _verdicts(full) if rules(version).evidence_gate else {},
                      _evidence(full) if rules(version).evidence_rows else {})
    history = load_published(project.published)
    if version in history:
        if history[version].document() != entry.document():
            raise DataError(project.published, f"already holds release {version}, frozen otherwise: a published "
                                               "release is never rewritten", field=f"releases.{version}")
        return history[version], False
    write_published(project.published, {**history, version: entry})
    return entry, True
