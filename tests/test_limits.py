"""The one work limit (engine.limits): every default and preset is accepted, a refusal names the knob to lower,
the host's variables are read, and the CLI prices its runs."""

from __future__ import annotations

import dataclasses

import pytest

from engine.cli import main
from engine.fbo import FboConfig
from engine.fbo.plan import make_plan, resolve_agents
from engine.fbo.presets import PRESETS
from engine.fbo.teaching import teaching_config
from engine.fbo.variants import COMPARISON_DEFAULTS, build_variants, preset_values
from engine.hype import HypeConfig
from engine.limits import Cost, HostLimits, check, fbo_cost, hype_cost, pogpucb_cost, sweep_cost
from engine.pogpucb import PoConfig
from engine.sweep import SWEEP_PRESETS, SweepSpec, preset_spec, spec_cost
from engine.validation import ConfigError
from ui.hype import controls as hype_controls
from ui.pogpucb import controls as pogpucb_controls
from ui.sweep import controls as sweep_controls

DEFAULTS = HostLimits()


def defaults_of(params) -> dict:
    return {name: param.default for name, param in params.items()}


def comparison_cost(values) -> Cost:
    plans = [make_plan(cfg) for _, cfg in build_variants(values)]
    return sum((plan.cost for plan in plans[1:]), plans[0].cost)


