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
                    ``target steroid``; null without a quote), the verifier's ``rule`` and ``reason``,
                    and ``declared`` (JSON: the ``timepoint`` or ``unit_reading`` a recorded input declares,
                    where its verdict needed it; ``ledger/evidence_rows.py`` holds the table's shape), and
                    ``used`` (false for an input an ``N/A`` label's derivation does not use: it decides nothing,
                    ``calculators/certify.py``)
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
from typing import Any

import pandas as pd

from medcalc_maintained.calculators.certify import VERDICTS, row_verdict
from medcalc_maintained.core.atomic import replace_files, write_parquet
from medcalc_maintained.core.labels import UNVERIFIED, in_default
from medcalc_maintained.core.readers import read_parquet
from medcalc_maintained.ledger.evidence_rows import ROW_VERDICTS, certify_items, frame, row_items
from medcalc_maintained.ledger.records import load
from medcalc_maintained.project import Project

INPUTS, SUMMARY = "inputs.parquet", "summary.json"


def _shares(verdicts: list[str]) -> dict[str, Any]:
    counts = Counter(verdicts)
    n = len(verdicts)
    return {"rows": n, **{k: {"rows": counts[k], "share": round(counts[k] / n, 4) if n else None} for k in ROW_VERDICTS}}


def summarize(rows: list[dict[str, Any]], docs: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The shares the card states, over the verified rows and over the rows of ``default`` (no
    timing: the file is a pipeline output, the same bytes on every run)."""
    verdicts = [row_verdict(d) for d in docs]  # calculators/certify.py: the one row-verdict rule
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
    n = workers if workers is not None else int(project.param("certify.workers"))
    t0 = time.perf_counter()
    docs = certify_items(row_items(rows, ents, by_id), workers=n, progress="certifying the inputs" if progress else None)
    seconds = time.perf_counter() - t0
    table, summary = frame(rows, docs), summarize(rows, docs)
    out = Path(project.path(project.param("certify.out")))
    replace_files(out, {INPUTS: lambda p: write_parquet(p, table),
                        SUMMARY: lambda p: p.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")})
    return table, summary, seconds


def contradicted_rows(frame: pd.DataFrame) -> dict[tuple[str, int], str]:
    """Rows with a contradicted input, ``(split, uid) -> reason`` naming each input, the note's value
    and its quote: what triage routes (marker ``contradicted``)."""
    out: dict[tuple[str, int], list[str]] = {}
    for r in frame[frame["verdict"] == "contradicts"].to_dict("records"):
        quote = r["quote_text"] if isinstance(r["quote_text"], str) and r["quote_text"] else "(unmentioned: absent by convention)"
        out.setdefault((str(r["split"]), int(r["uid"])), []).append(
            f"{r['name']} = {r['value']} but the note states {r['note_value']} ({quote[:100]!r})")
    return {k: "evidence contradicts an input: " + "; ".join(v) for k, v in out.items()}
