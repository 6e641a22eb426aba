"""Draw the candidate pairs of the evidence gold set v2 (tests/data/evidence_gold_v2/), before any reading.

    .venv/bin/python benchmarks/evidence_gold_draw.py --out DIR [--seed 45]

What the verifier faces on a release is every input of every verified row: the upstream
``Relevant Entities`` of the row (GPT-4's extraction) and the inputs a ledger record recorded, each
with a quote a search proposes. This script draws pairs from exactly that, at random, and adds hard
negatives: pairs mined from the same notes where a keyword search is most easily fooled (a value of
another time, negation after the term, another person, a unit multiplier, another quantity, a
paraphrased category). It writes ``candidates.csv`` (one pair a line, no label) and the split of the
rows into ``dev`` and ``sealed`` (``split.csv``); the labels come from two readers reading the notes
(``tests/data/evidence_gold_v2/README.md``).

The proposing search here is deliberately not the verifier: it ranks the note's sentences by whether
they name the input (a term of the lexicon, or the input's own name) and print the value, and
proposes the best; the pair is then (input, value, that quote). For an absent criterion that no
sentence names, the quote is empty (the note's silence is the evidence).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
from pathlib import Path
from typing import Any

import pandas as pd
from _common import ROOT, upstream

from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs

COLUMNS = ["pair_id", "uid", "calculator_id", "calculator", "input", "value", "unit", "start", "end", "quote",
           "origin", "pattern"]
RANDOM_PAIRS = 680
PER_ROW = 10
HARD_PER_PATTERN = 30
SEALED_SHARE = 0.45

FAMILY = re.compile(r"\b(?:mother|father|sister|brother|son|daughter|sibling|family|grand(?:mother|father|son|daughter)"
                    r"|aunt|uncle|cousin|wife|husband|parents?)\b", re.I)
TIME = re.compile(r"\b(?:ago|previous(?:ly)?|prior|earlier|baseline|at (?:the )?age(?: of)?|follow-?up|later|subsequent(?:ly)?"
                  r"|on day|hospital day|at discharge|on discharge|years? before|history of|postoperative(?:ly)?|after)\b",
                  re.I)
MULTIPLIER = re.compile(r"(?:\bK\s*/|×\s*10|\bx\s*10|10\^|10\*|10⁹|10³|10\s*\^?\s*[39]\s*/|\bthousand\b)", re.I)
OTHER_QUANTITY = re.compile(r"\b(?:post-?load|after (?:a |the )?(?:\d+\s*g )?(?:glucose )?(?:load|challenge)|2-?h(?:our)?|"
                            r"OGTT|tolerance test|change|increase[sd]? (?:of|by)|decrease[sd]? (?:of|by)|rose by|fell by|"
                            r"dropped by|delta|difference)\b", re.I)
NEG_AFTER = re.compile(r"\b(?:negative|within normal limits|unremarkable|absent|not (?:seen|found|present|detected|identified|"
                       r"noted|observed)|(?:were|was|been) (?:ruled out|excluded)|void of|escaped|resolved|normal)\b", re.I)
PARAPHRASE = re.compile(r"\b(?:not testable|could not be (?:assessed|tested|evaluated)|unable to (?:assess|test)|intubated|"
                        r"sedated|unresponsive|does not respond|no response|withdr\w+|locali[sz]\w+|confused|disoriented|"
                        r"incomprehensible|inappropriate)\b", re.I)


def spec_of(cid: int, name: str) -> InputSpec | None:
    low = str(name).strip().lower()
    for spec in declared_inputs(cid):
        if spec.name.lower() == low or any(a.lower() == low for a in spec.aliases):
            return spec
    return None


def terms_of(spec: InputSpec) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    entry = L.lexicon_entry(spec.name) or next((L.lexicon_entry(a) for a in spec.aliases if L.lexicon_entry(a)), None)
    names = tuple(entry.names) if entry else ()
    return names + (spec.name,), tuple(entry.masks) if entry else (), tuple(entry.patterns) if entry else ()


def sentences(note: str) -> list[tuple[int, int]]:
    out, a = [], 0
    for m in list(T.SENTENCE_END.finditer(note)) + [None]:
        b = m.start() if m else len(note)
        piece = note[a:b]
        lead = len(piece) - len(piece.lstrip())
        s, e = a + lead, a + len(piece.rstrip())
        if e > s:
            out.append((s, e))
        a = m.end() if m else len(note)
    return out


def value_and_unit(raw: Any) -> tuple[Any, str | None]:
    if isinstance(raw, (list, tuple)) and raw and isinstance(raw[0], (int, float)) and not isinstance(raw[0], bool):
        return raw[0], (str(raw[1]) if len(raw) > 1 else None)
    return raw, None


def prints_value(piece: str, value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return any(T.same_number(v, value) for _, _, v in T.numbers(piece))


def propose(note: str, spec: InputSpec, value: Any) -> tuple[int, int] | None:
    """The sentence a search proposes for ``spec = value`` (not the verifier): names it and prints the value."""
    names, masks, patterns = terms_of(spec)
    option_words = [str(value)] if isinstance(value, str) else []
    best, best_score = None, 0
    for s, e in sentences(note):
        piece = note[s:e]
        score = 0
        if L.term_spans(piece, names, masks, patterns):
            score += 2
        if prints_value(piece, value):
            score += 2
        if option_words and any(w.lower() in piece.lower() for w in option_words):
            score += 2
        if score > best_score:
            best, best_score = (s, e), score
    if best is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and best_score < 2:
        return None
    return best


def fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return str(value)


def load_rows(every_row: bool = False) -> pd.DataFrame:
    df = pd.read_csv(upstream("medcalc-bench/v1.0/test_data.csv"), dtype=str, keep_default_na=False)
    if every_row:
        df["uid"] = df["Row Number"].astype(int)
        return df
    verified = pd.read_csv(upstream("validate-medcalc-labels/medcalc_v1_corrected.csv"), dtype=str, keep_default_na=False)
    uids = {int(u) for u in verified["Unique ID"]}
    df["uid"] = df["Row Number"].astype(int)
    return df[df["uid"].isin(uids)].reset_index(drop=True)


def recorded_inputs(root: Path) -> dict[int, list[dict[str, Any]]]:
    """The recorded inputs of each verified row in release 2.2.0's ``full`` (when the tables are built)."""
    path = root / "data" / "releases" / "2.2.0" / "full.parquet"
    if not path.is_file():
        raise SystemExit(f"{path} is absent: run `dvc repro release-tables` first")
    full = pd.read_parquet(path)
    out: dict[int, list[dict[str, Any]]] = {}
    for uid, doc in zip(full["uid"], full["Derivation"]):
        if isinstance(doc, str) and doc:
            ins = json.loads(doc).get("inputs") or []
            if ins:
                out[int(uid)] = ins
    return out