@pytest.mark.parametrize("name", [None, "fig2a", "fig2c", "fig2d"])
def test_federated_bo_page_defaults_and_presets_are_accepted(name):
    values = dict(COMPARISON_DEFAULTS) if name is None else preset_values(name)
    check(comparison_cost(values), DEFAULTS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_paper_preset_run_is_accepted(name):
    # The engine's presets at full scale (what the CLI and the benchmarks run), each compared setting.
    for entry in [{}] + list(PRESETS[name]["compare"]):
        config = FboConfig(**dict(PRESETS[name]["base"], **entry))
        check(fbo_cost(config, resolve_agents(config)), DEFAULTS)


def test_teaching_view_dp_hype_and_po_gp_ucb_defaults_and_presets_are_accepted():
    check(fbo_cost(teaching_config(agents=100, P=2, t=3, q=0.5, z=1.0, S=11.0, seed=0), 100), DEFAULTS)
    for values in [defaults_of(hype_controls.PARAMS)] + [
            dict(defaults_of(hype_controls.PARAMS), **preset) for _, preset in hype_controls.PRESETS.values()]:
        check(hype_cost(hype_controls.config_of(values)), DEFAULTS)
    check(hype_cost(HypeConfig()), DEFAULTS)
    for values in [defaults_of(pogpucb_controls.PARAMS)] + [
            dict(defaults_of(pogpucb_controls.PARAMS), **pogpucb_controls.preset_values(name))
            for name in pogpucb_controls.PRESETS]:
        _, variants = pogpucb_controls.configs(values)
        costs = [pogpucb_cost(cfg) for _, cfg in variants]
        check(sum(costs[1:], costs[0]), DEFAULTS)
    check(pogpucb_cost(PoConfig()), DEFAULTS)


@pytest.mark.parametrize("name", [None] + sorted(SWEEP_PRESETS))
def test_sweep_page_default_and_presets_are_accepted(name):
    # The page runs sweeps on two joblib workers by default.
    spec = sweep_controls.spec_of(defaults_of(sweep_controls.PARAMS)) if name is None else preset_spec(name)
    check(spec_cost(spec, executor="joblib", workers=2), DEFAULTS, what="This sweep")


def test_a_refusal_names_the_knob_to_lower():
    wide = FboConfig(agents=50, iterations=300, runs=3, features=800)
    with pytest.raises(ConfigError) as err:
        check(fbo_cost(wide, 50), HostLimits(max_seconds=60, max_memory_mb=None))
    assert err.value.field == "features"
    assert "of computing (estimated); the limit here is 60 s. Lower the random features M" in str(err.value)

    crowd = FboConfig(agents=100_000, runs=50)
    with pytest.raises(ConfigError) as err:
        check(fbo_cost(crowd, 100_000), HostLimits(max_seconds=None))
    assert err.value.field == "agents" and "MB of memory" in str(err.value)

    votes = HypeConfig(repetitions=1_000_000, clients=10_000)
    with pytest.raises(ConfigError) as err:
        check(hype_cost(votes), DEFAULTS)
    assert err.value.field == "repetitions"

    cells = [fbo_cost(FboConfig(agents=2000), 2000)] * 3
    with pytest.raises(ConfigError) as err:
        check(sweep_cost(cells, workers=8, processes=True), HostLimits(max_seconds=None, max_memory_mb=4000),
              what="This sweep")
    assert err.value.field == "workers" and str(err.value).startswith("This sweep needs about")


def test_the_subject_and_what_to_have_fewer_of_read_as_a_sentence():
    cost = Cost(seconds=10.0, memory_mb=1.0, field="runs", knobs=("runs", "agents"))
    with pytest.raises(ConfigError) as err:
        check(cost, HostLimits(max_seconds=1.0), what="These 3 lines", fewer="lines")
    assert str(err.value) == ("These 3 lines need about 10 s of computing (estimated); the limit here is 1 s. "
                              "Compare fewer lines or lower the runs or the agents.")
    assert check(cost, HostLimits(max_seconds=10.0)) is cost


def test_estimates_grow_with_every_knob_that_drives_them():
    base = FboConfig(agents=50, iterations=30, runs=3)
    cost = fbo_cost(base, 50, 1000)
    for change in (dict(agents=100), dict(iterations=60), dict(runs=6), dict(features=100), dict(n_init=40)):
        bigger = fbo_cost(base.replace(**change), change.get("agents", 50), 1000)
        assert bigger.seconds > cost.seconds and bigger.memory_mb > cost.memory_mb, change
    hype = hype_cost(HypeConfig())
    for change in (dict(repetitions=4000), dict(clients=500), dict(candidates=200, good=5)):
        assert hype_cost(HypeConfig(**change)).seconds > hype.seconds, change
    po = pogpucb_cost(PoConfig())
    for change in (dict(runs=40), dict(iterations=100), dict(hyperparameters="refit")):
        assert pogpucb_cost(PoConfig(**change)).seconds > po.seconds, change
    assert sweep_cost([cost, cost]).seconds == pytest.approx(2 * cost.seconds)
    assert sweep_cost([cost, cost], workers=2).memory_mb == pytest.approx(2 * cost.memory_mb)


def test_host_limits_come_from_one_variable_each():
    assert HostLimits.from_env({}) == HostLimits()
    assert HostLimits.from_env({"DPBO_MAX_SECONDS": "30", "DPBO_MAX_MEMORY_MB": "512"}) == HostLimits(30.0, 512.0)
    assert HostLimits.from_env({"DPBO_MAX_SECONDS": "none"}).max_seconds is None
    for bad in ("abc", "-5", "0", "inf", "nan", ""):
        assert HostLimits.from_env({"DPBO_MAX_SECONDS": bad}) == HostLimits(), bad
    # The command line limits time only when the host asks.
    assert HostLimits.from_env({}, default_seconds=None).max_seconds is None
    assert HostLimits.from_env({"DPBO_MAX_SECONDS": "30"}, default_seconds=None).max_seconds == 30.0


def test_cli_refuses_work_above_the_limits_with_one_sentence(capsys, monkeypatch):
    monkeypatch.delenv("DPBO_MAX_SECONDS", raising=False)
    assert main(["fbo", "--agents", "100000", "--runs", "50"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: This run needs about") and "MB of memory" in err and err.count("\n") == 1
    monkeypatch.setenv("DPBO_MAX_SECONDS", "0.01")
    for argv in (["pogpucb", "--runs", "2", "--iterations", "5"], ["hype", "--repetitions", "200"],
                 ["sweep", "--tool", "toy", "--grid", "sleep=1,2", "--out", "never.csv", "--executor", "local"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "of computing (estimated); the limit here is 0.01 s" in err and err.count("\n") == 1, err


def test_cost_is_a_value():
    cost = Cost(seconds=1.0, memory_mb=2.0, field="runs")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cost.seconds = 3.0  # type: ignore[misc]
    total = cost + Cost(seconds=3.0, memory_mb=1.0, field="agents", knobs=("agents",))
    assert (total.seconds, total.memory_mb, total.field) == (4.0, 3.0, "agents")


def test_the_probes_heavy_requests_are_refused_before_any_work():
    """Issue 12, finding 3: what the old work limit let through is priced by every knob and refused."""
    from engine.limits import check_workers

    teaching = teaching_config(agents=100_000, P=2, t=3, q=0.5, z=1.0, S=11.0, seed=0)
    page = dict(COMPARISON_DEFAULTS)
    for what, cost in {"teaching agents=100000": fbo_cost(teaching, 100_000),
                       "n_init=20000": comparison_cost(dict(page, n_init=20_000)),
                       "features=800 iterations=300": comparison_cost(dict(page, features=800, iterations=300)),
                       }.items():
        with pytest.raises(ConfigError):
            check(cost, DEFAULTS)
    # The 10^13-vote DP-HYPE sweep of the probe (hype sweeps used to skip the check).
    spec = SweepSpec("hype", base=dict(clients=10_000, candidates=1000, repetitions=1_000_000),
                     axes=(("epsilon", (1.0,)),), runs=1)
    with pytest.raises(ConfigError, match="repetitions"):
        check(spec_cost(spec, executor="local"), DEFAULTS, what="This sweep")
    # 16 workers on a 2-core host: the cap is the host's (DPBO_MAX_WORKERS, default the cores).
    with pytest.raises(ConfigError, match="worker processes"):
        check_workers(16, HostLimits(max_workers=2))
    # DP-HYPE data mode with 719 clients and 2 runs took 49 s on the idle machine: priced above that.
    data = hype_cost(HypeConfig(mode="data", clients=719, runs=2))
    assert data.seconds >= 49 and data.memory_mb >= 719 * 1.6


def test_accounting_work_is_bounded_whatever_the_releases():
    from engine.limits import accountant_cost
    from engine.privacy.accountants import PLD_STEPWISE, RDP_POINTS, curve_counts

    for steps in (10, 64, 1000, 100_000):
        assert len(curve_counts(steps, "pld")) <= max(PLD_STEPWISE, steps if steps <= PLD_STEPWISE else 0)
        assert len(curve_counts(steps, "rdp")) <= RDP_POINTS and curve_counts(steps, "pld")[-1] == steps
    assert accountant_cost(100_000, ("ma", "rdp", "pld")).seconds < DEFAULTS.max_seconds
    with pytest.raises(ConfigError, match="releases T"):
        check(accountant_cost(100_000, ("pld",), curve=False, calibrations=3), HostLimits(max_seconds=30))
