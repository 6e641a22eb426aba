"""Every input of every row read against its note (calculators/certify.py): coverage and time.

    .venv/bin/python benchmarks/evidence_coverage.py [--release 2.2.0] [--workers 2] [--examples N]

For each of the 1,047 test rows, every declared input of its calculator (the release's recorded inputs
over the upstream entities) gets a verdict: supports (a quote the evidence verifier accepts, or the
definition's convention for an unmentioned input), contradicts (the verifier accepts a quote of another
value) or not addressed. Prints the seconds for all 1,047 rows (goal: <= 60 s on 2 cores), the verdict
counts per input and per source, and over the release's verified rows the three shares the card should
state: every input supported (derived from evidence), an input contradicted, an input not addressed.
``--examples N`` prints N contradicted inputs of verified rows with their quotes. Needs `dvc repro` (the
ingested instances and the release tables).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import pandas as pd
from _common import ROOT

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.certify import row_verdict
from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.ledger.evidence_rows import certify_items


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--release", default="2.2.0")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--examples", type=int, default=0)
    ap.add_argument("--dump", type=Path, help="write every input's verdict of the verified rows as JSON lines here")
    args = ap.parse_args()
    load_all()
    inst = pd.read_parquet(ROOT / "data" / "interim" / "instances.parquet")
    full = pd.read_parquet(ROOT / "data" / "releases" / args.release / "full.parquet")
    status = dict(zip(full["uid"].astype(int), full["Label Status"]))
    recorded = {int(u): (json.loads(d).get("inputs") or []) if isinstance(d, str) and d else []
                for u, d in zip(full["uid"], full.get("Derivation", pd.Series([None] * len(full))))}
    abstains = {int(u): parse_answer(a, str(t)).kind == "abstain"
                for u, a, t in zip(full["uid"], full["Ground Truth Answer"], full["Output Type"])}
    items = [(int(c), json.loads(e) if isinstance(e, str) else {}, n, recorded.get(int(u), []), q, abstains.get(int(u), False))
             for c, e, n, u, q in zip(inst["calculator_id"], inst["entities"], inst["Patient Note"], inst["uid"],
                                      inst["Question"])]
    t0 = time.perf_counter()
    docs = certify_items(items, workers=args.workers, progress="certifying")  # what stage certify runs
    took = time.perf_counter() - t0
    print(f"{len(items)} rows, {sum(len(d) for d in docs)} inputs in {took:.1f} s with {args.workers} workers (goal <= 60 s)")
    uids = [int(u) for u in inst["uid"]]
    verified = [(u, d) for u, d in zip(uids, docs) if str(status.get(u)) != "unverified"]
    per_input: Counter[tuple[str, str]] = Counter()
    rows: Counter[str] = Counter()
    for _, d in verified:
        for i in d:
            per_input[(i["source"], i["verdict"] + (" (convention)" if i.get("convention") else ""))] += 1
        rows[row_verdict(d)] += 1
    n = len(verified)
    print(f"\nverified rows of {args.release}: {n}")
    for k in ("certified", "contradicted", "not_addressed"):
        print(f"  {k:<14} {rows[k]:>4}  {rows[k] / n:.1%}")
    print("inputs of verified rows, by source and verdict:")
    for (src, verdict), c in sorted(per_input.items()):
        print(f"  {src:<9} {verdict:<26} {c:>5}")
    rules = Counter(i["rule"] for _, d in verified for i in d if i["verdict"] == "not_addressed")
    print("not addressed, by the verifier's rule: " + ", ".join(f"{r} {c}" for r, c in rules.most_common()))
    if args.dump:
        with open(args.dump, "w", encoding="utf-8") as fh:
            for u, d in verified:
                for i in d:
                    fh.write(json.dumps({"uid": u, **i}, ensure_ascii=False) + "\n")
    shown = 0
    for u, d in verified:
        for i in d:
            if i["verdict"] == "contradicts" and shown < args.examples:
                shown += 1
                q = (i["quote"] or {}).get("text", "(silence: absent by convention)")
                print(f"- uid {u} {i['name']} = {i['value']!r} {i['unit'] or ''} ({i['source']}): note {i['note_value']!r} | {q[:200]!r}")


if __name__ == "__main__":
    main()
