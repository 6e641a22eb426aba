"""The zero-cost checks' single pass with worker processes (the end-to-end test of
tests/quality/test_check_shortcuts.py: it starts a second process)."""

from __future__ import annotations

import pandas as pd

from medcalc_maintained.quality.checks import run_checks


def test_recompute_and_checks_are_the_same_in_two_processes(real_instances):
    """The stage's single pass, in one process or two, gives exactly the tables of recompute()
    followed by run_checks() on that recompute."""
    from medcalc_maintained.quality.recompute import recompute
    from medcalc_maintained.stages.recompute import recompute_and_check

    doubled = pd.concat([real_instances, real_instances.assign(split="copy")], ignore_index=True)
    rec = recompute(doubled)
    findings = run_checks(doubled, rec)
    assert len(findings) == 2 * len(run_checks(real_instances, recompute(real_instances)))
    for workers in (1, 2):
        got_rec, got_findings = recompute_and_check(doubled, workers=workers)
        pd.testing.assert_frame_equal(got_rec, rec)
        pd.testing.assert_frame_equal(got_findings, findings)
