"""The FTS paper's setting (target agents, t_n, d_n, P_N) and its rivals RGPE and TAF."""

import numpy as np
import pytest

from engine.fbo import FboConfig, Simulation, run_fbo
from engine.fbo.agents import AgentPool
from engine.fbo.meta import (expected_improvement, pair_disagreements, rgpe_weights, taf_acquisition,
                             taf_weights)
from engine.objectives import fts_synthetic
from engine.validation import ConfigError

BASE = dict(dataset="synthetic", agents=6, iterations=9, features=20, runs=2, n_init=1, dissimilarity=0.02,
            other_observations=5)


def test_dissimilarity_is_the_largest_gap_between_target_and_other():
    obj = fts_synthetic.build(4, 0.3, seed=1)
    gaps = np.abs(obj.values[1:] - obj.values[0]).max(axis=1)
    assert np.allclose(gaps, 0.3)
    assert obj.n_agents == 5


def test_pt_zero_uses_every_message_once_then_falls_back_to_the_own_gp():
    config = FboConfig(algorithm="fts", pt_schedule="constant", pt_constant=1.0, **BASE)
    sim = Simulation(config)
    list(sim)
    setting = sim.target_setting
    history = setting.history
    n_others = 6
    phi = sim.domain.phi
    for it in history[:n_others]:
        assert it["used"].all()
        expected = AgentPool.acquire(phi, np.take_along_axis(setting.messages, it["partner"][:, :, None], axis=1))
        assert np.array_equal(it["index"], expected)
    partners = np.stack([it["partner"] for it in history[:n_others]], axis=-1)       # (R, 1, N)
    assert all(sorted(p) == list(range(n_others)) for p in partners.reshape(-1, n_others))
    assert not any(it["used"].any() for it in history[n_others:])                    # P_N empty: own GP


def test_pt_one_fts_is_ts_draw_for_draw():
    fts = run_fbo(FboConfig(algorithm="fts", pt_schedule="constant", pt_constant=0.0, **BASE))
    ts = run_fbo(FboConfig(algorithm="ts", pt_schedule="constant", pt_constant=0.0, **BASE))
    assert np.array_equal(np.stack([r.metric for r in fts.records]), np.stack([r.metric for r in ts.records]))
    assert fts.records[-1].metric.shape == (2, 1)


def test_other_agents_used_with_decreasing_probability_and_p1_equals_p2():
    from engine.fbo.schedules import one_minus_pt
    assert one_minus_pt("sqrt", max(1, 2)) == one_minus_pt("sqrt", 2)


def test_dissimilarity_needs_synthetic_and_the_target_setting():
    with pytest.raises(ConfigError) as err:
        FboConfig(algorithm="fts", dataset="landmine", dissimilarity=0.1)
    assert err.value.field == "dissimilarity"
    with pytest.raises(ConfigError):
        FboConfig(algorithm="dp-fts-de", dissimilarity=0.1)
    with pytest.raises(ConfigError):
        FboConfig(algorithm="rgpe", fts_variant="concurrent")


def test_message_lengths():
    lengths = {a: FboConfig(algorithm=a, features=50).message_length for a in ("ts", "fts", "rgpe", "taf")}
    assert lengths == {"ts": 0, "fts": 50, "rgpe": 2550, "taf": 2551}


def test_rgpe_ranking_loss_and_weights_by_hand():
    y = np.array([0.0, 1.0, 2.0])
    # Sample 0 ranks like y (no disagreement); sample 1 reverses it (all 6 ordered pairs disagree).
    samples = np.array([[0.0, 3.0], [1.0, 2.0], [2.0, 1.0]])
    assert pair_disagreements(y, samples).tolist() == [0, 6]
    # Two other models and the target, S = 4 samples.
    losses = np.array([[0, 2, 4, 2],     # other 1
                       [1, 1, 4, 9],     # other 2: median 2.5, below the target's 95th percentile 2.85
                       [2, 1, 3, 2]])    # target
    # sample 0: other 1 wins; 1: other 2 and target tie at 1 -> target; 2: target (3); 3: other 1 and
    # target tie at 2 -> target.
    assert rgpe_weights(losses).tolist() == [0.25, 0.0, 0.75]
    # Other 1 not allowed: other 2 (1) beats the target (2) in sample 0.
    assert rgpe_weights(losses, allowed=np.array([False, True])).tolist() == [0.0, 0.25, 0.75]
    # A model whose median loss exceeds the target's 95th percentile is discarded.
    bad = np.array([[5, 0, 9, 9], [2, 1, 3, 2]])
    assert rgpe_weights(bad).tolist() == [0.0, 1.0]


def test_taf_acquisition_by_hand():
    y = np.array([0.0, 1.0])
    others = np.array([[0.0, 1.0], [1.0, 0.0]])            # agrees with y; reversed
    w = taf_weights(y, others, rho=0.5)
    # Ranking vectors over (0,1), (1,0): target [0, 1/2]; other 1 the same (d = 0 -> 3/4);
    # other 2 [1/2, 0] (d = sqrt(1/2) / 0.5 > 1 -> 0).
    assert np.allclose(w, [0.75, 0.0, 0.75])
    tm, tv, best = np.array([1.0]), np.array([1.0]), np.array(1.0)
    other_mean = np.array([[2.0], [5.0]])
    incumbents = np.array([0.5, 0.0])
    acq = taf_acquisition(w, tm, tv, best, other_mean, incumbents)
    ei = 1.0 / np.sqrt(2 * np.pi)                               # EI at mean = best, sigma = 1
    assert np.isclose(expected_improvement(1.0, 1.0, 1.0), ei)
    assert np.allclose(acq, [(0.75 * 1.5 + 0.75 * ei) / 1.5])


@pytest.mark.parametrize("algorithm", ["rgpe", "taf"])
def test_rgpe_and_taf_run_batched_over_runs_and_targets(algorithm):
    config = FboConfig(algorithm=algorithm, **dict(BASE, n_init=3))
    sim = Simulation(config)
    result = run_fbo(config)
    assert result.records[-1].metric.shape == (2, 1)
    list(sim)
    w = sim.target_setting.last_weights
    assert w.shape == (2, 1, 7) and np.all(w >= 0)


def test_every_line_says_how_many_numbers_each_agent_sends():
    from engine.fbo.variants import COMPARISON_DEFAULTS, build_variants

    values = dict(COMPARISON_DEFAULTS, algorithms=["ts", "fts", "rgpe", "taf"], features=30, dissimilarity=0.02)
    labels = [label for label, _ in build_variants(values)]
    assert labels == ["TS", "FTS (sends 30)", "RGPE (sends 930)", "TAF (sends 931)"]
    result = run_fbo(FboConfig(algorithm="taf", **dict(BASE, n_init=2)))
    assert result.to_json()["message_length"] == 20 + 400 + 1
