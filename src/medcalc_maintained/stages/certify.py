"""Stage ``certify``: every input of every verified label read against its note.

A verified label is its declared definition applied to the row's inputs: upstream's ``Relevant
Entities`` (GPT-4's extraction) patched by the inputs its ledger record recorded. For every verified
row of the maintained labels (stage ``apply``: every record applied, released or not), each declared
input of its calculator gets one of three verdicts (:mod:`medcalc_maintained.calculators.certify`):
``supports`` (a quote the evidence verifier accepts, or the definition's convention for an
unmentioned criterion), ``contradicts`` (the note states another value, with that quote) or
``not_addressed``; the row's ``Question`` is read only for the inputs it states
(``calculators/certify.py: QUESTION_INPUTS``). Writes under ``certify.out``:

``inputs.parquet``  one row per input: ``split``, ``uid``, ``Calculator ID``, ``name``, ``value``
                    and ``note_value`` (JSON text), ``unit``, ``source`` (upstream | recorded |
                    default), ``verdict``, ``convention``, the quote (``quote_start``,
                    ``quote_end``, ``quote_text``) and what it indexes (``quote_in``: ``note``, or
                    ``question`` for an input the row's question states, the steroid conversion's
                    ``target steroid``; null without a quote), the verifier's ``rule`` and ``reason``
``summary.json``    the verified rows and the rows of ``default`` by row verdict (``certified``:
                    every input supported; ``contradicted``: an input contradicted; ``not_addressed``),
                    inputs by source and verdict, and the rules of the inputs not addressed

Stage ``triage`` routes every row with a contradicted input for review (marker ``contradicted``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from medcalc_maintained.calculators.certify import VERDICTS, certify_row
from medcalc_maintained.core.io import read_parquet, replace_files, write_parquet
from medcalc_maintained.core.labels import UNVERIFIED, in_default
from medcalc_maintained.core.parallel import map_chunks
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.derivation import label_record
from medcalc_maintained.ledger.records import load
from medcalc_maintained.project import Project

INPUTS, SUMMARY = "inputs.parquet", "summary.json"
ROW_VERDICTS = ("certified", "contradicted", "not_addressed")
COLUMNS = ["split", "uid", "Calculator ID", "name", "value", "unit", "source", "verdict", "convention", "quote_start",
           "quote_end", "quote_text", "quote_in", "note_value", "rule", "reason"]


def _certify(chunk: Sequence[tuple[int, Any, str, list, str]]) -> list[list[dict[str, Any]]]:
    return [[i.document() for i in certify_row(cid, ents, note, recorded, question)]
            for cid, ents, note, recorded, question in chunk]


def row_verdict(docs: list[dict[str, Any]]) -> str:
    """``certified`` (every input supported), ``contradicted`` (an input contradicted) or ``not_addressed``."""
    verdicts = {d["verdict"] for d in docs}
    if verdicts <= {"supports"}:
        return "certified"
    return "contradicted" if "contradicts" in verdicts else "not_addressed"


def _text(v: Any) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True)


def _frame(rows: list[dict[str, Any]], docs: list[list[dict[str, Any]]]) -> pd.DataFrame:
    out = []
    for r, ds in zip(rows, docs):
        for d in ds:
            q = d.get("quote") or {}
            out.append({"split": r["split"], "uid": int(r["uid"]), "Calculator ID": int(r["Calculator ID"]),
                        "name": d["name"], "value": _text(d["value"]), "unit": d.get("unit"), "source": d["source"],
                        "verdict": d["verdict"], "convention": bool(d.get("convention")), "quote_start": q.get("start"),
                        "quote_end": q.get("end"), "quote_text": q.get("text"), "quote_in": d.get("quote_in"), "note_value": _text(d.get("note_value")),
                        "rule": d.get("rule") or "", "reason": d.get("reason") or ""})
    frame = pd.DataFrame(out, columns=COLUMNS)
    for c in ("quote_start", "quote_end"):
        frame[c] = frame[c].astype("Int64")
    return frame


def _shares(verdicts: list[str]) -> dict[str, Any]:
    counts = Counter(verdicts)
    n = len(verdicts)
    return {"rows": n, **{k: {"rows": counts[k], "share": round(counts[k] / n, 4) if n else None} for k in ROW_VERDICTS}}


def summarize(rows: list[dict[str, Any]], docs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The shares the card states, over the verified rows and over the rows of ``default`` (no
    timing: the file is a pipeline output, the same bytes on every run)."""
    verdicts = [row_verdict(d) for d in docs]
    per_input = Counter(f"{d['source']} {d['verdict']}" + (" (convention)" if d.get("convention") else "")
                        for ds in docs for d in ds)
    rules = Counter(d["rule"] for ds in docs for d in ds if d["verdict"] == "not_addressed")
    return {"verified": _shares(verdicts),
            "default": _shares([v for v, r in zip(verdicts, rows) if in_default(r["Label Status"])]),
            "inputs": {"total": sum(len(d) for d in docs), **{v: sum(1 for ds in docs for d in ds if d["verdict"] == v)
                                                              for v in VERDICTS}},
            "inputs_by_source": dict(sorted(per_input.items())),
            "not_addressed_rules": dict(rules.most_common())}


def run(project: Project, *, workers: int | None = None, progress: bool = False) -> tuple[pd.DataFrame, dict[str, Any], float]:
    """Certify every input of every verified row; write ``inputs.parquet`` and ``summary.json``;
    return them and the seconds the certification took."""
    instances = read_parquet(project.instances, "instances", "ingest")
    maintained = read_parquet(project.maintained, "maintained instances", "apply")
    by_id = {r.id: r.data for r in load(project.ledger_paths) if r.valid}
    ents = {(str(s), int(u)): e for s, u, e in zip(instances["split"], instances["uid"], instances["entities"])}
    rows = [r for r in maintained.to_dict("records") if str(r["Label Status"]) != UNVERIFIED]
    items = []
    for r in rows:
        rec = label_record(by_id, [i for i in str(r.get("Correction IDs") or "").split(";") if i])
        items.append((int(r["Calculator ID"]), entities_or_empty(ents.get((str(r["split"]), int(r["uid"])))),
                      str(r["Patient Note"]), list((rec or {}).get("inputs") or []), str(r.get("Question") or "")))
    n = workers if workers is not None else int(project.param("certify.workers"))
    t0 = time.perf_counter()
    docs = map_chunks(_certify, items, workers=n, progress="certifying the inputs" if progress else None, chunk=16)
    seconds = time.perf_counter() - t0
    frame, summary = _frame(rows, docs), summarize(rows, docs)
    out = Path(project.path(project.param("certify.out")))
    replace_files(out, {INPUTS: lambda p: write_parquet(p, frame),
                        SUMMARY: lambda p: p.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")})
    return frame, summary, seconds


def contradicted_rows(frame: pd.DataFrame) -> dict[tuple[str, int], str]:
    """Rows with a contradicted input, ``(split, uid) -> reason`` naming each input, the note's value
    and its quote: what triage routes (marker ``contradicted``)."""
    out: dict[tuple[str, int], list[str]] = {}
    for r in frame[frame["verdict"] == "contradicts"].to_dict("records"):
        quote = r["quote_text"] if isinstance(r["quote_text"], str) and r["quote_text"] else "(unmentioned: absent by convention)"
        out.setdefault((str(r["split"]), int(r["uid"])), []).append(
            f"{r['name']} = {r['value']} but the note states {r['note_value']} ({quote[:100]!r})")
    return {k: "evidence contradicts an input: " + "; ".join(v) for k, v in out.items()}
