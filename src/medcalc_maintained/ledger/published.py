"""The published history: what each published release carried, frozen when it was published.

A release, once published, is never rewritten (a Hugging Face tag, like a PyPI file, is never
replaced). Its record is ``data/released/published.json`` (param ``release.published``), written by
``medcalc-maintained release freeze VERSION --from DIR`` from the release as published::

    {"format": 1,
     "releases": {"2.2.0": {"date": "2026-11-27",
                            "records": {"<record id>": "<sha256 of the record as published>", ...},
                            "verdicts": {"<input key>": {"supports": ..., "rule": ..., "reason": ...}},
                            "evidence": {"test:211": "<the row's Evidence cell as published>", ...}}}}

``records`` are the ledger records whose ``release`` is that version, each by the fingerprint of
its ledger data (:func:`fingerprint`); ``verdicts`` the evidence verifier's verdict on every recorded
input as the release published it (:func:`verdict_key`: calculator, note and input), so that a later
verifier never changes what an earlier release's ``full`` says (releases from ``EVIDENCE_FROM`` on);
``evidence`` the ``Evidence`` cell of every verified row as the release published it (:func:`evidence_key`;
releases from ``EVIDENCE_ROWS_FROM`` on): the verdict and quote of every input, which a later verifier or
search would read otherwise.

:func:`published_problems` is the rule ``apply``, the release tables and the ledger contract share:
a record may claim a published release only if that release published it, unchanged, and its
``decided_at`` is not after that release's date; no record a release published may disappear.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from medcalc_maintained.core.atomic import write_text_atomic
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.json_text import loads_json
from medcalc_maintained.core.readers import read_text_bounded
from medcalc_maintained.core.versions import SEMVER
from medcalc_maintained.ledger.records import LedgerProblem

FORMAT = 1
MAX_BYTES = 64 * 1024 * 1024  # a release's record: about 200 bytes per record and per recorded input


@dataclass(frozen=True)
class Published:
    """One published release: its date, its records' fingerprints, its inputs' verdicts."""

    version: str
    date: str
    records: Mapping[str, str]
    verdicts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    evidence: Mapping[str, str] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"date": self.date, "records": dict(sorted(self.records.items())),
                               "verdicts": dict(sorted(self.verdicts.items()))}
        if self.evidence:  # only releases that publish every row's evidence: earlier entries keep their bytes
            doc["evidence"] = dict(sorted(self.evidence.items()))
        return doc


def evidence_key(split: Any, uid: Any) -> str:
    """The key of one row's published ``Evidence`` cell: ``split:uid``."""
    return f"{split}:{int(uid)}"


def fingerprint(data: Mapping[str, Any]) -> str:
    """sha256 of a ledger record's data (keys sorted, dates as their ISO text)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def verdict_key(calculator_id: int, note: str | None, inp: Mapping[str, Any]) -> str:
    """The key of one recorded input's verdict: its calculator, its note and the input itself
    (every field but the verdict and the source the release adds)."""
    body = {k: v for k, v in inp.items() if k not in ("verdict", "source", "reconstructed")}
    text = json.dumps([int(calculator_id), hashlib.sha256((note or "").encode("utf-8")).hexdigest(), body],
                      sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def load_published(path: os.PathLike | str) -> dict[str, Published]:
    """The published releases of ``path`` by version; none when the file does not exist (a project
    that has published nothing). A file that exists is read strictly: its problems name it."""
    path = Path(path)
    if not path.exists():
        return {}
    doc = loads_json(read_text_bounded(path, MAX_BYTES, "the published history"), path)
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("releases"), dict):
        raise DataError(path, f"is not a published history of format {FORMAT} (expected {{'format': {FORMAT}, "
                              "'releases': {VERSION: {date, records, verdicts}}})")
    out = {}
    for version, entry in doc["releases"].items():
        if not SEMVER.match(str(version)) or not isinstance(entry, dict):
            raise DataError(path, f"release {version!r} is not a version with its entry", field=f"releases.{version}")
        records, verdicts, evidence = entry.get("records"), entry.get("verdicts", {}), entry.get("evidence", {})
        if not isinstance(records, dict) or not all(isinstance(v, str) for v in records.values()) \
                or not isinstance(verdicts, dict) or not isinstance(entry.get("date"), str) \
                or not isinstance(evidence, dict) or not all(isinstance(v, str) for v in evidence.values()):
            raise DataError(path, "needs date (text), records (id -> sha256), verdicts (key -> verdict) and, "
                                  "optionally, evidence (split:uid -> the Evidence cell)", field=f"releases.{version}")
        out[str(version)] = Published(str(version), entry["date"], records, verdicts, evidence)
    return out


def frozen_verdicts(path: os.PathLike | str) -> dict[str, Mapping[str, Mapping[str, Any]]]:
    """Per published release of ``path``, the input verdicts it published: what holds its records'
    inputs (``ledger/apply.py: check_and_apply``), whatever today's verifier says."""
    return {v: p.verdicts for v, p in load_published(path).items()}