def random_pairs(rows: pd.DataFrame, recorded: dict[int, list[dict[str, Any]]], rng: random.Random) -> list[dict[str, Any]]:
    order = list(rows.index)
    rng.shuffle(order)
    pairs: list[dict[str, Any]] = []
    for ix in order:
        if len(pairs) >= RANDOM_PAIRS:
            break
        r = rows.loc[ix]
        cid, note, uid = int(r["Calculator ID"]), r["Patient Note"], int(r["uid"])
        items: list[dict[str, Any]] = []
        rec_names = set()
        for inp in recorded.get(uid, []):
            spec = spec_of(cid, inp.get("name"))
            if spec is None:
                continue
            ev = inp.get("evidence") or {}
            rec_names.add(spec.name.lower())
            items.append({"input": spec.name, "value": fmt(inp.get("value")), "unit": inp.get("unit") or "",
                          "start": ev.get("start") if ev.get("start") is not None else "",
                          "end": ev.get("end") if ev.get("end") is not None else "",
                          "quote": ev.get("text") or "", "origin": "recorded"})
        try:
            ents = eval(r["Relevant Entities"], {"__builtins__": {}}, {"True": True, "False": False})  # noqa: S307
        except Exception:
            ents = {}
        for key, raw in (ents or {}).items():
            spec = spec_of(cid, key)
            if spec is None or spec.name.lower() in rec_names:
                continue
            value, unit = value_and_unit(raw)
            span = propose(note, spec, value)
            items.append({"input": spec.name, "value": fmt(value), "unit": unit or "",
                          "start": span[0] if span else "", "end": span[1] if span else "",
                          "quote": note[span[0]:span[1]] if span else "", "origin": "upstream"})
        rng.shuffle(items)
        for it in items[:PER_ROW]:
            pairs.append({"uid": uid, "calculator_id": cid, "calculator": r["Calculator Name"], **it, "pattern": "random"})
    return pairs


