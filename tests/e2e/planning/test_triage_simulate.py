"""Error model, allocation policies and replay study (issue 17): synthetic cases worked out by hand,
recovery of known rates, and the stage on the real adjudicated rows.

The end-to-end tests of this subject; the fast ones are in tests/planning/test_triage_simulate.py."""

from __future__ import annotations

import json

import pandas as pd


def test_stage_on_the_real_adjudicated_rows(tables_root, real_instances, real_recompute, campaign_table):
    import yaml

    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import triage as triage_stage
    from medcalc_maintained.stages import triage_simulate as stage
    from tests.support.triage_support import write_relabel_and_flags

    params = yaml.safe_load((tables_root / "params.yaml").read_text())
    params["triage_simulate"].update(seeds=[1, 2], max_reviews=50, report_at=[25, 50], draws=300)
    (tables_root / "params.yaml").write_text(yaml.safe_dump(params))
    p = Project.load(tables_root)
    write_relabel_and_flags(p, real_instances, real_recompute, campaign_table)
    triage_stage.run(p)
    seen = []
    run = stage.run(p, progress=lambda policy, seed: seen.append((policy, seed)))
    assert len(seen) == 5 * 2
    m = json.loads((p.triage_simulate_dir / "summary.json").read_text())
    cal = m["calibration"]
    # 279 labels changed in 2.0.0; 2.1.0's policy records return 28 of them to v1.0's value and change uid 1016;
    # 2.2.0's evidence reverts set 4 harmonized labels back to the physicians' N/A (146, 152, 211, 215)
    assert cal["rows"] == 887 and cal["errors"] == 256
    assert cal["brier"] < cal["brier_base_rate"]  # better than predicting the base rate for every row
    at = m["replay"]["at"]
    for k in ("25", "50"):
        assert at["p_error"]["errors"][k]["mean"] > at["uniform"]["errors"][k]["ci95"][1]
    est = json.loads(p.unverified_estimate.read_text())
    assert est["2.0.0"]["unverified_rows"] == 160 and est["2.0.0"]["fitted_on_adjudicated_rows"] == 887
    assert est["1.0.0"]["fitted_on_adjudicated_rows"] == 0
    per = est["2.0.0"]["per_calculator"]
    assert sum(r["unverified_rows"] for r in per) == 160
    assert all(r["ci95"][0] <= r["mean"] <= r["ci95"][1] for r in per)
    rows = pd.read_csv(p.triage_simulate_dir / "rows.csv")
    assert len(rows) == 1047 and rows["p_wrong"].between(0, 1).all()
    # the card of 2.0.0 quotes the estimate
    from medcalc_maintained.release import unverified_estimate

    text = unverified_estimate.text(est, "2.0.0")
    assert "160 unverified rows" in text and f"{100 * est['2.0.0']['total']['mean']:.0f}%" in text
    assert run.paths["errors_plot"].is_file() and run.paths["estimation_plot"].is_file()
