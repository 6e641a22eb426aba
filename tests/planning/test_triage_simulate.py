"""Error model, allocation policies and replay study (issue 17): synthetic cases worked out by hand,
recovery of known rates, and the stage on the real adjudicated rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from medcalc_maintained.planning import allocation, replay
from medcalc_maintained.planning import error_model as em
from medcalc_maintained.planning import simulate as sim
from medcalc_maintained.stages import triage_simulate as stage

CFG = em.ModelConfig(signals=("s",), prior_rate=0.2, prior_sd_mu=2.0, prior_sd_beta=2.5, tau=1.5)


def _synthetic(rates, n_per, beta, seed):
    """Rows of calculators with known base rates (on the logit scale) and one binary signal."""
    rng = np.random.default_rng(seed)
    calc = np.repeat(np.arange(len(rates)), n_per)
    x = (rng.random(len(calc)) < 0.3).astype(float)[:, None]
    logits = np.log(np.array(rates) / (1 - np.array(rates)))[calc] + beta * x[:, 0]
    y = (rng.random(len(calc)) < 1 / (1 + np.exp(-logits))).astype(float)
    return x, calc, y


def test_model_recovers_known_signal_effect_and_calculator_rates():
    rates, beta = [0.05, 0.2, 0.5, 0.8, 0.1, 0.35], 2.0
    x, calc, y = _synthetic(rates, 400, beta, seed=3)
    m = em.fit(x, calc, y, len(rates), CFG)
    assert m.beta[0] == pytest.approx(beta, abs=0.3)
    # the rate of the calculator among its rows without the signal: the base rate given above
    p0 = m.predict(np.zeros((len(rates), 1)), np.arange(len(rates)))
    assert np.abs(p0 - rates).max() < 0.06
    # per-calculator shares with intervals: each interval holds the calculator's true expected share
    known = np.full(len(y), np.nan)
    table, total = em.rate_intervals(m, x, calc, known, draws=2000, seed=0)
    true_share = [np.mean(1 / (1 + np.exp(-(np.log(r / (1 - r)) + beta * x[calc == c, 0])))) for c, r in enumerate(rates)]
    assert ((table["release_lo"] <= true_share) & (true_share <= table["release_hi"])).all()
    assert total["rows"] == len(y) and total["ci95"][0] < np.mean(true_share) < total["ci95"][1]


def test_pooling_pulls_a_small_calculator_towards_the_others():
    x, calc, y = _synthetic([0.3] * 5, 200, 0.0, seed=1)
    # one more calculator with two rows, both wrong: its own rate would be 1.0
    x = np.vstack([x, np.zeros((2, 1))])
    calc = np.concatenate([calc, [5, 5]])
    y = np.concatenate([y, [1.0, 1.0]])
    p = em.fit(x, calc, y, 6, CFG).predict(np.zeros((1, 1)), np.array([5]))[0]
    assert 0.3 < p < 0.8


def test_no_adjudicated_rows_gives_the_prior_rate():
    m = em.fit(np.zeros((0, 1)), np.zeros(0, dtype=int), np.zeros(0), 3, CFG)
    assert m.predict(np.zeros((3, 1)), np.arange(3)) == pytest.approx([0.2] * 3)


def test_brier_and_reliability_on_a_hand_case():
    p = np.array([0.05, 0.15, 0.95, 0.85])
    y = np.array([0, 1, 1, 1])
    assert em.brier(p, y) == pytest.approx((0.05 ** 2 + 0.85 ** 2 + 0.05 ** 2 + 0.15 ** 2) / 4)
    rel = em.reliability(p, y)
    assert rel["rows"].tolist() == [1, 1, 1, 1] and rel["observed"].tolist() == [0, 1, 1, 1]


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (2.0, 1.0), (1.5, 1.5), (3.0, 9.0)])
def test_information_gain_is_the_mutual_information_of_a_beta_bernoulli(a, b):
    from scipy import integrate  # (imported here: scipy.integrate costs every xdist worker 0.7 s at collection)
    from scipy.stats import beta as beta_dist

    def h(t):
        return -(t * np.log(t) + (1 - t) * np.log(1 - t))

    expected_h = integrate.quad(lambda t: h(t) * beta_dist.pdf(t, a, b), 0, 1)[0]
    mean = a / (a + b)
    assert allocation.beta_bernoulli_information(a, b) == pytest.approx(h(mean) - expected_h, rel=1e-6)


# a tiny case: rows 0-2 of calculator 0, rows 3-4 of calculator 1, row 5 of calculator 2
CALC = np.array([0, 0, 0, 1, 1, 2])
P = np.array([0.9, 0.8, 0.7, 0.6, 0.2, 0.1])


def _state(**over):
    s = {"p": P, "calc": CALC, "available": np.ones(6, dtype=bool), "priority": np.array([1, 5, 3, 2, 4, 0.0]),
         "harm_weight": np.array([1, 1, 1, 4, 1, 10.0]), "wrong": np.array([5, 0, 1]), "right": np.array([5, 0, 0]),
         "a0": 1.0, "b0": 1.0}
    s.update(over)
    return s


def test_each_policy_picks_the_rows_worked_out_by_hand():
    rng = np.random.default_rng(0)
    # highest P(error): rows 0 and 1, then calculator 0 is at the cap of 2: row 3 (0.6), not row 2 (0.7)
    assert allocation.choose("p_error", _state(), 3, 2, rng) == [0, 1, 3]
    # current ranking: priorities 5, 4, 3 -> rows 1, 4, 2
    assert allocation.choose("ranking", _state(), 3, 2, rng) == [1, 4, 2]
    # expected harm p x weight: 2.4 (row 3), 1.0 (row 5), 0.9 (row 0)
    assert allocation.choose("harm", _state(), 3, 2, rng) == [3, 5, 0]
    # information: Beta(1,1) of unreviewed calculator 1 gains 0.193 nats, Beta(2,1) of calculator 2
    # 0.137, Beta(6,6) of calculator 0 0.040; the pick in calculator 1 is its less certain row 3
    # (p 0.6 vs 0.2), which moves it to Beta(1.5,1.5) = 0.140 > 0.137: row 4 next, then row 5
    assert allocation.choose("information", _state(), 3, 2, rng) == [3, 4, 5]
    # the same with a cap of 1 per calculator: one row of calculator 1, then calculator 2, then the
    # least certain row of calculator 0 (p 0.7: entropy 0.61 nats against 0.50 and 0.33)
    assert allocation.choose("information", _state(), 3, 1, rng) == [3, 5, 2]


def test_batches_skip_reviewed_rows_and_lift_the_cap_only_when_nothing_else_is_left():
    rng = np.random.default_rng(0)
    avail = np.array([True, True, True, False, False, False])
    assert allocation.choose("p_error", _state(available=avail), 3, 1, rng) == [0, 1, 2]
    picked = allocation.choose("uniform", _state(available=avail), 2, 1, rng)
    assert len(set(picked)) == 2 and set(picked) <= {0, 1, 2}


def test_ties_go_to_the_earlier_row_of_the_order():
    calc = np.array([0, 1, 2])
    assert allocation.greedy(np.ones(3), calc, np.ones(3, bool), 2, 5, order=np.array([2, 0, 1])) == [2, 0]


def test_replay_on_synthetic_rows_finds_more_than_uniform_and_learns_the_rates():
    rates = [0.05, 0.2, 0.5, 0.8]
    x, calc, y = _synthetic(rates, 60, 3.0, seed=7)
    u = replay.Universe(x, calc, y, priority=x[:, 0].copy(), harm_weight=np.ones(len(y)), true_harm=y.copy(),
                        n_calculators=4)
    cfg = replay.ReplayConfig(("p_error", "information", "uniform"), (1, 2, 3), batch=5, cap=3, max_reviews=60,
                              pool_fraction=0.9, prior_strength=2.0)
    curves = replay.run(u, cfg, CFG)
    found = {p: curves[p]["errors"][:, 30].mean() for p in cfg.policies}
    assert found["p_error"] > found["uniform"]
    for p in cfg.policies:
        est = curves[p]["estimation"].mean(axis=0)
        assert est[60] < est[0]
        assert (curves[p]["errors"][:, 60] <= 60).all()
    out = replay.summarise(curves, (25, 50))
    assert out["winner"]["errors"]["25"] == max(found, key=lambda k: curves[k]["errors"][:, 25].mean())
    assert set(out["at"]["uniform"]["estimation"]) == {"25", "50"}


def test_harm_weights_come_from_the_recompute_evidence_or_the_prior_never_the_relabel():
    # CURB-65 (id 45): 1 -> 2 changes care (home treatment -> short stay), so a recompute
    # aggregation mismatch proposing 2 is an L3 change; every other row gets the calculator's
    # prior, the mean weight of L1 up to its worst level
    from medcalc_maintained.calculators.severity import LEVELS
    from medcalc_maintained.calculators.thresholds import thresholds
    from medcalc_maintained.planning.impact import ImpactConfig

    icfg = ImpactConfig.from_section({"impact": {"weights": {"L0": 0.0, "L1": 1.0, "L2": 10.0, "L3": 100.0},
                                                 "saturation": 6.0}}, "params.yaml")
    top = LEVELS.index(thresholds()[45].max_level)
    prior = np.mean([1.0, 10.0, 100.0][:top])
    t = pd.DataFrame({"split": "test", "uid": [1, 2, 3, 4], "calculator_id": 45, "output_type": "integer",
                      "priority": 1.0,
                      "recompute_finding": ["aggregation_mismatch", "", "implausible_input", ""],
                      "relabel_status": ["", "", "", "labeled"], "relabel_label": [None, None, None, "3"]})
    instances = pd.DataFrame({"split": "test", "uid": [1, 2, 3, 4], "Ground Truth Answer": ["1", "4", "1", "1"]})
    rc = pd.DataFrame({"split": "test", "uid": [1, 3], "recomputed": ["2", "2"]})
    got = sim.expected_weights(t, instances, rc, icfg)
    # 1: the recompute's L3; 2: no evidence; 3: not an aggregation mismatch; 4: the relabel is ignored
    assert got.tolist() == pytest.approx([100.0, prior, prior, prior])
    assert sim.expected_weights(t, instances, None, icfg).tolist() == pytest.approx([prior] * 4)


def test_cli_help_and_a_bad_parameter_exit_2(project_root, monkeypatch):
    import yaml
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["triage", "simulate", "--help"])
    assert r.exit_code == 0 and "information gain" in r.output
    assert "simulate" in runner.invoke(app, ["triage", "--help"]).output
    params = yaml.safe_load((project_root / "params.yaml").read_text())
    params["triage_simulate"]["policies"] = ["p_error", "oracle"]
    (project_root / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.setenv("MEDCALC_ROOT", str(project_root))
    r = runner.invoke(app, ["triage", "simulate"])
    assert r.exit_code == 2 and "oracle" in r.output and "triage_simulate.policies" in r.output
    assert not (project_root / "data" / "triage" / "simulate").exists()
    params["triage_simulate"]["policies"] = ["p_error"]
    (project_root / "params.yaml").write_text(yaml.safe_dump(params))
    r = runner.invoke(app, ["triage", "simulate"])  # no triage queue yet
    assert r.exit_code == 2 and "queue.csv" in r.output and "dvc repro triage" in r.output


def test_the_true_harm_needs_the_maintained_change_severity(project_root):
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.project import Project

    p = Project.load(project_root)
    m = pd.read_parquet(p.maintained)
    queue = m[["split", "uid", "calculator_id"]].assign(calculator="c", priority=0.0)
    for c in sim.EVIDENCE_COLUMNS:
        if c not in queue.columns:
            queue[c] = ""
    p.triage_queue.parent.mkdir(parents=True, exist_ok=True)
    queue.to_csv(p.triage_queue, index=False)
    cfg = sim.SimulateConfig.from_project(p)
    assert len(stage.load_inputs(p, cfg)[0].table) == len(m)  # the real table passes
    m.drop(columns=["Change Severity"]).to_parquet(p.maintained, index=False)
    with pytest.raises(DataError) as exc:
        stage.load_inputs(p, cfg)
    assert "instances.parquet" in str(exc.value) and "Change Severity" in str(exc.value)
    uid = int(m["uid"].iloc[3])
    m.assign(**{"Change Severity": m["Change Severity"].astype(str).where(m["uid"] != uid, "L9")}).to_parquet(
        p.maintained, index=False)
    with pytest.raises(DataError) as exc:
        stage.load_inputs(p, cfg)
    assert "'L9'" in str(exc.value) and f"uid {uid}" in str(exc.value) and "Change Severity" in str(exc.value)
