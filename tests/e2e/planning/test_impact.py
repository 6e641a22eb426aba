"""Impact-aware triage (quality/impact.py): expected severity of a row, harm ranking, severe errors
found, the checked config, and the acceptance figure on the real adjudicated rows.

Expected levels come from the published cut-offs (CURB-65 0-1 home / 2 short stay / >=3 hospital;
CrCl dosing bands) and the weights written here, not from the code under test.

The end-to-end tests of this subject; the fast ones are in tests/planning/test_impact.py."""

from __future__ import annotations

import numpy as np

from medcalc_maintained.planning import impact
from medcalc_maintained.planning import triage as tr
from tests.planning.test_impact import W
from tests.support.triage_support import config, relabel_and_flags


def test_real_harm_ranking_finds_at_least_as_many_severe_errors_in_50_reviews(
        real_instances, real_recompute, real_maintained, campaign_table):
    relabel, flags = relabel_and_flags(real_instances, real_recompute, campaign_table)
    c = config()
    q = tr.score(real_instances, real_recompute, relabel, flags, c)
    q = impact.expected_severity(q, real_instances, real_recompute, impact.ImpactConfig.from_section(
        {"ranking": "harm", "impact": {"weights": W, "saturation": 6.0}}, "p.yaml"))
    m = impact.severity_metrics(q, real_maintained, 50, "harm")
    adj = m["adjudicated_rows"]
    assert adj["harm"]["severe"] >= adj["evidence"]["severe"]
    assert adj["harm"]["severe"] > adj["uniform_expected"]["severe"]
    # 279 changes among 887 adjudicated rows, of which 158 are L2+ (121 L1, 48 L2, 110 L3)
    assert adj["uniform_expected"] == {"errors": round(50 * 279 / 887, 2), "severe": round(50 * 158 / 887, 2), "reviews": 50}
    assert np.isclose(q["p_wrong"].max(), 1.0) and set(q["severity_source"]) <= {"relabel", "recompute", "prior"}
