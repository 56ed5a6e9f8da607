"""Twenty seeded loopback federations against the engine's runs, and what that comparison can see.

``data/flower/loopback-runs.json`` holds the summaries of 20 DP-FTS-DE federations (the exported README's
commands on 127.0.0.1: TLS, SuperNode authentication, three SuperNodes; ``benchmarks/flower_vs_engine.py``).
The tests check that those runs are what this code gives (Flower's round loop replayed in-process with the
same apps and seeds gives the same summaries), that they are the engine's law (``engine.flower.compare``), and
that the same 20-run comparison tells apart strategies broken on purpose: the noise skipped, every round one
round late, the agents told the wrong iteration.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("flwr", reason="Flower (flwr) is not installed")

from engine.fbo import server  # noqa: E402
from engine.fbo.config import FboConfig  # noqa: E402
from engine.fbo.plan import make_plan  # noqa: E402
from engine.fbo.weights import subregion_weights  # noqa: E402
from engine.flower.compare import compare_federation, compare_runs, compare_selected  # noqa: E402
from engine.flower.fbo_strategy import DpFtsDeStrategy  # noqa: E402
from engine.flower.offline import run_offline  # noqa: E402
from engine.flower.participant_targets import PublicSeedStrategy, public_seed_agent  # noqa: E402
from engine.flower.settings import fbo_config, fbo_run_config  # noqa: E402
from engine.validation import ConfigError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
STORED = json.loads((ROOT / "data" / "flower" / "loopback-runs.json").read_text())
CONFIG = FboConfig(**STORED["config"])
REPLAYED = 5                 # stored runs replayed in-process (the first ones)


# The offline runs are reproducible through the test-only secrets (engine.flower.randomness), which a deployment
# never sets: its server and agents draw from the operating system's entropy.
SECRETS = {"server_secret": "comparison server", "node_secret": "comparison nodes"}


def offline_runs(strategy, seeds, **options) -> list[dict]:
    logging.disable(logging.INFO)             # Flower logs every round
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return [run_offline(CONFIG.replace(seed=seed), strategy, **(options or SECRETS)) for seed in seeds]
    finally:
        logging.disable(logging.NOTSET)


class NoNoise(DpFtsDeStrategy):
    """Releases without the Gaussian noise (and so without subsampling): what a strategy that skips it sends."""

    def release(self, server_round, vectors):
        cfg = self.config
        weights = subregion_weights(self.assignment, self.P, server_round, a=cfg.weight_a,
                                    schedule=cfg.weight_schedule, mode=cfg.weights)
        self.last_step = server.aggregate(vectors, weights, q=cfg.q, z=self.plan.z, S=cfg.S, rng=self.rng,
                                          private=False, sampling=cfg.sampling)
        self.released = server_round
        return self.last_step


class OneRoundLate(DpFtsDeStrategy):
    """Round r sends what round r - 1 should have sent (its iteration and its broadcast)."""

    previous = None

    def configure_train(self, server_round, arrays, config, grid):
        previous, self.previous = self.previous, arrays
        return super().configure_train(max(server_round - 1, 1), previous if previous is not None else arrays,
                                       config, grid)


class IterationAhead(DpFtsDeStrategy):
    """Tells the agents iteration r in round r instead of r - 1 (their p_t one step ahead)."""

    def configure_train(self, server_round, arrays, config, grid):
        messages = super().configure_train(server_round, arrays, config, grid)
        for message in messages:
            message.content["config"]["iteration"] = int(server_round)
        return messages


def test_the_stored_federations_are_what_this_code_gives():
    # The stored federations ran before the server and the agents drew from secret randomness: their generators
    # came from the run config's seed. Replayed with those generators (the known-broken copies the participant's
    # audit keeps), everything else is this code: the rounds, the records, the clipping, the agents.
    summaries = STORED["summaries"]
    assert [s["seed"] for s in summaries] == STORED["seeds"]
    replays = offline_runs(PublicSeedStrategy, STORED["seeds"][:REPLAYED], agent=public_seed_agent)
    for stored, replayed in zip(summaries, replays):
        for key in ("rounds", "releases", "queries", "selected", "broadcast_used", "missing"):
            assert stored[key] == replayed[key], key
        for key in ("regret_mean", "broadcast_norm"):
            assert np.allclose(np.array(stored[key], dtype=float), np.array(replayed[key], dtype=float),
                               rtol=1e-9, atol=1e-12, equal_nan=True), key
        assert stored["epsilon"] == pytest.approx(replayed["epsilon"], rel=1e-12)


def test_twenty_loopback_federations_follow_the_engines_law():
    # Runs in which an agent missed a round (a dropout on the loaded machine) are a different broadcast by design
    # and are left out, by name; twenty complete runs remain.
    result = compare_federation(STORED["summaries"], CONFIG)
    assert result["same"], result["tests"]
    assert result["runs"] == 20 and result["engine_runs"] == 400
    assert result["runs"] + len(result["with_dropouts"]) == len(STORED["summaries"])
    assert all(any(s["missing"]) == (s["seed"] in result["with_dropouts"]) for s in STORED["summaries"])
    stored = STORED["comparison"]["tests"]
    for name, test in result["tests"].items():       # what the benchmark stored is what the comparison says
        key = "p_values" if "p_values" in test else "p_value"
        assert np.allclose(test[key], stored[name][key], rtol=1e-6, atol=1e-9), name
    plan = make_plan(fbo_config(fbo_run_config(CONFIG)))
    assert all(s["epsilon"] == pytest.approx(plan.epsilon_after(CONFIG.iterations), rel=1e-12)
               for s in STORED["summaries"])


@pytest.mark.parametrize("strategy, caught_by", [(NoNoise, "broadcast_norm"), (OneRoundLate, "broadcast_used"),
                                                 (IterationAhead, "broadcast_used")])
def test_the_comparison_catches_a_strategy_off_by_a_round_or_without_noise(strategy, caught_by):
    seeds = STORED["seeds"][:20]
    result = compare_federation(offline_runs(strategy, seeds), CONFIG)
    assert not result["same"]
    assert not result["tests"][caught_by]["same"], result["tests"]


def test_the_comparison_refuses_what_it_cannot_compare():
    with pytest.raises(ConfigError, match="same rounds"):
        compare_runs(np.zeros((3, 4)), np.zeros((10, 5)))
    with pytest.raises(ConfigError, match="at least two federation runs"):
        compare_federation([STORED["summaries"][0]], CONFIG)
    with pytest.raises(ConfigError, match="missing values"):
        compare_runs(np.array([[0.1, np.nan], [0.2, 0.3]]), np.ones((10, 2)))
    binomial = np.random.default_rng(0).binomial(3, 0.5, size=2000)
    assert compare_selected(binomial, 3, 0.5)["same"] and not compare_selected(np.full(200, 3), 3, 0.5)["same"]
