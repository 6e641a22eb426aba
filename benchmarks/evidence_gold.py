"""The evidence verifier against the hand-labelled gold set: precision and recall on "supports".

    .venv/bin/python benchmarks/evidence_gold.py [--gold tests/data/evidence_gold.csv] [--errors]

Each gold pair is (test row, calculator input, value, quote, supports?), labelled by reading the
note, never from the verifier's output (tests/data/README.md). The verifier
(``calculators/evidence.py``) judges each pair against the v1.0 note; the script prints the
confusion counts, precision and recall of "supports" (goal: precision >= 0.98), the counts per
calculator and per rule, and with ``--errors`` every disagreement with the reason. Not a timing
benchmark; it prints its own time.
"""

from __future__ import annotations

import argparse
import csv
import time
from collections import Counter
from pathlib import Path

import pandas as pd
from _common import ROOT, upstream

from medcalc_maintained.calculators.evidence import verify

GOLD = ROOT / "tests" / "data" / "evidence_gold.csv"


def value_of(text: str):
    """A gold cell's value as a recorded input carries it: true/false, a number, else the text."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    if t.lower() in ("", "null", "none"):
        return None
    try:
        v = float(t.replace(",", ""))
        return int(v) if v.is_integer() and "." not in t else v
    except ValueError:
        return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gold", type=Path, default=GOLD)
    ap.add_argument("--errors", action="store_true", help="print every pair where the verifier and the gold label differ")
    args = ap.parse_args()
    t0 = time.perf_counter()
    df = pd.read_csv(upstream("medcalc-bench/v1.0/test_data.csv"), dtype=str, keep_default_na=False)
    notes = dict(zip(df["Row Number"].astype(int), df["Patient Note"]))
    with open(args.gold, encoding="utf-8", newline="") as fh:
        pairs = list(csv.DictReader(fh))
    conf: Counter[str] = Counter()
    rules: Counter[tuple[str, str]] = Counter()
    per_calc: Counter[str] = Counter()
    errors = []
    for p in pairs:
        note = notes[int(p["uid"])]
        inp = {"name": p["input"], "value": value_of(p["value"]), "unit": p["unit"] or None,
               "evidence": {"start": int(p["start"]) if p["start"] else None, "end": int(p["end"]) if p["end"] else None,
                            "text": p["quote"]}}
        v = verify(int(p["calculator_id"]), inp, note)
        gold = p["supports"].strip().lower() == "yes"
        key = ("t" if v.supports == gold else "f") + ("p" if v.supports else "n")
        conf[key] += 1
        rules[(v.rule, "yes" if gold else "no")] += 1
        per_calc[p["calculator_id"]] += 1
        if v.supports != gold:
            errors.append((p, v))
    tp, fp, fn, tn = conf["tp"], conf["fp"], conf["fn"], conf["tn"]
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    print(f"gold pairs: {len(pairs)} over {len(per_calc)} calculators ({sum(p['supports'] == 'yes' for p in pairs)} "
          f"supports, {sum(p['supports'] == 'no' for p in pairs)} do not)")
    print(f"verifier: TP {tp}  FP {fp}  FN {fn}  TN {tn}")
    print(f"precision on 'supports': {precision:.3f} (goal >= 0.98)   recall: {recall:.3f}")
    print("verdict rule x gold label:")
    for (rule, gold), n in sorted(rules.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {rule:<28} gold {gold:<3} {n}")
    if args.errors:
        for p, v in errors:
            print(f"- uid {p['uid']} calc {p['calculator_id']} {p['input']} = {p['value']} {p['unit']} gold "
                  f"{p['supports']}: verifier {v.rule}: {v.reason} | quote {p['quote']!r} | why {p['why']!r}")
    print(f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
