"""Every input of every row read against its note (calculators/certify.py): coverage and time.

    .venv/bin/python benchmarks/evidence_coverage.py [--workers 2] [--examples N] [--dump FILE]

For each of the 1,047 test rows of the maintained labels (stage ``apply``: every ledger record applied),
every declared input of its calculator gets a verdict, read exactly as stage ``certify`` reads it
(``ledger/evidence_rows.py: row_items``: upstream's entities patched by the inputs the label's record
recorded): supports (a quote the evidence verifier accepts, or the definition's convention for an
unmentioned input), contradicts (the note states another value, with its quote) or not addressed. Prints
the seconds for all 1,047 rows (goal: <= 60 s on 2 cores), the verdict counts per input and per source, and
over the verified rows and the rows of ``default`` the three shares the card states (the stage certifies the
verified rows only; the same shares are in its ``summary.json``). ``--examples N`` prints N contradicted
inputs of verified rows with their quotes. Needs `dvc repro` (stages ingest and apply).
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
from medcalc_maintained.core.labels import UNVERIFIED, in_default
from medcalc_maintained.ledger.evidence_rows import certify_items, row_items
from medcalc_maintained.ledger.records import load
from medcalc_maintained.project import Project


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--examples", type=int, default=0)
    ap.add_argument("--dump", type=Path, help="write every input's verdict of the verified rows as JSON lines here")
    args = ap.parse_args()
    load_all()
    project = Project.load(ROOT)
    inst = pd.read_parquet(project.instances)
    rows = pd.read_parquet(project.maintained).to_dict("records")
    by_id = {r.id: r.data for r in load(project.ledger_paths) if r.valid}
    ents = {(str(s), int(u)): e for s, u, e in zip(inst["split"], inst["uid"], inst["entities"])}
    items = row_items(rows, ents, by_id)  # what stage certify reads, for every row
    t0 = time.perf_counter()
    docs = certify_items(items, workers=args.workers, progress="certifying")  # what stage certify runs
    took = time.perf_counter() - t0
    print(f"{len(items)} rows, {sum(len(d) for d in docs)} inputs in {took:.1f} s with {args.workers} workers (goal <= 60 s)")
    verified = [(int(r["uid"]), d) for r, d in zip(rows, docs) if str(r["Label Status"]) != UNVERIFIED]
    default = [d for r, d in zip(rows, docs) if in_default(r["Label Status"])]
    per_input: Counter[tuple[str, str]] = Counter()
    verdicts: Counter[str] = Counter()
    for _, d in verified:
        for i in d:
            per_input[(i["source"], i["verdict"] + (" (convention)" if i.get("convention") else ""))] += 1
        verdicts[row_verdict(d)] += 1
    n = len(verified)
    default_verdicts = Counter(row_verdict(d) for d in default)
    print(f"\nverified rows (every record applied): {n}; of them in default: {len(default)}")
    for k in ("certified", "contradicted", "not_addressed"):
        print(f"  {k:<14} {verdicts[k]:>4}  {verdicts[k] / n:.1%}    default {default_verdicts[k]:>4}  {default_verdicts[k] / len(default):.1%}")
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
