"""Time of `validate` (GX suites) on a target next to the same checks written as plain pandas.

The floor computes the same contract views (medcalc_maintained.contracts, incl. the release views
of every config: files, card, config files and columns, default against full, and the `default`
rows through the schema and label suites) and evaluates every expectation of the suites with pandas
operations directly, so the difference is the cost of GX. Both timings include building the views.

    .venv/bin/python benchmarks/validate.py [TARGET] [--repeat K]

TARGET is a built release directory (default: build/release if it exists, else the pipeline outputs).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _common import ROOT

from medcalc_maintained.contracts import validate as V
from medcalc_maintained.project import Project

PROJECT = Project.load(ROOT)


def plain_pandas(target: Path | None) -> tuple[int, int]:
    """Every expectation of the suites (and their copies for the `default` config), evaluated with
    pandas; returns (failures, expectations evaluated)."""
    t = V.load_target(target, PROJECT)
    gates = V._gates(PROJECT.param("validate.gates"), t.gates)
    views = V.build_views(t, gates)
    suites = V.load_suites(PROJECT.expectations_dir)
    suites += V.release_views.config_suites(suites, views)
    failures = 0
    evaluated = 0
    for suite in suites:
        default_view = suite.get("meta", {}).get("view", "instances")
        for exp in suite["expectations"]:
            view = views.get(exp.get("meta", {}).get("view", default_view))
            if view is None or view.empty:
                continue
            kw, kind = exp["kwargs"], exp["type"]
            col = kw.get("column")
            if kind == "expect_column_to_exist":
                ok = col in view.columns
            elif kind == "expect_column_values_to_be_in_type_list":
                ok = str(view[col].dtype) in kw["type_list"] or view[col].map(type).map(lambda x: x.__name__).isin(kw["type_list"]).all()
            elif kind == "expect_column_values_to_not_be_null":
                ok = view[col].notna().all()
            elif kind == "expect_column_values_to_be_unique":
                ok = not view[col].duplicated().any()
            elif kind == "expect_compound_columns_to_be_unique":
                ok = not view.duplicated(kw["column_list"]).any()
            elif kind == "expect_column_values_to_be_in_set":
                s = view[col].dropna()
                ok = s.isin(kw["value_set"]).all()
            elif kind == "expect_column_mean_to_be_between":
                mx = kw.get("max_value")
                mx = gates["max_abstain_rate" if col == "is_abstain" else "max_unverified_rate"]["max"] if isinstance(mx, dict) else mx
                ok = view[col].mean() <= mx
            elif kind == "expect_column_values_to_be_between":
                mn = kw.get("min_value")
                mn = gates["min_per_calculator"]["min"] if isinstance(mn, dict) else mn
                ok = (view[col] >= mn).all()
            else:
                raise SystemExit(f"no pandas floor for {kind}")
            failures += not ok
            evaluated += 1
    return failures, evaluated


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("target", nargs="?", type=Path)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    target = args.target or (PROJECT.release_build if (PROJECT.release_build / "manifest.json").is_file() else None)
    name = str(target) if target else "pipeline outputs"
    gx_times, pd_times = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        rep = V.validate(target, project=PROJECT, docs_dir=None)
        gx_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        n_fail, n_eval = plain_pandas(target)
        pd_times.append(time.perf_counter() - t0)
    print(f"validate {name}: GX {min(gx_times):.2f} s ({rep.evaluated} expectations, {len(rep.failures)} failed) | "
          f"plain pandas floor {min(pd_times):.2f} s ({n_eval} expectations, {n_fail} failed) | GX overhead x{min(gx_times) / min(pd_times):.1f} "
          f"(best of {args.repeat})")


if __name__ == "__main__":
    main()