def frozen_evidence(path: os.PathLike | str) -> dict[str, Mapping[str, str]]:
    """Per published release of ``path``, the ``Evidence`` cell of every verified row as it published it
    (empty for releases before ``EVIDENCE_ROWS_FROM``)."""
    return {v: p.evidence for v, p in load_published(path).items()}


def write_published(path: os.PathLike | str, history: Mapping[str, Published]) -> Path:
    """Write ``history`` to ``path`` (atomically; versions and keys sorted, so the bytes are stable)."""
    from medcalc_maintained.core.versions import version_key

    doc = {"format": FORMAT, "releases": {v: history[v].document() for v in sorted(history, key=version_key)}}
    return write_text_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=False) + "\n")


def published_problems(records: Iterable[Any], published: Mapping[str, Published], *,
                       complete: bool = True) -> list[LedgerProblem]:
    """Every record (a :class:`~medcalc_maintained.ledger.records.Record`) that rewrites a
    published release: it claims one that did not publish it, or differs from the record it
    published, or was decided after its date; and, when ``records`` are the whole ledger
    (``complete``), every record a published release carried that the ledger no longer has."""
    problems: list[LedgerProblem] = []
    seen: set[str] = set()
    for rec in records:
        release, rid = str(rec.get("release") or ""), str(rec.get("id"))
        decided = str(rec.get("decided_at") or "")
        pub = published.get(release)
        if pub is None:
            continue
        seen.add(rid)
        if rid not in pub.records:
            problems.append(LedgerProblem(rec.path, f"claims release {release}, which is published without it: a "
                                                    "published release is never rewritten; record the change in an "
                                                    "unreleased or a new release", rec.id, "release"))
        elif fingerprint(rec.data) != pub.records[rid]:
            problems.append(LedgerProblem(rec.path, f"differs from the record release {release} published (edited "
                                                    "after publication); restore it and record the change as a new "
                                                    "record of an unreleased or a new release", rec.id, "release"))
        if decided > pub.date:
            problems.append(LedgerProblem(rec.path, f"decided_at {decided} is after release {release}'s date "
                                                    f"{pub.date}", rec.id, "decided_at"))
    for version, pub in published.items() if complete else ():
        for rid in sorted(set(pub.records) - seen):
            problems.append(LedgerProblem("ledger", f"record {rid}, published in release {version}, is missing "
                                                    "from the ledger: a published record is never removed (a later "
                                                    "record may supersede it)", rid, "id"))
    return problems


def release_row_problems(rows: Iterable[Mapping[str, Any]], published: Mapping[str, Published]) -> dict[str, str]:
    """:func:`published_problems` for the rows of a release's ``corrections`` config (id, release,
    decided_at), which carry no fingerprint: record id -> what is wrong."""
    out: dict[str, str] = {}
    for r in rows:
        release, rid, decided = str(r.get("release") or ""), str(r.get("id")), str(r.get("decided_at") or "")
        pub = published.get(release)
        if pub is None:
            continue
        if rid not in pub.records:
            out[rid] = f"claims release {release}, which is published without it"
        elif decided > pub.date:
            out[rid] = f"decided_at {decided} is after release {release}'s date {pub.date}"
    return out


__all__ = ["FORMAT", "Published", "evidence_key", "fingerprint", "frozen_evidence", "load_published", "published_problems",
           "release_row_problems", "verdict_key", "write_published"]
