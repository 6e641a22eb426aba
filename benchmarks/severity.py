"""Severity of the label changes of a release: counts per level and per calculator, and examples.

    .venv/bin/python benchmarks/severity.py [--maintained PATH] [--interim PATH] [--examples N]

Defaults read the pipeline outputs of this checkout (``Project``). Not a timing benchmark: it
prints the table the release notes quote (issue 16).
"""

from __future__ import annotations

import argparse

import pandas as pd
from _common import ROOT

from medcalc_maintained.calculators.severity import LEVELS, change_table, level_counts, per_calculator
from medcalc_maintained.project import Project


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--maintained", help="maintained instances parquet (default: the project's)")
    ap.add_argument("--interim", help="interim instances parquet with the entities (default: the project's)")
    ap.add_argument("--examples", type=int, default=5)
    args = ap.parse_args()
    project = Project.load(ROOT)
    maintained = pd.read_parquet(args.maintained or project.maintained)
    interim = pd.read_parquet(args.interim or project.instances)
    table = change_table(maintained, interim)
    print(f"{len(table)} changes:", ", ".join(f"{k} {v}" for k, v in level_counts(table).items()))
    print(pd.crosstab(table["status"], table["level"]).reindex(columns=list(LEVELS), fill_value=0).to_string())
    print(per_calculator(table).to_string())
    with pd.option_context("display.width", 250, "display.max_colwidth", 160):
        for level in LEVELS:
            rows = table[table["level"] == level].groupby("calculator_id").head(1).head(args.examples)
            print(f"\n{level}: {len(table[table['level'] == level])} changes")
            if len(rows):
                print(rows[["uid", "calculator_id", "old", "new", "reason"]].to_string(index=False))


if __name__ == "__main__":
    main()
