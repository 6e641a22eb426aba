"""Carrying the ledger to a new upstream release.

Every record is classed against the row map of :mod:`medcalc_maintained.upstream.diff` (old
upstream -> new upstream), first rule that applies:

``orphaned``    its row was removed upstream (no row of the new file is the same row)
``conflict``    its row is ambiguous (several new rows tie), the new row does not pass ingest,
                or upstream changed the note, question or output type the decision was about
``carried``     the row matched and its label is the same value (:func:`core.answers.same_value`):
                only ``uid`` is renumbered
``upstreamed``  an accepted record whose new value upstream now has (the same label under
                :func:`core.answers.labels_agree`): kept as history, not applied again
``conflict``    otherwise: upstream changed the label to a third value (both values reported)

The rebased ledger (``OUT/ledger/NN-<file>``: the carried records, one file per source file in the
ledger's order, batch kept)
is checked with :func:`ledger.apply.build` on the new upstream before anything is written. The
other records are written unchanged to ``OUT/held/{upstreamed,conflict,orphaned}.yaml`` (never
applied) and every record is listed in ``OUT/rebase_report.csv`` with both upstream labels. The
existing ledger is never changed.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

import pandas as pd
import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.ledger_files import ledger_files
from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.core.yaml_text import safe_load
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.ledger.records import LedgerError, Record, dump, load
from medcalc_maintained.upstream.diff import Diff, label_changed

CLASSES = ("carried", "upstreamed", "conflict", "orphaned")
REPORT_COLUMNS = ["id", "file", "class", "reason", "split", "old_uid", "new_uid", "decision", "old_value", "new_value",
                  "old_upstream_label", "new_upstream_label", "changed_fields", "basis", "similarity", "candidates"]
DECISION_FIELDS = {"note": "note", "question": "question", "output_type": "output type"}


@dataclass
class Outcome:
    record: Record
    cls: str
    reason: str
    new_uid: int | None
    line: dict[str, Any]


def _index(df: pd.DataFrame) -> dict[int, dict[str, Any]]:
    return {int(r["Row Number"]): r for r in row_dicts(df)}


def classify(rec: Record, m: dict[str, Any] | None, old_row: dict | None, new_row: dict | None,
             ingested: set[int]) -> tuple[str, str]:
    """The class of one record and why (see the module docstring)."""
    if m is None or m["status"] == "removed":
        return "orphaned", "row removed upstream" if m is not None else f"uid {rec['uid']} is not a row of the old upstream"
    if m["status"] == "ambiguous":
        return "conflict", f"row is ambiguous in the new upstream (candidates {m['candidates']})"
    changed = [f for f in str(m["changed_fields"] or "").split(";") if f]
    about = [DECISION_FIELDS[f] for f in changed if f in DECISION_FIELDS]
    if about:
        return "conflict", f"upstream changed the {', '.join(about)} of the row"
    if int(m["new_uid"]) not in ingested:
        return "conflict", f"new row {m['new_uid']} does not pass ingest (quarantined)"
    if old_row is None or new_row is None:  # a matched row is in both files
        raise ValueError(f"uid {rec['uid']}: the matched row is missing from the old or new upstream")
    otype_old, otype_new = old_row["Output Type"], new_row["Output Type"]
    old_label, new_label = old_row["Ground Truth Answer"], new_row["Ground Truth Answer"]
    if not label_changed(old_label, otype_old, new_label, otype_new):
        return "carried", "row matched, note, question and label unchanged"
    if rec["decision"] == "accepted" and not label_changed(rec["new_value"], otype_new, new_label, otype_new, tolerance=True):
        return "upstreamed", f"upstream changed the label {old_label!r} -> {new_label!r}, the record's new value"
    return "conflict", f"upstream changed the label {old_label!r} -> {new_label!r}; the record says {rec['new_value']!r}"


def plan(records: list[Record], diff: Diff, old: pd.DataFrame, new: pd.DataFrame, new_instances: pd.DataFrame,
         split: str = "test") -> list[Outcome]:
    """Class every record of ``split`` (records of other splits are reported as conflicts: the
    diff does not cover them)."""
    by_old = {int(r["old_uid"]): r for r in row_dicts(diff.row_map) if pd.notna(r["old_uid"])}
    orow, nrow = _index(old), _index(new)
    ingested = {int(u) for u, s in zip(new_instances["uid"], new_instances["split"]) if s == split}
    out = []
    for rec in records:
        uid = int(rec["uid"])
        m = by_old.get(uid) if rec["split"] == split else None
        if rec["split"] != split:
            cls, reason = "conflict", f"split {rec['split']!r} is not covered by this diff (split {split!r})"
        else:
            new_uid = m["new_uid"] if m is not None and pd.notna(m["new_uid"]) else None
            cls, reason = classify(rec, m, orow.get(uid), nrow.get(int(new_uid)) if new_uid is not None else None, ingested)
        new_uid = int(m["new_uid"]) if m is not None and pd.notna(m["new_uid"]) else None
        o, n = orow.get(uid), nrow.get(new_uid) if new_uid is not None else None
        line = {"id": rec.id, "file": rec.path, "class": cls, "reason": reason, "split": rec["split"], "old_uid": uid,
                "new_uid": new_uid, "decision": rec["decision"], "old_value": rec["old_value"], "new_value": rec["new_value"],
                "old_upstream_label": o["Ground Truth Answer"] if o else None,
                "new_upstream_label": n["Ground Truth Answer"] if n else None,
                "changed_fields": m["changed_fields"] if m is not None else "", "basis": m["basis"] if m is not None else "",
                "similarity": m["similarity"] if m is not None else None, "candidates": m["candidates"] if m is not None else ""}
        out.append(Outcome(rec, cls, reason, new_uid, line))
    return out


def _batch(path: str) -> dict[str, Any] | None:
    try:
        doc = safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return doc.get("batch") if isinstance(doc, dict) else None


def _texts(outcomes: list[Outcome], onto: str) -> dict[str, str]:
    """Relative path -> YAML text of every ledger file the rebase writes."""
    texts: dict[str, str] = {}
    carried: dict[str, list[dict]] = {}
    for o in outcomes:
        if o.cls == "carried":
            carried.setdefault(o.record.path, []).append({**o.record.data, "uid": o.new_uid})
    for n, (src, recs) in enumerate(carried.items()):
        name = f"{n:02d}-{Path(src).name}"  # the prefix keeps the ledger's file order (a directory is read sorted)
        texts[f"ledger/{name}"] = dump(recs, Path(name), batch=_batch(src),
                                       header=f"Rebased onto {onto} from {src}: uid renumbered, nothing else changed.")
    for cls in ("upstreamed", "conflict", "orphaned"):
        recs = [o.record.data for o in outcomes if o.cls == cls]
        if recs:
            texts[f"held/{cls}.yaml"] = dump(recs, Path(f"{cls}.yaml"), batch={"name": f"rebase-{cls}", "description": (
                f"Records classed {cls} when rebasing onto {onto}; kept unchanged as history, not applied. "
                "See rebase_report.csv for the new uid and both upstream labels.")})
    return texts


@dataclass
class Rebase:
    outcomes: list[Outcome]
    report: pd.DataFrame
    summary: dict[str, Any]
    written: list[Path]


def rebase(ledger: list[Path], diff: Diff, old: pd.DataFrame, new: pd.DataFrame, new_instances: pd.DataFrame,
           out: Path, *, onto: str, split: str = "test", published: Collection[str] = ()) -> Rebase:
    """Class every record of ``ledger``, check the rebased ledger on ``new_instances`` and write
    ``out``; raises :class:`~medcalc_maintained.ledger.LedgerError` (and writes nothing) when the
    ledger cannot be read or the rebased ledger does not apply. A record of a ``published`` release
    carries the decision its release published: its inputs are held to that, not read again by
    today's verifier."""
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise DataError(out, "output directory is not empty (a rebase never overwrites)")
    sources = {Path(p).resolve() for p in ledger_files(ledger)}
    if out.resolve() in sources or any(out.resolve() in s.parents for s in sources):
        raise DataError(out, "output directory is inside the ledger being rebased")
    records = load(ledger)
    outcomes = plan(records, diff, old, new, new_instances, split=split)
    report = pd.DataFrame([o.line for o in outcomes], columns=REPORT_COLUMNS).astype({"old_uid": "Int64", "new_uid": "Int64"})
    counts = Counter(o.cls for o in outcomes)
    summary = {"onto": onto, "records": len(outcomes), **{c: counts.get(c, 0) for c in CLASSES}}
    texts = _texts(outcomes, onto)
    with tempfile.TemporaryDirectory(prefix="medcalc-rebase-") as tmp:
        stage = Path(tmp) / "out"
        for rel, text in texts.items():
            (stage / rel).parent.mkdir(parents=True, exist_ok=True)
            (stage / rel).write_text(text, encoding="utf-8")
        (stage / "ledger").mkdir(parents=True, exist_ok=True)
        try:
            # a published release's record keeps the decision it published (ledger/derivation.py: input_verdict,
            # carried): on the new notes its verdicts name none of its inputs
            build(new_instances, [stage / "ledger"], frozen={v: {} for v in published})
        except LedgerError as exc:  # name the files as they would have been written
            for prob in exc.problems:
                prob.path = prob.path.replace(str(stage), str(out))
            raise
        summary["applies"] = True
        report.to_csv(stage / "rebase_report.csv", index=False)
        (stage / "rebase_summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.exists():
            out.rmdir()
        shutil.move(str(stage), str(out))
    written = sorted(p for p in out.rglob("*") if p.is_file())
    return Rebase(outcomes, report, summary, written)
