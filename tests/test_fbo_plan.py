"""The run plan (engine.fbo.plan): what the simulation runs is what the plan said, before any iteration."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fbo import FboConfig, Simulation
from engine.fbo.plan import make_plan, resolve_agents
from engine.privacy import calibrate_z, default_delta, epsilon, epsilon_curve, releases_within_budget
from engine.validation import ConfigError

SMALL = dict(agents=12, iterations=6, runs=2, features=20, n_init=3)


@pytest.mark.parametrize("changes", [
    dict(algorithm="dp-fts-de"),
    dict(algorithm="dp-fts-de", budget=2.0),                                   # the server stops early
    dict(algorithm="dp-fts", budget=3.0, calibrate_z=True, accountant="rdp"),  # z chosen to end at the budget
    dict(algorithm="fts-de"),
    dict(algorithm="ts"),
], ids=["dp", "stop", "calibrate", "no-dp", "no-server"])
def test_the_simulation_runs_its_plan(changes):
    config = FboConfig(**SMALL, **changes)
    sim = Simulation(config)
    plan = make_plan(config, sim.objective)
    assert sim.plan.n_agents == plan.n_agents == 12 and sim.plan.delta == plan.delta == default_delta(12)
    assert sim.plan.z == plan.z and sim.plan.releases == plan.releases
    assert sim.plan.budget_reached_at == plan.budget_reached_at
    records = list(sim)
    result = sim.result()
    assert result.z == plan.z and result.budget_reached_at == plan.budget_reached_at
    assert [r.epsilon for r in records] == [plan.epsilon_after(r.iteration) for r in records]
    assert sum(bool(r.released) for r in records) == plan.releases


def test_a_budget_stops_the_releases_where_the_curve_crosses_it():
    config = FboConfig(**SMALL, algorithm="dp-fts-de", budget=4.5)
    plan = make_plan(config)
    curve = epsilon_curve(config.q, config.z, config.iterations, plan.delta, config.accountant)
    allowed = releases_within_budget(curve, 4.5)
    assert 0 < allowed < config.iterations   # the case this test is about
    assert plan.releases == plan.budget_reached_at == allowed
    assert plan.final_epsilon == pytest.approx(curve[allowed - 1]) and plan.final_epsilon <= 4.5


def test_calibration_ends_the_run_at_the_budget():
    config = FboConfig(**SMALL, algorithm="dp-fts-de", budget=3.0, calibrate_z=True, accountant="rdp")
    plan = make_plan(config)
    assert plan.z == calibrate_z(3.0, config.q, 6, plan.delta, "rdp", n_agents=12) != config.z
    assert plan.final_epsilon == pytest.approx(epsilon(config.q, plan.z, 6, plan.delta, "rdp"))
    assert plan.final_epsilon == pytest.approx(3.0, rel=1e-3)
    assert plan.budget_reached_at == config.iterations
    with pytest.raises(ValueError):
        plan.epsilon_curve[0] = 0.0   # a plan is read-only


def test_a_plan_needs_no_data(monkeypatch, tmp_path):
    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path))   # no LandmineData.mat anywhere
    plan = make_plan(FboConfig(dataset="landmine", agents=None, iterations=60, runs=10, features=100))
    assert plan.n_agents == 29 and plan.delta == default_delta(29)
    assert plan.cost.seconds > 0 and plan.cost.memory_mb > 0


def test_impossible_runs_are_refused_by_field():
    with pytest.raises(ConfigError) as err:
        resolve_agents(FboConfig(dataset="digits-svm", agents=None, P=20))   # the task has 10 agents
    assert err.value.field == "P"


def test_the_plan_prices_the_objective_it_is_given():
    config = FboConfig(**SMALL)
    sim = Simulation(config)
    with_objective, without = make_plan(config, sim.objective), make_plan(config)
    # The synthetic grid has 1000 candidates; without the objective the largest table is assumed.
    assert with_objective.cost.seconds < without.cost.seconds
    assert np.array_equal(with_objective.epsilon_curve, without.epsilon_curve)
