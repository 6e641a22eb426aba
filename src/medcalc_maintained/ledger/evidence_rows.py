"""The certified inputs of verified rows as one table, and back as per-row documents.

Stage ``certify`` writes one row per input of every verified row (``inputs.parquet``: the columns of
:data:`COLUMNS`); a release from ``core/versions.py: EVIDENCE_ROWS_FROM`` on ships each verified row's
inputs as the JSON document of its ``Evidence`` column (:func:`row_document`), built from that table
where the release's row has the inputs stage ``certify`` read, and certified anew otherwise
(:func:`certify_items`). One shape for both: an input's document is
:meth:`calculators.certify.InputEvidence.document`.

Certifying is a pure function of what a row's item holds (and of the package's lexicon, read once per
process), so :func:`certify_items` reads an item it certified before in this process from its memo:
the releases of ``release-tables`` share most of their rows' items, and each is certified once.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from medcalc_maintained.calculators.certify import certify_row, row_verdict
from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.core.parallel import map_chunks
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.derivation import label_record

ROW_VERDICTS = ("certified", "contradicted", "not_addressed")
COLUMNS = ["split", "uid", "Calculator ID", "name", "value", "unit", "source", "verdict", "convention", "quote_start",
           "quote_end", "quote_text", "quote_in", "note_value", "rule", "reason", "declared", "used"]
DECLARED = ("timepoint", "unit_reading")  # what a recorded input declares of its reading (calculators/evidence.py)
Key = tuple[str, int]
Item = tuple[int, Any, str, list, str, bool]  # (calculator id, upstream entities, note, recorded inputs, question, label
#                                               is N/A): what certify_row reads


def row_items(rows: Iterable[Mapping[str, Any]], entities: Mapping[Key, Any], by_id: Mapping[str, Any]) -> list[Item]:
    """What :func:`calculators.certify.certify_row` reads for each row: its calculator, upstream
    entities, note, the inputs its label's ledger record recorded, its question and whether its label is
    ``N/A``."""
    out = []
    for r in rows:
        rec = label_record(by_id, [i for i in str(r.get("Correction IDs") or "").split(";") if i])
        out.append((int(r["Calculator ID"]), entities_or_empty(entities.get((str(r["split"]), int(r["uid"])))),
                    str(r["Patient Note"]), list((rec or {}).get("inputs") or []), str(r.get("Question") or ""),
                    parse_answer(r.get("Ground Truth Answer"), str(r.get("Output Type") or "decimal")).kind == "abstain"))
    return out


def _certify(chunk: Sequence[Item]) -> list[list[dict[str, Any]]]:
    return [[i.document() for i in certify_row(cid, ents, note, recorded, question, abstains=abstains)]
            for cid, ents, note, recorded, question, abstains in chunk]


MEMO_ITEMS = 20_000  # items remembered per process (a release has about a thousand verified rows)
_memo: dict[bytes, bytes] = {}  # an item's digest -> its documents, pickled (each caller gets its own copy)


def _digest(item: Item) -> bytes:
    """The item's identity: equal items give equal bytes (pickle writes every value in full)."""
    return hashlib.sha256(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)).digest()


def certify_items(items: Sequence[Item], *, workers: int = 1, progress: str | None = None) -> list[list[dict[str, Any]]]:
    """The input documents of every item, in order: the items this process has not certified yet are
    certified once each (forked over ``workers`` processes), the others read from the memo."""
    keys = [_digest(i) for i in items]
    known = {k: _memo[k] for k in set(keys) if k in _memo}
    todo = {k: i for k, i in zip(keys, items) if k not in known}  # equal keys, equal items
    if todo:
        done = map_chunks(_certify, list(todo.values()), workers=workers, progress=progress, chunk=16)
        new = {k: pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL) for k, d in zip(todo, done)}
        if len(_memo) + len(new) > MEMO_ITEMS:
            _memo.clear()
        _memo.update(new)
        known.update(new)
    return [pickle.loads(known[k]) for k in keys]


def _json(v: Any) -> str | None:
    return None if v is None else json.dumps(v, ensure_ascii=False, sort_keys=True)


def _value(text: Any) -> Any:
    return json.loads(text) if isinstance(text, str) else None


def frame(rows: Sequence[Mapping[str, Any]], docs: Sequence[Sequence[Mapping[str, Any]]]) -> pd.DataFrame:
    """One table row per input document (values as JSON text, quote offsets as nullable integers)."""
    out = []
    for r, ds in zip(rows, docs):
        for d in ds:
            q = d.get("quote") or {}
            out.append({"split": r["split"], "uid": int(r["uid"]), "Calculator ID": int(r["Calculator ID"]),
                        "name": d["name"], "value": _json(d["value"]), "unit": d.get("unit"), "source": d["source"],
                        "verdict": d["verdict"], "convention": bool(d.get("convention")), "quote_start": q.get("start"),
                        "quote_end": q.get("end"), "quote_text": q.get("text"), "quote_in": d.get("quote_in"),
                        "note_value": _json(d.get("note_value")),
                        "rule": d.get("rule") or "", "reason": d.get("reason") or "",
                        "declared": _json({k: d[k] for k in DECLARED if k in d} or None),
                        "used": bool(d.get("used", True))})
    table = pd.DataFrame(out, columns=COLUMNS)
    for c in ("quote_start", "quote_end"):
        table[c] = table[c].astype("Int64")
    return table


def documents(table: pd.DataFrame) -> dict[Key, list[dict[str, Any]]]:
    """The input documents of every row of a :func:`frame` table, in its order: the inverse of :func:`frame`."""
    out: dict[Key, list[dict[str, Any]]] = {}
    for r in table.to_dict("records"):
        start, end = r["quote_start"], r["quote_end"]
        quote = None if pd.isna(start) else {"start": int(start), "end": int(end), "text": r["quote_text"]}
        unit = r["unit"] if isinstance(r["unit"], str) else None
        d: dict[str, Any] = {"name": r["name"], "value": _value(r["value"]), "unit": unit, "source": r["source"],
                             "verdict": r["verdict"], "quote": quote, "rule": r["rule"], "reason": r["reason"],
                             "quote_in": r["quote_in"] if isinstance(r.get("quote_in"), str) else None}
        if r["verdict"] == "contradicts":
            d["note_value"] = _value(r["note_value"])
        if bool(r["convention"]):
            d["convention"] = True
        d.update(_value(r.get("declared")) or {})
        if not bool(r.get("used", True)):
            d["used"] = False
        out.setdefault((str(r["split"]), int(r["uid"])), []).append(d)
    return out


def row_document(docs: Sequence[Mapping[str, Any]]) -> str:
    """The ``Evidence`` cell of a verified row: ``{"status": certified | contradicted | not_addressed,
    "inputs": [input documents]}`` as JSON text."""
    return json.dumps({"status": row_verdict(docs), "inputs": list(docs)}, ensure_ascii=False, sort_keys=True)


__all__ = ["COLUMNS", "ROW_VERDICTS", "certify_items", "documents", "frame", "row_document", "row_items"]
