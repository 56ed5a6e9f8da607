"""The settings advisor: every setting meets the budget exactly, an impossible budget is one sentence naming what to
relax, the deployment equals the recommendation in all three forms, the search stops keeping what it found, the same
seed gives the same advice, and its parts (the proxy's draws, the main effects, the seed streams, DP-HYPE's k).

Small requests (6 agents, 3-4 iterations) in this process: the whole module takes about 30 s on the 2-core machine.
"""

from __future__ import annotations

import json
import math
import shlex
import tomllib

import numpy as np
import pytest

import dpbo
from engine.advise import AdviceRequest, advice_of_search, iter_search, request_cost
from engine.advise import task_of
from engine.advise.evaluate import SELECTION, SENSITIVITY, VALIDATION, request_base, seed_of
from engine.advise.evidence import DISCOVERY, REPLICATION
from engine.advise.search import Evaluation, main_effects
from engine.advise.space import calibrated_z, grid, levels, noise_levels, spent
from engine.cancel import Cancelled, CancelToken, cancellable
from engine.cli import build_parser, main
from engine.cli.fbo import config_from_args
from engine.executor import Executor, use
from engine.fbo.plan import make_plan
from engine.flower.run_config import run_settings
from engine.flower.settings import fbo_config
from engine.hype.calibration import calibrate_sigma
from engine.objectives import proxy, synthetic
from engine.objectives.proxy import _axis_root
from engine.validation import ConfigError

LOCAL = Executor("local")
TINY = dict(agents=6, iterations=4, epsilon=4.0, sensitivity=False)


@pytest.fixture(scope="module")
def advice():
    """One small advice, computed once for the module (about 1.5 s)."""
    return dpbo.advise(executor=LOCAL, progress=False, **TINY)


def test_every_setting_searched_meets_the_budget_exactly_under_the_products_accountant(advice):
    request = AdviceRequest(**TINY)
    n, delta = request.n_agents, request.resolved_delta
    qs = levels("synthetic", n)["q"]
    noise = noise_levels(request.epsilon, qs, request.iterations, delta, n)
    assert set(noise) == set(qs)
    for q, z in noise.items():
        eps = spent(q, z, request.iterations, delta, n)
        assert request.epsilon * (1 - 1e-3) <= eps <= request.epsilon, (q, z, eps)
    rec = advice.recommended
    assert rec.z == noise[rec.knobs.q]
    assert advice.epsilon_spent == pytest.approx(request.epsilon, rel=1e-3) and advice.epsilon_spent <= 4.0
    # The deployment's own plan (the run plan every run of the product makes) calibrates the same z.
    plan = make_plan(advice.deployment)
    assert plan.z == rec.z and plan.final_epsilon == pytest.approx(advice.epsilon_spent, rel=1e-9)
    assert plan.config.accountant == "rdp" and plan.delta == delta


