"""The ``review export`` and ``review import`` commands' work, with every path from the project."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.ledger.published import frozen_verdicts
from medcalc_maintained.ledger.write import ledger_target
from medcalc_maintained.planning.triage import Reviewer, TriageConfig, read_queue
from medcalc_maintained.project import Project
from medcalc_maintained.review.adjudicate import Adjudication, import_packet
from medcalc_maintained.review.archive import is_packet
from medcalc_maintained.review.packet import export_packet, select_rows
from medcalc_maintained.review.reader import Packet


@dataclass
class Export:
    path: Path
    rows: pd.DataFrame
    reviewer: Reviewer


@dataclass
class Import:
    records: list[dict[str, Any]]
    packet: Packet
    target: Path


def export(project: Project, reviewer_id: str, out: Path, *, queue: Path | None = None,
           max_rows: int | None = None, force: bool = False) -> Export:
    """The packet of the rows the triage queue routed to ``reviewer_id``, written to ``out`` (an
    existing file only with ``force``), and its export record in ``project.review_exports``."""
    out = Path(out)
    if out.suffix.lower() != ".xlsx":
        raise DataError(out, "the packet must be an .xlsx file")
    if out.exists() or out.is_symlink():
        if not force:
            raise DataError(out, "already exists (it may hold a reviewer's answers); choose another --out, or pass "
                                 "--force to replace it")
        if not is_packet(out):
            raise DataError(out, "is not a review packet (an .xlsx workbook with sheets Review and Packet); --force "
                                 "replaces only a packet `review export` wrote. Choose another --out")
    who = TriageConfig.from_project(project).reviewer(reviewer_id)
    q = read_queue(queue or project.triage_queue)
    rows = select_rows(q, who.id, max_rows)
    if rows.empty:
        raise DataError(queue or "queue.csv", f"no rows inside the budget are routed to reviewer {who.id!r}")
    inst = read_parquet(project.instances, "instances", "ingest")
    evidence = note_evidence(_optional(project.findings, "check findings", "recompute"))
    done = export_packet(inst, zip(rows["split"], rows["uid"]), who, out, evidence, exports=project.review_exports)
    return Export(done, rows, who)


def note_evidence(findings: pd.DataFrame | None) -> dict[tuple[str, int], list[str]]:
    """Per row, the distinct note sentences quoted by `error` findings of the offline checks: text of
    the note only, never a finding's reason (a reason may quote an extracted value)."""
    out: dict[tuple[str, int], list[str]] = {}
    if findings is None or not len(findings):
        return out
    quoted = findings[(findings["severity"] == "error") & findings["evidence_text"].fillna("").astype(str).str.strip().ne("")]
    for s, u, text in zip(quoted["split"], quoted["uid"], quoted["evidence_text"]):
        sentences = out.setdefault((str(s), int(u)), [])
        if str(text).strip() not in sentences:
            sentences.append(str(text).strip())
    return out


SLUG_CHARS = 80  # of a packet's name in the ledger file's name (a file name may hold 255 bytes)


def _slug(text: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:SLUG_CHARS].strip("-.") or "packet"
    return s if s.lower().startswith("review") else f"review-{s}"


def _optional(path: Path, what: str, stage: str) -> pd.DataFrame | None:
    return read_parquet(path, what, stage) if path.is_file() else None


def _import_target(project: Project, packet: Path, out: Path | None) -> Path:
    """``--out`` (checked: a ``.yaml``/``.yml`` directly in the ledger directory), or
    ``review-<packet name>.yaml`` there (``-2``, ``-3``... when taken, chosen under the ledger lock)."""
    if out is None:
        return project.ledger_dir / f"{_slug(Path(packet).stem)}.yaml"
    out = Path(out) if Path(out).is_absolute() else project.root / out
    return ledger_target(out, project.ledger_dir, generated=project.generated_ledgers)


def import_(project: Project, packet: Path, *, out: Path | None = None, decided_at: str | None = None,
            partial: bool = False) -> Import:
    """A filled packet's records, adjudicated and written to ``out`` (default: the hand-written
    ledger directory, ``review-<packet name>.yaml``); ``decided_at`` defaults to today."""
    day = decided_at or dt.date.today().isoformat()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", day):
        raise DataError("--decided-at", f"{day!r} is not a date YYYY-MM-DD")
    section = project.section("triage")
    cfg = TriageConfig.from_section(section, str(project.params_file))
    adj = Adjudication.from_section(section, str(project.params_file))
    target = _import_target(project, packet, out)
    inst = read_parquet(project.instances, "instances", "ingest")
    relabel = _optional(project.relabel_labels, "relabel labels", "relabel")
    recompute = _optional(project.recompute, "recompute audit", "recompute")
    records, pk = import_packet(packet, instances=inst, ledger_paths=project.ledger_paths, relabel=relabel,
                                recompute=recompute, reviewers=cfg.reviewers, adjudication=adj, out=target,
                                decided_at=day, partial=partial, next_free=out is None,
                                exports=project.review_exports, frozen=frozen_verdicts(project.published))
    return Import(records, pk, pk.written or target)