def recorded_stratum(rows: pd.DataFrame, recorded: dict[int, list[dict[str, Any]]], drawn: set[tuple[int, str]]
                     ) -> list[dict[str, Any]]:
    """Every recorded input of a verified row (the few inputs a ledger record quotes), not drawn already."""
    out = []
    for _, r in rows.iterrows():
        uid, cid = int(r["uid"]), int(r["Calculator ID"])
        for inp in recorded.get(uid, []):
            spec = spec_of(cid, inp.get("name"))
            if spec is None or (uid, spec.name) in drawn:
                continue
            ev = inp.get("evidence") or {}
            out.append({"uid": uid, "calculator_id": cid, "calculator": r["Calculator Name"], "input": spec.name,
                        "value": fmt(inp.get("value")), "unit": inp.get("unit") or "",
                        "start": ev.get("start") if ev.get("start") is not None else "",
                        "end": ev.get("end") if ev.get("end") is not None else "",
                        "quote": ev.get("text") or "", "origin": "recorded", "pattern": "recorded"})
    return out


def hard_negatives(rows: pd.DataFrame, rng: random.Random) -> list[dict[str, Any]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for _, r in rows.iterrows():
        cid, note, uid = int(r["Calculator ID"]), r["Patient Note"], int(r["uid"])
        sents = sentences(note)
        for spec in declared_inputs(cid):
            names, masks, patterns = terms_of(spec)
            for s, e in sents:
                piece = note[s:e]
                if not L.term_spans(piece, names, masks, patterns):
                    continue
                base = {"uid": uid, "calculator_id": cid, "calculator": r["Calculator Name"], "input": spec.name,
                        "start": s, "end": e, "quote": piece, "origin": "mined"}
                if spec.accessor in ("quantity", "number"):
                    for a, b, v in T.numbers(piece):
                        if any(m.start() <= a < m.end() for m in T.DATE.finditer(piece)):
                            continue
                        shown, _ = T.unit_after(piece, b)
                        unit = (shown or "").lstrip("-")
                        if FAMILY.search(piece):
                            tag = "another-person"
                        elif MULTIPLIER.search(piece[b:b + 15]):
                            tag = "unit-multiplier"
                            found.setdefault(tag, []).append({**base, "value": fmt(v * 1000 if v < 1000 else v),
                                                              "unit": "µL", "pattern": tag + "-converted"})
                        elif OTHER_QUANTITY.search(piece):
                            tag = "another-quantity"
                        elif TIME.search(piece):
                            tag = "another-time"
                        else:
                            continue
                        found.setdefault(tag, []).append({**base, "value": fmt(int(v) if v.is_integer() else v),
                                                          "unit": unit, "pattern": tag})
                elif spec.accessor == "flag":
                    if FAMILY.search(piece):
                        found.setdefault("another-person", []).append({**base, "value": "true", "unit": "",
                                                                      "pattern": "another-person"})
                    for a, b in L.term_spans(piece, names, masks, patterns):
                        if NEG_AFTER.search(piece, b):
                            found.setdefault("negation-after", []).append({**base, "value": "true", "unit": "",
                                                                          "pattern": "negation-after"})
                            break
                elif spec.accessor == "choice" and PARAPHRASE.search(piece):
                    for opt in spec.options:
                        found.setdefault("near-synonym", []).append({**base, "value": opt, "unit": "",
                                                                    "pattern": "near-synonym"})
    out: list[dict[str, Any]] = []
    for tag in sorted(found):
        cands = found[tag]
        rng.shuffle(cands)
        seen_rows: dict[int, int] = {}
        kept = 0
        for c in cands:
            if kept >= HARD_PER_PATTERN // (2 if tag.startswith("unit-multiplier") else 1):
                break
            if seen_rows.get(c["uid"], 0) >= (1 if len(cands) > 3 * HARD_PER_PATTERN else 3):
                continue
            seen_rows[c["uid"]] = seen_rows.get(c["uid"], 0) + 1
            out.append(c)
            kept += 1
    return out


def draw(rows: pd.DataFrame, recorded: dict[int, list[dict[str, Any]]], rng: random.Random) -> list[dict[str, Any]]:
    """The pairs of a draw from ``rows``, each once: random pairs (with the quote the independent search
    proposes), every recorded input not drawn already, and the mined hard negatives."""
    pairs = random_pairs(rows, recorded, rng)
    drawn = {(p["uid"], p["input"]) for p in pairs}
    pairs += recorded_stratum(rows, recorded, drawn)
    pairs += hard_negatives(rows, rng)
    seen = set()
    unique = []
    for p in pairs:
        key = (p["uid"], p["input"], p["value"], p["unit"], p["start"], p["end"])
        if key not in seen:
            seen.add(key)
            unique.append(p)
    return unique


def used_rows() -> set[int]:
    """The rows of every part of gold set v2 drawn before the second sealed part (the draw it was made from)."""
    gold = ROOT / "tests" / "data" / "evidence_gold_v2"
    return {int(u) for part in ("dev", "sealed", "dev-extension", "dev-extension-2", "dev-extension-3")
            for u in pd.read_csv(gold / f"{part}.csv", dtype=str)["uid"]}


def fresh_sealed(rows: pd.DataFrame, recorded: dict[int, list[dict[str, Any]]], rng: random.Random
                 ) -> list[dict[str, Any]]:
    """A second sealed part, drawn after the first had been scored five times: every test row outside every
    part so far (the verified rows the extensions left and the rows no audit verified, whose upstream
    extraction is the least trusted), drawn as the first draw was (random pairs with the quote the
    independent search proposes, every recorded input, mined hard negatives), and nothing else."""
    return draw(rows[~rows["uid"].isin(used_rows())].reset_index(drop=True), recorded, rng)


def extension(rows: pd.DataFrame, recorded: dict[int, list[dict[str, Any]]], rng: random.Random, n: int
              ) -> list[dict[str, Any]]:
    """More development pairs, for tuning only: rows outside gold set v2, every pair the verifier accepts as
    drawn (its errors there are its false acceptances) up to ``n``, plus the hard negatives mined from them."""
    from medcalc_maintained.calculators.evidence import verify

    gold = ROOT / "tests" / "data" / "evidence_gold_v2"
    used = {int(u) for p in ("dev", "sealed", "dev-extension", "dev-extension-2", "dev-extension-3") if (gold / f"{p}.csv").is_file()
            for u in pd.read_csv(gold / f"{p}.csv", dtype=str)["uid"]}
    rest = rows[~rows["uid"].isin(used)].reset_index(drop=True)
    notes = dict(zip(rest["uid"], rest["Patient Note"]))
    pairs = []
    for p in random_pairs(rest, recorded, rng) + hard_negatives(rest, rng):
        inp = {"name": p["input"], "value": p["value"], "unit": p["unit"] or None,
               "evidence": {"start": p["start"] if p["start"] != "" else None, "end": p["end"] if p["end"] != "" else None,
                            "text": p["quote"]}}
        if p["value"] in ("true", "false"):
            inp["value"] = p["value"] == "true"
        else:
            try:
                inp["value"] = float(p["value"])
            except ValueError:
                pass
        if p["pattern"] != "random" or verify(p["calculator_id"], inp, notes[p["uid"]]).supports:
            pairs.append({**p, "pattern": p["pattern"] if p["pattern"] != "random" else "accepted"})
    return pairs[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=45)
    ap.add_argument("--extend", type=int, default=0, metavar="N",
                    help="draw N development pairs from rows outside gold set v2 instead (for tuning; see extension())")
    ap.add_argument("--fresh-sealed", action="store_true",
                    help="draw a second sealed part from every test row outside gold set v2 instead (see fresh_sealed())")
    ap.add_argument("--first-id", type=int, default=10001, help="the pair_id of the first extension pair")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    rows = load_rows(every_row=args.fresh_sealed)
    if args.extend or args.fresh_sealed:
        if args.fresh_sealed:
            pairs = fresh_sealed(rows, recorded_inputs(ROOT), rng)
        else:
            pairs = extension(rows, recorded_inputs(ROOT), rng, args.extend)
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "candidates.csv", "w", encoding="utf-8", newline="") as fh:
            w = csv.DictWriter(fh, COLUMNS)
            w.writeheader()
            for n, p in enumerate(pairs, args.first_id):
                w.writerow({"pair_id": n, **{k: p.get(k, "") for k in COLUMNS if k != "pair_id"}})
        print(f"{len(pairs)} pairs over {len({p['uid'] for p in pairs})} rows")
        print(pd.DataFrame(pairs).groupby("pattern").size().to_string())
        return
    unique = draw(rows, recorded_inputs(ROOT), rng)
    uids = sorted({p["uid"] for p in unique})
    rng.shuffle(uids)
    sealed = set(uids[:round(len(uids) * SEALED_SHARE)])
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "candidates.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, COLUMNS)
        w.writeheader()
        for n, p in enumerate(unique, 1):
            w.writerow({"pair_id": n, **{k: p.get(k, "") for k in COLUMNS if k != "pair_id"}})
    with open(args.out / "split.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["uid", "part"])
        for u in sorted(uids):
            w.writerow([u, "sealed" if u in sealed else "dev"])
    by = pd.DataFrame(unique)
    print(f"{len(unique)} pairs over {len(uids)} rows ({len(sealed)} sealed) and {by['calculator_id'].nunique()} calculators")
    print(by.groupby(["origin", "pattern"]).size().to_string())


if __name__ == "__main__":
    main()
