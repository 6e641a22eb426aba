"""The evidence verifier against the gold sets: precision and recall of "supports", per part and pattern.

    .venv/bin/python benchmarks/evidence_gold.py [--errors] [--v1] [--dev-only]

Gold set v2 (tests/data/evidence_gold_v2/, its README says how it was drawn, read and sealed): the
pairs the verifier faces on a release, in a development part (rules are tuned on it) and a sealed
part (never tuned on: its errors are never printed). For each part the script prints the confusion
counts, precision and recall of "supports" (goals on the sealed part: precision >= 0.98, recall >=
0.90) with 95% Wilson intervals, the same per pattern (random draw, recorded inputs, each kind of hard
negative) and per rule, the readers' agreement (Cohen's kappa), and the three-way verdicts
(supports / contradicts / not addressed) against the readers' whole-note verdicts. ``--errors``
lists the development part's disagreements with their reasons. ``--v1`` also scores the first gold
set (tests/data/evidence_gold.csv, which the lexicon was reviewed against: not a measurement).
"""

from __future__ import annotations

import argparse
import csv
import math
import time
from collections import Counter
from pathlib import Path

import pandas as pd
from _common import ROOT, upstream

from medcalc_maintained.calculators.evidence import verify
from medcalc_maintained.core.rows import parse_entities

GOLD_V1 = ROOT / "tests" / "data" / "evidence_gold.csv"
GOLD_V2 = ROOT / "tests" / "data" / "evidence_gold_v2"


def value_of(text: str):
    """A gold cell's value as a recorded input carries it: true/false, a number, a list (a dosed drug,
    ``['PredniSONE PO', 45.802, 'mg']``, printed as the upstream entities print it), else the text."""
    t = text.strip()
    if t.startswith("["):
        try:
            return parse_entities("{'value': " + t + "}")["value"]  # the one literal parser (core/rows.py)
        except (ValueError, SyntaxError):
            return t
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    if t.lower() in ("", "null", "none"):
        return None
    try:
        v = float(t.replace(",", ""))
        return int(v) if v.is_integer() and "." not in t else v
    except ValueError:
        return t


def wilson(k: int, n: int) -> str:
    if n == 0:
        return "[n/a]"
    p, z = k / n, 1.96
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"[{c - h:.3f}, {c + h:.3f}]"


def kappa(a: list[str], b: list[str]) -> float:
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    cats = set(a) | set(b)
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (po - pe) / (1 - pe) if pe < 1 else 1.0


def judge(pairs: list[dict], notes: dict[int, str]) -> list[tuple[dict, object]]:
    out = []
    for p in pairs:
        inp = {"name": p["input"], "value": value_of(p["value"]), "unit": p["unit"] or None,
               "evidence": {"start": int(p["start"]) if p["start"] else None, "end": int(p["end"]) if p["end"] else None,
                            "text": p["quote"]}}
        out.append((p, verify(int(p["calculator_id"]), inp, notes[int(p["uid"])])))
    return out


def scores(judged: list[tuple[dict, object]]) -> tuple[Counter[str], str]:
    conf: Counter[str] = Counter()
    for p, v in judged:
        gold = p["supports"].strip().lower() == "yes"
        conf[("t" if v.supports == gold else "f") + ("p" if v.supports else "n")] += 1
    tp, fp, fn = conf["tp"], conf["fp"], conf["fn"]
    prec = f"{tp / (tp + fp):.3f} {wilson(tp, tp + fp)}" if tp + fp else "n/a"
    rec = f"{tp / (tp + fn):.3f} {wilson(tp, tp + fn)}" if tp + fn else "n/a"
    return conf, f"TP {tp:>3}  FP {fp:>3}  FN {fn:>3}  TN {conf['tn']:>3}   precision {prec}   recall {rec}"


def report(name: str, judged: list[tuple[dict, object]], errors: bool, rules_too: bool = True) -> None:
    pairs = [p for p, _ in judged]
    print(f"\n== {name}: {len(pairs)} pairs, {len({p['uid'] for p in pairs})} rows, "
          f"{len({p['calculator_id'] for p in pairs})} calculators, {sum(p['supports'] == 'yes' for p in pairs)} supports")
    if "supports_a" in pairs[0]:
        print(f"readers: agree on supports {sum(p['supports_a'] == p['supports_b'] for p in pairs)}/{len(pairs)}, "
              f"Cohen's kappa {kappa([p['supports_a'] for p in pairs], [p['supports_b'] for p in pairs]):.3f}; "
              f"verdict kappa {kappa([p['verdict_a'] for p in pairs], [p['verdict_b'] for p in pairs]):.3f}")
    print("all      ", scores(judged)[1])
    for pattern in sorted({p.get("pattern", "") for p in pairs}):
        sub = [(p, v) for p, v in judged if p.get("pattern", "") == pattern]
        if pattern:
            print(f"  {pattern:<26} n={len(sub):<4} {scores(sub)[1]}")
    rules: Counter[tuple[str, str]] = Counter((v.rule, p["supports"]) for p, v in judged)
    if rules_too:
        print("verdict rule x gold label: " + ", ".join(f"{r}/{g} {n}" for (r, g), n in sorted(rules.items(), key=lambda kv: -kv[1])))
    if errors:
        for p, v in judged:
            if v.supports != (p["supports"] == "yes"):
                print(f"- #{p.get('pair_id', '')} uid {p['uid']} calc {p['calculator_id']} {p['input']} = {p['value']} "
                      f"{p['unit']} gold {p['supports']}: verifier {v.rule}: {v.reason} | quote {p['quote'][:200]!r} | "
                      f"why {p.get('why_a') or p.get('why', '')!r}")


def read(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--errors", action="store_true", help="list the development part's disagreements (never the sealed part's)")
    ap.add_argument("--v1", action="store_true", help="also score the first gold set (tuned on: not a measurement)")
    ap.add_argument("--dev-only", action="store_true",
                    help="score the development parts only: what a rule change is tuned on, without a look at the "
                         "sealed part (score it once, when the change is done)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    df = pd.read_csv(upstream("medcalc-bench/v1.0/test_data.csv"), dtype=str, keep_default_na=False)
    notes = dict(zip(df["Row Number"].astype(int), df["Patient Note"]))
    report("dev (tuned on)", judge(read(GOLD_V2 / "dev.csv"), notes), args.errors)
    report("dev extension (tuned on; drawn among pairs the verifier accepted: its precision is a tuning signal, "
           "not a measurement)", judge(read(GOLD_V2 / "dev-extension.csv"), notes), args.errors)
    report("dev extension 2 (tuned on; drawn the same way from other rows)",
           judge(read(GOLD_V2 / "dev-extension-2.csv"), notes), args.errors)
    report("dev extension 3 (for tuning; drawn the same way from the last verified rows outside the gold set)",
           judge(read(GOLD_V2 / "dev-extension-3.csv"), notes), args.errors)
    if not args.dev_only:
        report("sealed (never tuned on; goals: precision >= 0.98, recall >= 0.90)",
               judge(read(GOLD_V2 / "sealed.csv"), notes), False, rules_too=False)
        report("sealed 2 (the 140 rows outside every other part, drawn and sealed after the first sealed part's "
               "fifth score; never tuned on; same goals)", judge(read(GOLD_V2 / "sealed-2.csv"), notes), False,
               rules_too=False)
    if args.v1:
        report("v1 gold set (the lexicon was reviewed against it)", judge(read(GOLD_V1), notes), False)
    print(f"\n{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
