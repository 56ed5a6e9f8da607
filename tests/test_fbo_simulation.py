"""The federated BO simulation: API contract, determinism, privacy bookkeeping, every algorithm and domain."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fbo import ALGORITHMS, FboConfig, FboResult, IterationRecord, ServerStep, Simulation, run_fbo
from engine.objectives import build_objective
from engine.objectives.base import TableObjective
from engine.privacy import default_delta, epsilon
from engine.validation import ConfigError

SMALL = dict(dataset="synthetic", agents=12, iterations=6, features=20, runs=2, n_init=4)


def _cfg(**changes) -> FboConfig:
    return FboConfig(**{**SMALL, **changes})


def _grid_objective(n_agents=8, side=20, seed=0) -> TableObjective:
    """A small 2-D table: shifted bumps, one per agent."""
    rng = np.random.default_rng(seed)
    axis = np.linspace(0, 1, side)
    X = np.stack(np.meshgrid(axis, axis, indexing="ij"), -1).reshape(-1, 2)
    centres = np.clip(np.array([0.7, 0.3]) + 0.05 * rng.normal(size=(n_agents, 2)), 0, 1)
    values = np.exp(-((X[None] - centres[:, None]) ** 2).sum(-1) / 0.05)
    return TableObjective(name="bumps", n_agents=n_agents, dim=2, noise_std=0.01, reference=values.max(axis=1),
                          lengthscale=0.2, noise_var=1e-4, candidates=X, values=values)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("own_sampler", ["authors", "pathwise", "shared"])
def test_every_algorithm_produces_valid_records(algorithm, own_sampler):
    P = 2 if algorithm in ("fts-de", "dp-fts-de") else 1
    result = run_fbo(_cfg(algorithm=algorithm, P=P, own_sampler=own_sampler))
    assert isinstance(result, FboResult)
    assert [r.iteration for r in result.records] == list(range(7))
    for prev, rec in zip(result.records, result.records[1:]):
        assert rec.metric.shape == (2, 12)
        # Regret against each agent's own maximum: never negative, never worse than before.
        assert np.all(rec.metric >= -1e-12)
        assert np.all(rec.metric <= prev.metric + 1e-12)
    assert result.curve.shape == (7,) and result.curve_stderr.shape == (7,)
    assert result.wall_seconds > 0


def test_same_seed_gives_identical_records_and_another_seed_does_not():
    cfg = _cfg(algorithm="dp-fts-de", P=2, q=0.5)
    a, b = run_fbo(cfg), run_fbo(cfg)
    for ra, rb in zip(a.records, b.records):
        assert np.array_equal(ra.metric, rb.metric)
        assert ra.epsilon == rb.epsilon
        assert np.array_equal(ra.n_selected, rb.n_selected) if ra.n_selected is not None else rb.n_selected is None
    assert a.to_json()["curve"] == b.to_json()["curve"]
    c = run_fbo(cfg.replace(seed=1))
    assert not all(np.array_equal(ra.metric, rc.metric) for ra, rc in zip(a.records, c.records))


def test_simulation_is_lazy_and_can_stop_early():
    sim = Simulation(_cfg(algorithm="fts-de", P=2))
    assert sim.n_agents == 12 and sim.metric_label == "simple regret"
    assert sim.delta == pytest.approx(default_delta(12))
    records = []
    for record in sim:
        assert isinstance(record, IterationRecord)
        records.append(record)
        if record.iteration == 2:
            break
    partial = sim.result()
    assert len(partial.records) == 3 and not sim.done
    # Iterating again replays what exists and continues to the end.
    assert [r.iteration for r in sim] == list(range(7))
    assert sim.result().records[2] is records[2]


def test_privacy_loss_per_record_follows_the_accountant():
    cfg = _cfg(algorithm="dp-fts-de", P=2, q=0.5, z=1.0, iterations=5)
    result = run_fbo(cfg)
    delta = default_delta(12)
    assert result.epsilon[0] == 0.0
    for t in range(1, 6):
        assert result.epsilon[t] == pytest.approx(epsilon(0.5, 1.0, t, delta, cfg.accountant), rel=1e-9)
    assert all(r.released for r in result.records[1:]) and not result.records[0].released
    payload = result.to_json()
    assert payload["budget_reached_at"] is None and payload["delta"] == pytest.approx(delta)


def test_non_private_algorithms_report_no_epsilon():
    for algorithm in ("ts", "fts", "fts-de"):
        payload = run_fbo(_cfg(algorithm=algorithm, P=1, iterations=2)).to_json()
        assert payload["epsilon"] is None
        assert all(c is None for c in payload["clipped_fraction"])


def test_budget_stops_releases_and_agents_continue_alone():
    cfg = _cfg(algorithm="dp-fts-de", P=2, q=0.5, z=1.0, iterations=8, budget=6.0)
    sim = Simulation(cfg)
    k = sim.releases_allowed
    assert 0 < k < 8
    result = run_fbo(cfg)
    assert result.budget_reached_at == k
    eps = result.epsilon
    assert eps[k] <= 6.0 and all(e == eps[k] for e in eps[k:])
    assert [r.released for r in result.records[1:]] == [True] * k + [False] * (8 - k)
    assert all(r.server_step is None for r in result.records[k + 1:])


def test_calibrated_z_ends_at_the_budget():
    cfg = _cfg(algorithm="dp-fts", P=1, q=0.5, iterations=5, budget=4.0, calibrate_z=True)
    result = run_fbo(cfg)
    assert result.z != cfg.z
    assert result.epsilon[-1] <= 4.0
    assert result.epsilon[-1] == pytest.approx(4.0, rel=0.01)
    assert result.budget_reached_at == 5
    assert result.to_json()["config"]["z"] == result.z


def test_server_step_of_run_zero_is_recorded_and_clipped():
    cfg = _cfg(algorithm="dp-fts-de", P=3, q=0.6, S=1.0, iterations=3)
    result = run_fbo(cfg)
    for rec in result.records[1:]:
        step = rec.server_step
        assert isinstance(step, ServerStep)
        assert step.vectors.shape == (12, 20) and step.broadcast.shape == (3, 20)
        assert rec.weights.shape == (3, 12) and np.allclose(rec.weights.sum(axis=1), 1)
        norms = np.linalg.norm(step.clipped_vectors[step.selected], axis=1)
        assert np.all(norms <= 1.0 / np.sqrt(3) + 1e-12)
        assert rec.n_selected.shape == (2,) and rec.n_selected[0] == step.selected.sum()
        # S = 1 is far below the vectors' norms (about sqrt(M)): nearly everything is clipped.
        assert rec.clipped_fraction > 0.5


def test_fixed_size_sampling_selects_round_Nq_in_the_simulation():
    result = run_fbo(_cfg(algorithm="dp-fts-de", P=2, q=0.25, sampling="fixed", accountant="rdp", iterations=2))
    for rec in result.records[1:]:
        assert np.all(rec.n_selected == 3)


def test_fts_target_draws_each_other_agent_at_most_once():
    # 1 - p_t = 1 always: every target keeps borrowing until its P_N is empty (N - 1 = 3 messages).
    cfg = _cfg(algorithm="fts", fts_variant="target", agents=4, iterations=6, pt_schedule="constant", pt_constant=1.0)
    sim = Simulation(cfg)
    list(sim)
    setting = sim.target_setting
    assert np.all(setting.used == 3)
    assert np.all(setting.order[:, :, :3] != np.arange(4)[None, :, None])       # never oneself


def test_continuous_domain_and_two_dimensional_table_work():
    result = run_fbo(_cfg(algorithm="dp-fts-de", P=2, domain="continuous"))
    assert np.all(np.isfinite(result.curve)) and result.curve[-1] <= result.curve[0]
    objective = _grid_objective()
    cfg = FboConfig(algorithm="fts-de", agents=None, P=4, iterations=8, features=30, runs=2, n_init=3)
    sim = Simulation(cfg, objective)
    assert sim.n_agents == 8 and sim.lengthscale == 0.2 and sim.noise_var == 1e-4
    result = run_fbo(cfg, objective)
    assert result.curve[-1] < result.curve[0]


def test_initial_points_lie_in_the_assigned_subregion():
    objective = _grid_objective()
    sim = Simulation(FboConfig(algorithm="fts-de", agents=None, P=4, iterations=1, features=10, runs=3, n_init=5),
                     objective)
    sim.step()
    choice = sim.domain.initial_choice(sim.assignment, 5, np.random.default_rng(0))   # (R, N, n)
    regions = sim.subregions.index(objective.candidates[choice])
    assert np.array_equal(regions, np.broadcast_to(sim.assignment[None, :, None], regions.shape))
    anywhere = sim.domain.initial_choice(None, 50, np.random.default_rng(0))
    assert len(np.unique(sim.subregions.index(objective.candidates[anywhere]))) == 4


def test_synthetic_objective_matches_the_appendix():
    obj = build_objective("synthetic", seed=3)
    assert obj.n_agents == 200 and obj.values.shape == (200, 1000)
    assert obj.noise_std ** 2 == pytest.approx(0.01) and obj.lengthscale == 0.03
    assert np.allclose(obj.candidates[:, 0], np.linspace(0, 1, 1000))
    # Every agent's value is the base function (scaled to [0, 1]) +- 0.02. With 200 agents both
    # signs occur at every input (all alike has probability 2^-199), so the base is min + 0.02.
    base = obj.values.min(axis=0) + 0.02
    assert np.allclose(np.abs(obj.values - base), 0.02)
    assert base.min() == pytest.approx(0.0, abs=1e-12) and base.max() == pytest.approx(1.0, abs=1e-12)
    # Each sign with probability 1/2: 200,000 draws, std of the share 0.1 %.
    assert 0.49 < (obj.values > base).mean() < 0.51
    assert np.array_equal(obj.reference, obj.values.max(axis=1))
    hetero = build_objective("synthetic", n_agents=5, alpha=0.7, seed=3)
    assert np.ptp(hetero.values.argmax(axis=1)) > 0  # heterogeneous agents peak in different places


def test_curve_stderr_is_the_standard_error_of_per_run_means():
    result = run_fbo(_cfg(algorithm="fts-de", P=2, runs=4))
    for record, se in zip(result.records, result.curve_stderr):
        run_means = record.metric.mean(axis=1)           # agents of a run are not independent replicates
        assert se == pytest.approx(run_means.std(ddof=1) / np.sqrt(4), rel=1e-12)
    np.testing.assert_allclose(result.run_curves.mean(axis=0), result.curve)
    one = run_fbo(_cfg(algorithm="ts", runs=1))
    assert np.all(np.isnan(one.curve_stderr)) and all(v is None for v in one.to_json()["curve_stderr"])


def test_agents_never_query_a_table_point_twice():
    # The authors' agents replace a repeated query by a random point (bayesian_optimization_dp_fts_de.py:212-215).
    objective = _grid_objective(side=6)          # 36 candidates, 3 initial + 20 queries per agent
    sim = Simulation(FboConfig(algorithm="dp-fts-de", agents=None, P=2, iterations=20, features=10, runs=2,
                               n_init=3, q=0.5), objective)
    list(sim)
    assert np.all(sim.pool._visited.sum(axis=2) == 23)   # noqa: SLF001 - 23 distinct candidates each


def test_own_gp_hyperparameters_follow_the_task():
    objective = _grid_objective()
    sim = Simulation(FboConfig(algorithm="ts", agents=None, iterations=6, features=10, runs=2, n_init=5), objective)
    list(sim)
    assert sim.refit_every == 5 and sim.pool.own.fits == 2            # at 5 and 10 observations
    assert not np.allclose(sim.pool.own.hyperparameters.lengthscale, 1.0)
    synthetic = Simulation(_cfg(algorithm="ts"))
    list(synthetic)
    assert synthetic.refit_every == 0 and synthetic.pool.own.fits == 0
    assert np.allclose(synthetic.pool.own.hyperparameters.lengthscale, 0.03)   # the generating value
    assert synthetic.pool.shared is None                     # TS sends nothing: no shared-feature model


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError):
        _cfg(own_sampler="exact")
    with pytest.raises(ConfigError):
        _cfg(split="authors")                                # a landmine-only option
    with pytest.raises(ConfigError):
        _cfg(refit_every=-1)
    with pytest.raises(ConfigError):
        Simulation(_cfg(algorithm="fts-de", agents=None, P=3), _grid_objective(n_agents=2))
    with pytest.raises(ConfigError):
        _cfg(q=0)
    with pytest.raises(ConfigError):
        _cfg(calibrate_z=True)


def test_each_release_records_its_broadcasts_norm_and_how_many_agents_it_chose_for():
    config = FboConfig(agents=4, iterations=3, P=1, features=6, n_init=2, q=0.5, z=1.0, runs=5, seed=1)
    result = run_fbo(config)
    norms, used = result.per_release("broadcast_norm"), result.per_release("used_broadcast")
    assert norms.shape == used.shape == (5, 3)
    step = result.records[1].server_step                        # run 0's first release
    assert norms[0, 0] == pytest.approx(np.linalg.norm(step.broadcast))
    assert np.all((0 <= used) & (used <= 4)) and used[:, 0].tolist() == [4] * 5     # 1 - p_1 = 1: all use it
    assert run_fbo(config.replace(algorithm="ts")).per_release("broadcast_norm").shape == (5, 0)
