"""DP-FTS-DE and DP-HYPE as Flower apps: the same mechanism as the engine, the export, and the audit bridge."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from engine.fbo.config import FboConfig
from engine.fbo.server import aggregate
from engine.fbo.subregions import Subregions
from engine.fbo.weights import subregion_weights
from engine.flower.randomness import server_generator
from engine.hype.config import HypeConfig
from engine.hype.voting import noisy_argmax, noisy_vote_sum, top_k_mask

ROOT = Path(__file__).resolve().parents[1]
BLOCK_FLWR = "import sys; sys.modules['flwr'] = None; "


def flower():
    """The Flower modules (CI installs flwr from requirements-dev.txt; skip only where it is missing)."""
    pytest.importorskip("flwr")
    from engine.flower import audit_targets, fbo_strategy, hype_strategy

    return fbo_strategy, hype_strategy, audit_targets


def fbo_reply(targets, index, vector):
    from flwr.app import Array, ArrayRecord, MetricRecord, RecordDict

    content = RecordDict({"omega": ArrayRecord({"omega": Array(np.asarray(vector, dtype=float))}),
                          "metrics": MetricRecord({"agent": index, "best": 0.5, "queries": 11})})
    return targets.offline_message(content, index + 1)


# ---------------------------------------------------------------------------------------------- export, no Flower
def test_export_and_engine_need_no_flower(tmp_path):
    code = (BLOCK_FLWR + "import engine.flower, engine.flower.export, engine.flower.audit, engine.cli.export, "
            "ui.fbo.results; "
            "from engine.cli import main; "
            f"sys.exit(main(['export', 'flower', '--tool', 'fbo', '--agents', '4', '--q', '0.5', '--iterations', '3', "
            f"'--out', r'{tmp_path / 'fbo'}']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    config = tomllib.loads((tmp_path / "fbo" / "pyproject.toml").read_text())
    run = config["tool"]["flwr"]["app"]["config"]
    assert (run["q"], run["agents"], run["iterations"], run["algorithm"]) == (0.5, 4, 3, "dp-fts-de")
    assert config["tool"]["flwr"]["app"]["components"]["serverapp"] == "dpftsde_app.server_app:app"
    assert "flwr run" in (tmp_path / "fbo" / "README.md").read_text()
    assert "evaluate = None" in (tmp_path / "fbo" / "dpftsde_app" / "client_app.py").read_text()


@pytest.mark.parametrize("fbo", [FboConfig(agents=5, P=2, n_init=4, features=30, pt_schedule="linear", seed=4),
                                 FboConfig(algorithm="dp-fts", agents=4, P=2, local_exploration=False),
                                 FboConfig(algorithm="fts-de", agents=6, P=3, pt_schedule="constant", pt_constant=0.3)])
def test_the_clients_settings_equal_the_configs_without_its_imports(fbo):
    from engine.flower.agent import agent_settings
    from engine.flower.settings import fbo_run_config, run_settings

    settings = agent_settings(run_settings(fbo_run_config(fbo), "fbo"))
    assert settings["P"] == fbo.n_subregions
    for name in ("features", "n_init", "pt_schedule", "pt_constant", "local_exploration", "seed"):
        assert settings[name] == getattr(fbo, name), name


def test_a_client_process_loads_no_accountant():
    # Flower starts a process per message: the agent's imports are paid every round by every node.
    code = ("import sys, engine.flower.agent, engine.flower.run_config, engine.fbo.schedules; "
            "print(sorted(m for m in ('dp_accounting', 'scipy', 'engine.privacy', 'engine.fbo.config') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_export_settings_equal_the_configs(tmp_path):
    from engine.flower.export import app_zip, export_app
    from engine.flower.settings import fbo_config, hype_config, run_settings

    fbo = FboConfig(agents=5, q=0.4, z=1.7, S=9.0, P=2, iterations=7, budget=30.0, seed=4)
    export_app("fbo", fbo, tmp_path / "a")
    values = tomllib.loads((tmp_path / "a" / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    back = fbo_config(run_settings(values, "fbo"))
    for name in ("agents", "q", "z", "S", "P", "iterations", "budget", "seed", "sampling", "accountant"):
        assert getattr(back, name) == getattr(fbo, name), name
    hype = HypeConfig(clients=7, candidates=12, good=3, k=2, epsilon=2.0)
    export_app("hype", hype, tmp_path / "b")
    values = tomllib.loads((tmp_path / "b" / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
    back = hype_config(run_settings(values, "hype"))
    assert (back.clients, back.p, back.good, back.k) == (7, 12, 3, 2)
    from engine.hype.calibration import noise_summary

    assert back.sigma == pytest.approx(noise_summary(hype).sigma, rel=1e-12)
    assert app_zip("hype", hype)[:2] == b"PK"


@pytest.mark.parametrize("argv, message", [
    (["--tool", "hype", "--q", "0.3"], "--q does not apply to the hype tool."),
    (["--tool", "fbo", "--algorithm", "ts"], "TS has no central server"),
    (["--tool", "nope"], "tool must be one of"),
])
def test_export_cli_refuses_in_one_sentence(tmp_path, capsys, argv, message):
    from engine.cli import main

    assert main(["export", "flower", *argv, "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_export_tool_is_light():
    from engine.cli import export

    assert export.cost(None).is_free and "never builds" in export.cost(None).free_because


# ---------------------------------------------------------------------------------------------- same mechanism
def test_dp_fts_de_broadcast_equals_the_engines_server_round():
    fbo_strategy, _, targets = flower()
    config = FboConfig(agents=6, P=2, features=5, iterations=4, q=0.5, z=1.3, S=2.0, seed=3, runs=1,
                       domain="continuous")
    # The same generator on both sides: the server's test-only secret with the run's seed (a deployment draws
    # from the operating system's entropy, which no one can replay).
    strategy = fbo_strategy.DpFtsDeStrategy(config, secret="a test secret")
    engine_rng = server_generator(config.seed, "a test secret")
    assignment = Subregions(2, 1).assign(6)
    vectors = np.random.default_rng(9).normal(size=(3, 6, 5)) * 2
    for server_round in (1, 2, 3):
        replies = [fbo_reply(targets, n, vectors[server_round - 1, n]) for n in (4, 0, 2, 5, 1, 3)]
        arrays, metrics = strategy.aggregate_train(server_round, replies)
        weights = subregion_weights(assignment, 2, server_round, a=config.weight_a,
                                    schedule=config.weight_schedule, mode=config.weights)
        step = aggregate(vectors[server_round - 1], weights, q=0.5, z=1.3, S=2.0, rng=engine_rng, private=True)
        assert np.array_equal(arrays["broadcast"].numpy(), step.broadcast)
        assert metrics["epsilon"] == pytest.approx(strategy.plan.epsilon_after(server_round))
        assert metrics["selected"] == int(step.selected.sum())


def test_a_dropped_agent_counts_as_zero_and_changes_neither_the_sampling_nor_epsilon(capsys):
    fbo_strategy, _, targets = flower()
    config = FboConfig(agents=6, P=2, features=5, iterations=4, q=0.5, z=1.3, S=2.0, seed=3, runs=1,
                       domain="continuous")
    full, dropped = (fbo_strategy.DpFtsDeStrategy(config, secret=7), fbo_strategy.DpFtsDeStrategy(config, secret=7))
    engine_rng = server_generator(config.seed, 7)
    assignment = Subregions(2, 1).assign(6)
    vectors = np.random.default_rng(9).normal(size=(3, 6, 5)) * 2
    for server_round in (1, 2, 3):
        everyone = [fbo_reply(targets, n, vectors[server_round - 1, n]) for n in range(6)]
        replied = [reply for n, reply in enumerate(everyone) if n not in (1, 4)]     # agents 1 and 4 dropped out
        full.aggregate_train(server_round, everyone)
        arrays, metrics = dropped.aggregate_train(server_round, replied)
        zeroed = vectors[server_round - 1].copy()
        zeroed[[1, 4]] = 0.0
        weights = subregion_weights(assignment, 2, server_round, a=config.weight_a,
                                    schedule=config.weight_schedule, mode=config.weights)
        step = aggregate(zeroed, weights, q=0.5, z=1.3, S=2.0, rng=engine_rng, private=True)
        assert np.array_equal(arrays["broadcast"].numpy(), step.broadcast)
        assert np.array_equal(dropped.last_step.selected, full.last_step.selected)   # drawn before the replies
        assert metrics["epsilon"] == full.epsilon == pytest.approx(dropped.plan.epsilon_after(server_round))
        assert dropped.history[-1]["missing"] == [1, 4] and full.history[-1]["missing"] == []
    assert "agents [1, 4] did not reply" in capsys.readouterr().out


def test_dp_fts_de_stops_at_the_budget():
    fbo_strategy, _, targets = flower()
    config = FboConfig(agents=4, P=1, features=3, iterations=30, q=0.5, z=1.0, budget=4.0, runs=1,
                       domain="continuous")
    strategy = fbo_strategy.DpFtsDeStrategy(config)
    allowed = strategy.releases_allowed
    assert 1 <= allowed < 30
    replies = [fbo_reply(targets, n, np.ones(3)) for n in range(4)]
    for server_round in range(1, allowed + 1):
        assert strategy.aggregate_train(server_round, replies)[0] is not None
    arrays, metrics = strategy.aggregate_train(allowed + 1, replies)
    assert arrays is None and strategy.released == allowed
    assert metrics["epsilon"] <= 4.0 < strategy.plan.epsilon_curve[-1]


@pytest.mark.statistical
def test_dp_hype_winner_distribution_matches_the_engines():
    """Winners of 1500 seeded votes through the strategy (client by client) against the engine's summed-noise votes.

    Both draw noise N(0, sigma^2) on the same clean vote sum, so their winner laws are equal; a chi-square test of
    homogeneity at level 0.001 fails a correct implementation one time in a thousand (the seeds are fixed, so it
    either passes always or never), while a client adding the full sigma instead of sigma / sqrt(n) (4.5 times the
    noise) moves the winner law by far more than that test's resolution at 1500 votes per side.
    """
    _, hype_strategy, targets = flower()
    from flwr.app import Array, ArrayRecord, RecordDict

    from engine.flower.voter import client_vote, simulated_losses

    n, p, k, sigma, votes = 20, 10, 2, 4.0, 1500
    config = HypeConfig(clients=n, candidates=p, good=3, k=k, sigma=sigma, epsilon=None)
    strategy = hype_strategy.DpHypeStrategy(config, sigma)
    losses = np.stack([simulated_losses(i, p, 3, 0.6, seed=1) for i in range(n)])
    clean = top_k_mask(losses, k).sum(axis=0).astype(float)
    rng = np.random.default_rng(5)
    ours = np.zeros(p, dtype=int)
    for _ in range(votes):
        replies = [targets.offline_message(RecordDict({"vote": ArrayRecord({"vote": Array(
            client_vote(losses[i], k, strategy.per_client_std, rng))})}), i + 1) for i in range(n)]
        _, metrics = strategy.aggregate_train(1, replies)
        ours[metrics["winner"]] += 1
    engine_winners = noisy_argmax(noisy_vote_sum(np.broadcast_to(clean, (votes, p)), sigma,
                                                 np.random.default_rng(6)))
    theirs = np.bincount(engine_winners, minlength=p)
    used = (ours + theirs) > 0
    assert used.sum() >= 3                      # a spread of winners, so the comparison has power
    assert chi2_contingency(np.stack([ours[used], theirs[used]]))[1] > 1e-3


def test_secagg_strategy_decides_from_the_unmasked_mean_only():
    _, hype_strategy, _ = flower()
    from flwr.common import FitRes, Status, Code, ndarrays_to_parameters

    config = HypeConfig(clients=3, candidates=4, good=1, k=1, sigma=1.0, epsilon=None)
    strategy = hype_strategy.SecAggHypeStrategy(config, 1.0)
    mean = ndarrays_to_parameters([np.array([0.2, 1.1, 0.3, -0.4])])
    results = [(None, FitRes(Status(Code.OK, ""), mean, 1, {})) for _ in range(3)]
    _, metrics = strategy.aggregate_fit(1, results, [])
    assert metrics["winner"] == 1 and metrics["secure_aggregation"] == 1
    assert np.allclose(strategy.noisy_sum, [0.6, 3.3, 0.9, -1.2])


def test_secagg_quantisation_is_negligible_at_the_explorers_defaults():
    from engine.flower.voter import secagg_plan
    from engine.hype.calibration import calibrate_sigma

    sigma = calibrate_sigma(1.0, 1e-5, 5)
    plan = secagg_plan(sigma, 250, 100, 5, 1e-5)
    assert plan.clip_probability < 1e-20
    assert plan.rounding_std_sum < 1e-5 * plan.noise_std
    # Charging the worst case (every rounding of every client aligned) to the sensitivity costs under 1 %.
    assert plan.epsilon <= plan.epsilon_rounding < plan.epsilon * 1.01


# ---------------------------------------------------------------------------------------------- the audit bridge
def test_audit_catches_the_broken_strategy_and_not_the_correct_ones():
    flower()
    from engine.flower.audit import StrategyAudit, run_strategy_audit

    common = dict(q=0.5, z=2.0, agents=8, trials=1200)
    broken = run_strategy_audit(StrategyAudit(strategy="broken-clip-after-mean", seed=1, **common))
    assert broken["violation"] and broken["epsilon_lower"] > broken["epsilon_claimed"]
    for name in ("flower-dp-fixed", "dp-fts-de"):
        for seed in (1, 2):       # seeded repetitions
            result = run_strategy_audit(StrategyAudit(strategy=name, seed=seed, **common))
            assert not result["violation"] and result["epsilon_lower"] <= result["epsilon_claimed"], (name, seed)


def test_audit_replies_are_built_once_and_restored_and_workers_give_the_serial_scores():
    flower()
    from engine.flower.audit import StrategyAudit, StrategyGame, audit_strategy, load_factory, quiet_flower

    config = StrategyAudit(strategy="flower-dp-fixed", q=0.5, agents=4, trials=600, seed=2)
    target = load_factory(config.strategy)(config)
    with quiet_flower():
        game = StrategyGame(config, target)
        game.scores("in", 5, np.random.default_rng(0))
        canary = game.replies["in"][0][0]

        def canary_norm():
            return np.linalg.norm(canary.content["arrays"].to_numpy_ndarrays()[0])

        # Flower's wrapper swaps the clipped arrays into each reply; before every trial the game puts the
        # replies back as they were built.
        assert canary_norm() == pytest.approx(config.S)
        assert game.restore("in")[0] is canary and game.rebuilt == 0
        assert canary_norm() == pytest.approx(config.canary_norm * config.S)
    serial = audit_strategy(config)
    parallel = audit_strategy(config, workers=2)
    assert serial.grids == parallel.grids
    assert all(np.array_equal(a, b) for a, b in zip(serial.counts["llr"], parallel.counts["llr"]))
    assert serial.epsilon_lower == parallel.epsilon_lower and serial.trials == 600


def test_audit_cli_and_hosting(monkeypatch):
    flower()
    from engine.cli import main

    code = main(["audit", "--mechanism", "flower", "--strategy", "tests.no_such_module:factory", "--trials", "200"])
    assert code == 2
    assert main(["audit", "--mechanism", "flower", "--strategy", "dp-fts-de", "--workers", "0", "--trials", "200"]) == 2
    monkeypatch.setenv("DPBO_HOSTED", "1")
    assert main(["audit", "--mechanism", "flower", "--strategy", "os:getcwd", "--trials", "200"]) == 2


def test_audit_cli_reports_json(capsys):
    flower()
    from engine.cli import main

    assert main(["audit", "--mechanism", "flower", "--strategy", "flower-dp-fixed", "--trials", "200",
                 "--agents", "4"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == "flower-dp-fixed" and out["trials"] == 200 and out["epsilon_claimed"] > 0


def test_the_server_apps_grid_polls_its_replies_often(monkeypatch):
    flower()
    from types import SimpleNamespace

    import engine.flower.apps as apps
    from engine.flower.apps import REPLY_POLL_SECONDS, PollingGrid

    class FakeGrid:                 # replies arrive one per pull
        def __init__(self):
            self.pulls = 0

        def push_messages(self, messages):
            return [f"m{i}" for i, _ in enumerate(messages)]

        def pull_messages(self, ids):
            self.pulls += 1
            first = sorted(ids)[0]
            return [SimpleNamespace(metadata=SimpleNamespace(reply_to_message_id=first))]

    # The waits between pulls are counted, not timed: what the grid sleeps is the same on any machine.
    slept = []
    monkeypatch.setattr(apps, "time", SimpleNamespace(time=time.time, monotonic=time.monotonic, sleep=slept.append))
    fake = FakeGrid()
    replies = PollingGrid(fake).send_and_receive(["a", "b", "c"], timeout=5)
    assert [r.metadata.reply_to_message_id for r in replies] == ["m0", "m1", "m2"] and fake.pulls == 3
    assert slept == [REPLY_POLL_SECONDS] * 2 and REPLY_POLL_SECONDS <= 0.5   # Flower's own grid sleeps 3 s


def test_the_export_deploys_the_delta_of_the_page_and_refuses_one_above_one_over_n(tmp_path, capsys):
    from engine.cli import main
    from engine.fbo.plan import make_plan
    from engine.flower.export import export_app

    def exported(name, **settings):
        config = FboConfig(iterations=3, q=0.5, z=1.0, **settings)
        export_app("fbo", config, tmp_path / name)
        run = tomllib.loads((tmp_path / name / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
        assert run["delta"] == make_plan(config).delta      # the delta the page and the API showed for this N
        return run["delta"], (tmp_path / name / "README.md").read_text()

    for agents, expected in ((3, 1e-5), (50, 1e-5), (10_000, 1e-6)):     # the product's rule, for every N
        delta, readme = exported(f"product{agents}", agents=agents)
        assert delta == pytest.approx(expected) and "the product's rule" in readme and "Warning" not in readme
    delta, readme = exported("paper", agents=50, delta_rule="paper")     # a paper preset: labelled, with a warning
    assert delta == pytest.approx(50 ** -1.1) and "paper's 1/N^1.1" in readme and "Warning: delta = " in readme
    delta, _ = exported("given", agents=3, delta=0.01)
    assert delta == 0.01
    for argv in (["--tool", "fbo", "--agents", "3", "--delta", "0.5"],
                 ["--tool", "hype", "--clients", "4", "--delta", "0.3"]):
        assert main(["export", "flower", *argv, "--out", str(tmp_path / "refused")]) == 2
        err = capsys.readouterr().err
        assert "is more than 1/N" in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "refused").exists()


def test_the_export_is_secured_unless_asked_and_depends_on_the_engine(tmp_path, capsys):
    import engine
    from engine.cli import main
    from engine.flower.deploy import FLWR_VERSION, INSECURE_WARNING

    assert main(["export", "flower", "--tool", "fbo", "--agents", "3", "--out", str(tmp_path / "secure")]) == 0
    assert INSECURE_WARNING not in capsys.readouterr().err
    readme = (tmp_path / "secure" / "README.md").read_text()
    assert "--insecure" not in readme and "--enable-supernode-auth" in readme and "--ssl-certfile" in readme
    assert "--disable-runtime-dependency-installation" in readme and "until flwr supernode ls" in readme
    assert (tmp_path / "secure" / "make_certificates.sh").exists()
    deps = tomllib.loads((tmp_path / "secure" / "pyproject.toml").read_text())["project"]["dependencies"]
    assert deps == [f"dpbo-explorer[flower]=={engine.__version__}", f"flwr=={FLWR_VERSION}"]
    assert main(["export", "flower", "--tool", "fbo", "--agents", "3", "--insecure",
                 "--out", str(tmp_path / "open")]) == 0
    assert INSECURE_WARNING in capsys.readouterr().err
    readme = (tmp_path / "open" / "README.md").read_text()
    assert readme.count("--insecure") >= 2 and INSECURE_WARNING in readme
    assert not (tmp_path / "open" / "make_certificates.sh").exists()


def test_an_agent_is_bound_to_the_node_that_first_replied_for_it(capsys):
    # The agent's index is the node's own partition-id: once node 11 has replied as agent 0, a reply naming
    # agent 0 from node 12 (another registered key) is not used, and the round goes on as if agent 0 were absent.
    fbo_strategy, _, targets = flower()
    from flwr.app import Message, RecordDict

    config = FboConfig(agents=3, P=1, features=4, iterations=3, q=1.0, z=1.0, S=2.0, seed=3, runs=1,
                       domain="continuous")
    strategy, honest = fbo_strategy.DpFtsDeStrategy(config, secret=1), fbo_strategy.DpFtsDeStrategy(config, secret=1)
    vectors = np.random.default_rng(4).normal(size=(3, 4))

    def reply(agent, node):
        request = targets.offline_message(RecordDict(), node)
        content = fbo_reply(targets, agent, vectors[agent]).content
        return Message(content=content, reply_to=request)

    strategy.aggregate_train(1, [reply(0, 11), reply(1, 12), reply(2, 13)])
    assert strategy.agent_nodes == {0: 11, 1: 12, 2: 13}
    arrays, _ = strategy.aggregate_train(2, [reply(0, 12), reply(2, 13)])        # node 12 now claims agent 0
    assert "a reply for agent 0 came from node 12, but agent 0 is node 11" in capsys.readouterr().out
    assert strategy.history[-1]["missing"] == [0, 1]
    honest.aggregate_train(1, [reply(0, 11), reply(1, 12), reply(2, 13)])
    expected, _ = honest.aggregate_train(2, [reply(2, 13)])                         # agent 0 absent, not node 12's
    assert np.array_equal(arrays["broadcast"].numpy(), expected["broadcast"].numpy())
