"""Issue 14: explanations that never contradict the label, the stratified `mini` config, integer
keys, and the contract views that check them.

The end-to-end tests of this subject; the fast ones are in tests/release/test_release_content.py."""

from __future__ import annotations

import numpy as np
import pandas as pd

from medcalc_maintained.contracts import release_content as rc
from medcalc_maintained.core.answers import is_correct
from medcalc_maintained.release import explanations, mini


def test_accuracy_on_mini_tracks_accuracy_on_default(real_maintained):
    """200 simulated models, each with its own accuracy per calculator (uniform in [0.05, 0.95]) and
    per Label Status shift; every row is right with that probability. Bound: mini has ~520 of the
    887 verified rows, so the sampling s.d. of its accuracy around default's is at most
    0.5 * sqrt(1/519 - 1/887) = 0.014; mini also weighs calculators almost equally where default
    weighs them by their row count, which moves the expected accuracy by at most
    sum_c |w_mini - w_default| * (0.95 - 0.05) / 2. The test asserts |diff| <= 4 s.d. + that shift
    for every model, and a rank correlation above 0.9 between the two accuracies."""
    full = real_maintained.copy()
    full["Row Number"] = full["uid"].astype(int)
    full["Calculator ID"] = full["calculator_id"].astype(int)
    default = full[full["Label Status"] != "unverified"].reset_index(drop=True)
    sel = mini.select(default, "test", 10)
    in_mini = default["uid"].isin(set(sel["Row Number"])).to_numpy()
    assert in_mini.sum() == len(sel) and 400 < len(sel) < len(default)
    cids = default["Calculator ID"].to_numpy()
    w_def = pd.Series(cids).value_counts(normalize=True)
    w_mini = pd.Series(cids[in_mini]).value_counts(normalize=True)
    shift = float((w_mini.reindex(w_def.index, fill_value=0) - w_def).abs().sum()) * 0.45
    sd = 0.5 * np.sqrt(1 / in_mini.sum() - 1 / len(default))
    bound = 4 * sd + shift
    rng = np.random.default_rng(20261123)
    acc_def, acc_mini = [], []
    status = default["Label Status"].to_numpy()
    for _ in range(200):
        p_calc = dict(zip(np.unique(cids), rng.uniform(0.05, 0.95, len(np.unique(cids)))))
        p_status = {s: rng.uniform(-0.1, 0.1) for s in ("confirmed", "corrected", "abstain")}
        p = np.clip([p_calc[c] + p_status[s] for c, s in zip(cids, status)], 0, 1)
        right = rng.random(len(p)) < p
        acc_def.append(right.mean())
        acc_mini.append(right[in_mini].mean())
    diff = np.abs(np.array(acc_def) - np.array(acc_mini))
    print(f"mini {in_mini.sum()} rows; max |diff| {diff.max():.4f}, mean {diff.mean():.4f}, bound {bound:.4f}")
    assert diff.max() <= bound, (diff.max(), bound)
    rho = pd.Series(acc_def).corr(pd.Series(acc_mini), method="spearman")
    assert rho > 0.9, rho


def test_no_changed_row_of_release_2_explains_the_old_label(pipeline_project):
    """Every changed row of the real 2.0.0 release: its explanation never states a result that
    grades correct against the old label, and a derivation states the maintained label."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.table_builder import build_tables

    project = Project.load(pipeline_project)
    plan = load_releases(project.releases_file)
    t = build_tables(project, plan.get("2.0.0"), plan.path)
    full = t.combined("full")
    original = t.combined("original").set_index("uid")["Ground Truth Explanation"]
    changed = full[full["Label Status"].isin(["corrected", "abstain"])]
    assert len(changed) == 279
    counts = changed["Explanation Source"].value_counts().to_dict()
    assert set(counts) <= {"reference-calculator", "none", "ledger"} and counts["ledger"] == 69
    for r in changed.to_dict("records"):
        text = r["Ground Truth Explanation"]
        assert pd.isna(text) or text != original[r["uid"]]
        result = explanations.stated_result(text)
        if r["Explanation Source"] == "reference-calculator":
            assert is_correct(result, r["Ground Truth Answer"], r["Lower Limit"], r["Upper Limit"], r["Output Type"])
            assert not is_correct(result, r["Original Ground Truth Answer"], None, None, r["Output Type"]), r["uid"]
        else:
            assert result is None
    # unchanged rows keep the upstream explanation, and `original` keeps it for every row
    same = full[~full["Label Status"].isin(["corrected", "abstain"])]
    assert (same["Explanation Source"] == "upstream").all()
    assert same["Ground Truth Explanation"].tolist() == original.loc[same["uid"]].tolist()
    view = rc.explanations_view(full, t.combined("original"))
    assert view[["source_known", "source_fits_label", "explanation_fits_source"]].all().all()
    # integer keys as upstream
    assert str(full["Row Number"].dtype) == "int64" and str(full["Calculator ID"].dtype) == "int64"
