"""The evidence verifier's context rules against medspaCy's ConText, on gold set v2.

    /tmp/msvenv2/bin/python benchmarks/evidence_context.py [--diff] [--no-single]

Scores the verifier (``benchmarks/evidence_gold.py``: ``judge``, ``scores``) on the development and the
sealed part once with the project's rules (``note_text.negated`` / ``negation_cue``, ``planned``,
``family``) and once with them replaced at run time by ``benchmarks/context_medspacy.py`` (a ConText reading of a term's context; not part of the package, whose numpy it cannot share) (all three,
then each alone unless ``--no-single``). Prints TP/FP/FN/TN, precision and recall of "supports" per variant and part, and the
seconds each took. The sealed part is only counted: its pairs are never listed. ``--diff`` lists the
development pairs whose verdict differs between the rules and medspaCy (all three replaced).

medspaCy 1.3.1 (spaCy 3.7, thinc 8.2) needs numpy < 2 while the project pins numpy 2.4.6, so this runs
in a separate environment: ``python3.11 -m venv /tmp/msvenv2``, ``pip install medspacy==1.3.1
numpy==1.26.4 thinc==8.2.5 pandas==2.2.3 PyYAML==6.0.3``, ``pip install -e . --no-deps``.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from unittest import mock

import context_medspacy as C
import evidence_gold as G
import pandas as pd
from _common import upstream

from medcalc_maintained.calculators import evidence as E
from medcalc_maintained.calculators import note_text as T

# the rules replaced together: the verifier reads negation both as a yes/no and as the cue's text
GROUPS = {"negation": ("negated", "negation_cue"), "planned": ("planned",), "family": ("family",)}


def variant(which: tuple[str, ...]) -> contextlib.ExitStack:
    """Patches ``note_text``'s rules named in ``which`` (those it has) with the medspaCy versions."""
    stack = contextlib.ExitStack()
    for name in which:
        if hasattr(T, name):
            stack.enter_context(mock.patch.object(T, name, getattr(C, name)))
    return stack


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--diff", action="store_true", help="list the development pairs whose verdict differs (rules vs medspaCy)")
    ap.add_argument("--no-single", action="store_true", help="skip the variants that replace one rule alone")
    args = ap.parse_args()
    df = pd.read_csv(upstream("medcalc-bench/v1.0/test_data.csv"), dtype=str, keep_default_na=False)
    notes = dict(zip(df["Row Number"].astype(int), df["Patient Note"]))
    parts = {"dev": G.read(G.GOLD_V2 / "dev.csv"), "sealed": G.read(G.GOLD_V2 / "sealed.csv")}

    G.judge(parts["dev"][:20], notes)  # warm the lexicon's caches, untimed
    t0 = time.perf_counter()
    C.pipeline()
    print(f"medspaCy pipeline built in {time.perf_counter() - t0:.1f} s (once, not counted below)")

    variants: list[tuple[str, tuple[str, ...]]] = [("rules", ()), ("medspacy (all three)", sum(GROUPS.values(), ()))]
    if not args.no_single:
        variants += [(f"medspacy {group} only", names) for group, names in GROUPS.items()]
    dev_verdicts: dict[str, list] = {}
    for label, which in variants:
        print(f"\n== {label}")
        for part, pairs in parts.items():
            C.cache_clear()
            E.forget()  # the verifier's memo holds the verdicts of the rules read before; each variant reads anew
            t0 = time.perf_counter()
            with variant(which):
                judged = G.judge(pairs, notes)
            secs = time.perf_counter() - t0
            print(f"  {part:<7} {G.scores(judged)[1]}   {secs:6.1f} s")
            if part == "dev":
                dev_verdicts[label] = judged

    if args.diff:
        rules, ctx = dev_verdicts["rules"], dev_verdicts["medspacy (all three)"]
        diffs = [(p, a, b) for (p, a), (_, b) in zip(rules, ctx) if a.supports != b.supports]
        print(f"\n== dev pairs whose verdict differs (rules vs medspaCy): {len(diffs)}")
        for p, a, b in diffs:
            gold = p["supports"]
            right = "rules" if a.supports == (gold == "yes") else "medspacy"
            print(f"- #{p['pair_id']} uid {p['uid']} calc {p['calculator_id']} {p['input']} = {p['value']} gold {gold} "
                  f"(right: {right})\n    rules:    {a.rule}: {a.reason[:220]}\n    medspacy: {b.rule}: {b.reason[:220]}\n"
                  f"    quote {p['quote'][:200]!r}")


if __name__ == "__main__":
    main()