def test_a_budget_no_setting_meets_is_one_sentence_naming_what_to_relax(capsys):
    argv = ["advise", "--agents", "2", "--iterations", "1000", "--epsilon", "0.01", "--executor", "local"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No setting meets epsilon = 0.01") and err.count("\n") == 1 and "Traceback" not in err
    assert "relax epsilon to at least" in err and "lower T to at most" in err
    # What the sentence names is enough: the epsilon it gives, or the T it gives, is met at q = 1.
    floor = float(err.split("relax epsilon to at least ")[1].split(",")[0])
    most = int(err.split("lower T to at most ")[1].split(" ")[0])
    assert calibrated_z(floor, 1.0, 1000, 1e-5, 2) <= 1e4
    assert calibrated_z(0.01, 1.0, most, 1e-5, 2) <= 1e4
    with pytest.raises(ConfigError) as refused:
        dpbo.advise(agents=2, iterations=1000, epsilon=0.01, executor=LOCAL, progress=False)
    assert refused.value.field == "epsilon"


def test_the_export_of_a_recommendation_equals_the_recommendation(advice, tmp_path):
    rec, deployment = advice.recommended, advice.deployment
    wanted = dict(rec.knobs.fields(), agents=6, iterations=4, delta=advice.delta, budget=4.0, calibrate_z=True)
    assert {name: getattr(deployment, name) for name in wanted} == wanted
    parser = build_parser()
    # The configuration file, read by the fbo command's --config.
    path = tmp_path / "advice.json"
    path.write_text(advice.config_text())
    from_file = config_from_args(parser.parse_args(["fbo", "--config", str(path)]))
    assert from_file == deployment
    # The command line.
    argv = shlex.split(advice.command_line)
    assert argv[:4] == ["python", "-m", "engine", "fbo"]
    assert config_from_args(parser.parse_args(argv[3:])) == deployment
    # The Flower app: its run config plans the same run (the same z, spending the same epsilon).
    advice.export_flower(str(tmp_path / "app"))
    pyproject = tomllib.loads((tmp_path / "app" / "pyproject.toml").read_text())
    settings = run_settings(pyproject["tool"]["flwr"]["app"]["config"], "fbo")
    exported = fbo_config(settings)
    for name, value in wanted.items():
        assert getattr(exported, name) == value, name
    assert make_plan(exported).z == rec.z and settings["dim"] == 1
    # The page's zip holds the same app.
    assert len(advice.flower_zip()) > 1000


def test_the_command_line_prints_the_recommendation_and_reads_the_same_fields_from_config(tmp_path, capsys):
    config = tmp_path / "request.json"
    config.write_text(json.dumps({"agents": 6, "iterations": 4, "epsilon": 4.0, "sensitivity": False}))
    assert main(["advise", "--config", str(config), "--executor", "local"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"q", "z", "S", "P", "pt_schedule", "utility", "stderr"} <= set(out["recommended"])
    assert set(out["references"]) == {"fts-de", "ts"} and out["complete"] and out["stopped"] is None
    assert out["deploy"]["command_line"].startswith("python -m engine fbo --agents 6 --iterations 4")
    # The same fields through the API give the same advice (same seed, same numbers).
    assert dpbo.advise(executor=LOCAL, progress=False, **TINY).to_json() == out


def test_the_search_stops_when_asked_and_keeps_what_it_found():
    stopped = dpbo.advise(executor=LOCAL, progress=False, callback=lambda a: a.search["tasks_done"] >= 20, **TINY)
    assert stopped.stopped == "callback" and not stopped.complete
    assert stopped.search["tasks_done"] == 20 < stopped.search["tasks_planned"]
    assert stopped.recommended is not None and stopped.deployment is not None
    assert stopped.recommended.knobs in grid("synthetic", 6)
    # Cancelled from outside (Stop on the page, the time limit): the last state is still an answer.
    token, last = CancelToken(), None
    with pytest.raises(Cancelled), cancellable(token), use(LOCAL):
        for last in iter_search(AdviceRequest(**TINY)):
            if last.tasks_done == 30:
                token.cancel()
    advice = advice_of_search(last, "interrupted")
    assert advice.stopped == "interrupted" and advice.recommended is not None and last.tasks_done == 30
    assert advice.to_json()["recommended"]["epsilon"] == pytest.approx(4.0, rel=1e-3)


def test_the_price_counts_every_run_and_the_host_refuses_too_large_a_search():
    small, large = request_cost(AdviceRequest(**TINY), executor=LOCAL), request_cost(AdviceRequest(agents=50))
    assert 0 < small.seconds < large.seconds
    # Effort 2 doubles the search's runs; what does not double (the calibrations, each worker's privacy curves and
    # start) is about a fifth of effort 1's price.
    assert request_cost(AdviceRequest(agents=50, effort=2)).seconds > 1.7 * large.seconds
    with pytest.raises(ConfigError) as refused:
        dpbo.advise(agents=50, limits=dpbo.Limits(seconds=10))
    assert refused.value.field == "agents" and "search" in str(refused.value)


def test_the_pages_default_request_fits_a_hosted_servers_limits(monkeypatch):
    from engine.limits import HostLimits, check
    from ui.advise import controls

    monkeypatch.setenv("DPBO_HOSTED", "1")
    values = {name: param.default for name, param in controls.PARAMS.items()}
    request = controls.request_of(values)
    assert request == AdviceRequest(agents=50, iterations=40, epsilon=4.0, delta=1e-5)     # the command's request
    check(request_cost(request, executor=controls.executor_of(values)), HostLimits.from_env())


def test_a_proxy_with_the_synthetic_numbers_is_the_synthetic_task():
    task, same = synthetic.build(20, None, 4), proxy.build(proxy.Proxy(), 20, 4)
    assert np.array_equal(task.values, same.values) and task.noise_var == same.noise_var
    two = proxy.build(proxy.Proxy(dimension=2, lengthscale=0.2, heterogeneity=0.5), 5, 1)
    assert two.candidates.shape == (32 * 32, 2) and two.values.shape == (5, 32 * 32)
    assert not np.array_equal(two.values[0], two.values[1])            # heterogeneous agents differ
    # The grid draw's square root is exact: R R^T is the SE kernel matrix of the axis.
    root = _axis_root(10, 0.3)
    axis = np.linspace(0, 1, 10)
    gram = np.exp(-0.5 * ((axis[:, None] - axis[None, :]) / 0.3) ** 2)
    np.testing.assert_allclose(root @ root.T, gram, atol=1e-7)
    with pytest.raises(ConfigError) as bad:
        AdviceRequest(dataset="landmine", lengthscale=0.1)
    assert bad.value.field == "lengthscale"


def test_the_main_effects_of_an_additive_loss_are_recovered_exactly():
    effect = {"q": {0.1: 0.3, 0.25: 0.0, 1.0: -0.2}, "S": {5.5: 0.1, 11.0: 0.0, 22.0: 0.05},
              "P": {1: 0.0, 2: -0.1}, "pt_schedule": {"sqrt": 0.2, "linear": 0.0, "square": -0.05}}
    evaluations = []
    for knobs in grid("synthetic", 6):
        loss = 1.0 + sum(effect[name][getattr(knobs, name)] for name in effect)
        e = Evaluation(knobs.label(), {}, knobs)
        e.add(SELECTION, [0, 1], np.full((2, 3), loss))
        evaluations.append(e)
    predicted = main_effects(evaluations, 2)
    for e in evaluations:
        assert predicted[e.key] == pytest.approx(e.losses(SELECTION).mean(), abs=1e-12)


def test_the_seed_streams_never_share_a_seed():
    request = AdviceRequest(**TINY)
    task = task_of(request).task
    base = request_base(request.seed, task, request.epsilon)
    assert base == request_base(0, task_of(AdviceRequest(**TINY)).task, 4.0)            # the same request, the same
    assert base != request_base(0, task_of(request.replace(agents=7)).task, 4.0)       # another N, other draws
    search = [{seed_of(base, s, i, part) for i in range(500)} for s in (SELECTION, VALIDATION, SENSITIVITY)
              for part in (0, 1)]
    judged = [{seed_of(0, s, i, part) for i in range(500)} for s in (DISCOVERY, REPLICATION) for part in (0, 1)]
    seeds = search + judged
    assert sum(len(s) for s in seeds) == len(set().union(*seeds)) == 10 * 500


def test_dp_hype_advice_gives_k_and_the_noise_for_the_clients():
    advice = dpbo.advise(algorithm="dp-hype", agents=20, candidates=10, good=2, epsilon=1.0, progress=False)
    assert advice.k in (1, 2, 3, 5, 10) and advice.k not in advice.tied
    assert advice.sigma == calibrate_sigma(1.0, 1e-5, advice.k)
    assert advice.per_client == pytest.approx(advice.sigma / math.sqrt(20))
    assert 0 <= advice.success <= 1 and advice.config.k == advice.k and advice.config.epsilon == 1.0
    best = max(row["success_rate"] for row in advice.table)
    assert [row["success_rate"] for row in advice.table if row["k"] == advice.k] == [best]
    assert advice.to_json()["deploy"]["command_line"].startswith("python -m engine hype")


def test_the_summary_says_what_the_paired_references_show(advice):
    ts, clear = advice.references["ts"], advice.references["fts-de"]
    first, second = advice.summary()
    if ts.p >= 0.05:
        assert "cannot be told apart from every agent alone" in first and f"{-ts.difference:+.3g}" in first
    else:
        assert ("does worse than every agent alone" in first) == (ts.difference < 0)
    assert ("Privacy costs nothing measurable" in second) == (clear.p >= 0.05)
    assert advice.to_json()["summary"] == [first, second]
