"""DP-FTS-DE's central server as a strategy on Flower's Message API (paper Algorithm 1).

Rounds. Flower round r runs iteration t = r - 1 of the paper: round 1 is the
agents' initialisation (t = 0, no broadcast yet) and round T + 1 the last
iteration, so a run has ``iterations + 1`` rounds. ``configure_train`` sends
every node the broadcast omega_joint_{t-1} (line 4: all agents take part in
every iteration); ``aggregate_train`` of round r is the server's release r
(lines 5-12), used in iteration r. The release calls the engine's own
functions: :func:`engine.fbo.weights.subregion_weights` for iteration r and
:func:`engine.fbo.server.aggregate` (Poisson or fixed-size subsample with
probability q, clip to S / sqrt(P), weights phi / q, noise z phi_max S / q),
with one generator seeded by the run's seed. Privacy comes from the run's
:class:`engine.fbo.plan.RunPlan` (the product's accountant, z calibrated when
asked, the budget's stop): after release r the strategy reports
``plan.epsilon_after(r)``, and once the budget allows no further release the
server stops releasing and the agents go on with their own Thompson sampling
(paper footnote 13).

Replies. Each agent replies with its omega in the ArrayRecord ``"omega"`` and
its index ``agent`` (0..N-1, the node's ``partition-id``) in the MetricRecord
``"agent"``. A reply that names an index outside 0..N-1, one already used in
the round, one bound to another node, or a vector of the wrong size is not
used and is logged (:func:`reply_vectors`); the round goes on.

Dropouts. An agent that does not reply within the round's timeout (the run
config's ``reply_timeout``), or whose ClientApp fails, counts as sending the
zero vector, which has the output law of an absent agent
(``engine.audit.fbo_server``). The subsample is drawn over all N agents with
the strategy's own generator, before and regardless of who replied, and the
clip and the noise do not change, so every release is the mechanism the
accountant priced: epsilon after r releases is ``plan.epsilon_after(r)``,
replies or not (an agent that dropped out spends no more than that). What a
dropout costs is utility: the missing agents' share of the broadcast is zero,
so the signal shrinks by about the fraction missing against the same noise.
Each round's missing agents are in the history (``missing``) and logged.
Repeating a round instead would be another release, charged to epsilon.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, Message, MetricRecord, RecordDict
from flwr.app.message_type import MessageType
from flwr.serverapp import Grid
from flwr.serverapp.strategy import Strategy

from engine.fbo import server
from engine.fbo.config import FboConfig
from engine.fbo.plan import make_plan
from engine.fbo.subregions import Subregions
from engine.fbo.weights import subregion_weights
from engine.flower import randomness
from engine.flower.outcome import release_line
from engine.validation import ConfigError

SERVER_ALGORITHMS = ("fts-de", "dp-fts", "dp-fts-de")
SUMMARY_NUMBERS = 20_000     # the summary carries the broadcasts up to this many numbers


def _ignored(reason: str) -> None:
    print(f"Reply not used: {reason}", flush=True)


def reply_vectors(replies: Iterable[Message], n_agents: int, n_features: int,
                  pins: dict[int, int] | None = None) -> tuple[np.ndarray, list[dict]]:
    """The (N, M) matrix of the agents' omegas from their replies (zero rows for agents that sent none).

    ``pins`` (agent index -> node id, filled as replies arrive) binds each agent to the node that first replied
    for it: an agent's index is the node's ``partition-id``, which the node declares, so a later reply for that
    agent from another node (another registered key) is not used, and is reported. A reply naming no index, an
    index outside 0..N-1 or one already used in this round, or a vector of the wrong size, is not used either
    (logged): a misconfigured or rogue node cannot stop the run.
    """
    vectors = np.zeros((n_agents, n_features))
    seen, metrics = set(), []
    for reply in replies:
        if reply.has_error():
            continue
        node = int(reply.metadata.src_node_id)
        try:
            record = reply.content["metrics"]
            index = int(record["agent"])
            omega = reply.content["omega"]["omega"].numpy().astype(float).ravel()
        except (KeyError, TypeError, ValueError) as err:
            _ignored(f"node {node} sent a reply without an agent index and a vector ({err}).")
            continue
        if not 0 <= index < n_agents:
            _ignored(f"node {node} names agent {index}, outside 0..{n_agents - 1}.")
            continue
        if omega.shape != (n_features,):
            _ignored(f"agent {index} (node {node}) sent {omega.size} numbers, expected {n_features}.")
            continue
        if index in seen:
            _ignored(f"node {node} names agent {index}, which another reply of this round already named.")
            continue
        if pins is not None and pins.setdefault(index, node) != node:
            _ignored(f"a reply for agent {index} came from node {node}, but agent {index} is node {pins[index]} "
                     "(its first reply).")
            continue
        seen.add(index)
        vectors[index] = omega
        metrics.append(dict(record))
    return vectors, metrics


class DpFtsDeStrategy(Strategy):
    """DP-FTS-DE (or FTS-DE, DP-FTS) server; ``config`` is the explorer's :class:`FboConfig`."""

    def __init__(self, config: FboConfig, rng: np.random.Generator | None = None, secret: str | int | None = None):
        if config.algorithm not in SERVER_ALGORITHMS:
            raise ConfigError(f"{config.algorithm.upper()} has no central server; choose one of "
                              f"{', '.join(SERVER_ALGORITHMS)}.", "algorithm")
        if config.agents is None:
            raise ConfigError("Give the number of agents N (one per SuperNode).", "agents")
        self.config = config
        self.plan = make_plan(config)
        self.n_agents = self.plan.n_agents
        self.P = self.plan.n_subregions
        self.assignment = Subregions(self.P, 1).assign(self.n_agents)
        # The subsample and the noise: the operating system's entropy, never the run config's seed (every node
        # holds it); a test's server-side secret when one is set or given (engine.flower.randomness); ``rng``
        # when given.
        self.randomness = "given" if rng is not None else randomness.source(secret)
        self.rng = rng if rng is not None else randomness.server_generator(config.seed, secret)
        self.broadcasts: list[np.ndarray] = []     # every release, as every node receives it
        self.released = 0
        self.history: list[dict] = []
        self.round_ends: list[float] = []      # time.monotonic() at the end of each aggregate_train
        self.agent_nodes: dict[int, int] = {}  # agent index -> the node that first replied for it
        self.last_step = None

    # ------------------------------------------------------------------ accounting
    @property
    def releases_allowed(self) -> int:
        return int(self.plan.releases)

    @property
    def epsilon(self) -> float | None:
        """Epsilon spent by the releases made so far (None without DP)."""
        return self.plan.epsilon_after(self.released)

    @property
    def delta(self) -> float:
        return float(self.plan.delta)

    def epsilon_for(self, releases: int) -> float | None:
        return self.plan.epsilon_after(releases)

    # ------------------------------------------------------------------ the rounds
    def configure_train(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                        grid: Grid) -> Iterable[Message]:
        t = server_round - 1
        has_broadcast = 1 <= t <= self.released
        broadcast = (arrays["broadcast"].numpy() if has_broadcast and "broadcast" in arrays
                     else np.zeros((self.P, self.config.features)))
        messages = []
        for node_id in grid.get_node_ids():
            content = RecordDict({
                "broadcast": ArrayRecord({"broadcast": Array(np.asarray(broadcast, dtype=float))}),
                "config": ConfigRecord({"iteration": int(t), "has_broadcast": bool(has_broadcast)}),
            })
            messages.append(Message(content=content, dst_node_id=node_id, message_type=MessageType.TRAIN))
        return messages

    def release(self, server_round: int, vectors: np.ndarray):
        """Release number ``server_round`` from the agents' (N, M) vectors: the engine's server round."""
        cfg = self.config
        weights = subregion_weights(self.assignment, self.P, server_round, a=cfg.weight_a,
                                    schedule=cfg.weight_schedule, mode=cfg.weights)
        step = server.aggregate(vectors, weights, q=cfg.q, z=self.plan.z, S=cfg.S, rng=self.rng,
                                private=cfg.algorithm.startswith("dp-"), sampling=cfg.sampling)
        self.released = server_round
        self.last_step = step
        return step

    def aggregate_train(self, server_round: int, replies: Iterable[Message]
                        ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        vectors, metrics = reply_vectors(replies, self.n_agents, self.config.features, self.agent_nodes)
        missing = sorted(set(range(self.n_agents)) - {int(m["agent"]) for m in metrics})
        if missing:
            print(f"Round {server_round}: agents {missing} did not reply; each counts as the zero vector (the "
                  "accountant's epsilon is unchanged, the broadcast carries less signal).", flush=True)
        summary = {"round": int(server_round), "replies": len(metrics), "missing": missing,
                   "queries": int(sum(int(m.get("queries", 0)) for m in metrics)),
                   "best_mean": float(np.mean([m["best"] for m in metrics])) if metrics else float("nan"),
                   "broadcast_used": int(sum(int(m.get("used_broadcast", 0)) for m in metrics))}
        if metrics and all("regret" in m for m in metrics):      # agents on the synthetic task report it
            summary["regret_mean"] = float(np.mean([m["regret"] for m in metrics]))
        arrays = None
        if server_round <= self.releases_allowed:
            step = self.release(server_round, vectors)
            arrays = ArrayRecord({"broadcast": Array(np.asarray(step.broadcast, dtype=float))})
            summary["selected"] = int(step.selected.sum())
            summary["broadcast_norm"] = float(np.linalg.norm(step.broadcast))
            self.broadcasts.append(step.broadcast)
            print(release_line(self.released, self.releases_allowed, self.epsilon, self.delta), flush=True)
        summary["releases"] = self.released
        if self.epsilon is not None:
            summary["epsilon"] = float(self.epsilon)
        self.history.append(summary)
        self.round_ends.append(time.monotonic())
        return arrays, MetricRecord({k: v for k, v in summary.items() if isinstance(v, (int, float))})

    def run_summary(self) -> dict:
        """The run's result, one entry per round: what the ServerApp writes and the comparisons read.

        ``broadcasts`` are the releases as every node received them (a participant's audit reads them); left out
        (None) when they hold more than :data:`SUMMARY_NUMBERS` numbers.
        """
        history = self.history
        numbers = sum(int(np.size(b)) for b in self.broadcasts)
        broadcasts = [np.asarray(b).tolist() for b in self.broadcasts] if numbers <= SUMMARY_NUMBERS else None
        return {"rounds": len(history), "releases": self.released, "epsilon": self.epsilon, "delta": self.delta,
                "z": self.plan.z, "queries": history[-1]["queries"] if history else 0,
                "best_mean": [h["best_mean"] for h in history],
                "regret_mean": [h.get("regret_mean") for h in history],
                "selected": [h.get("selected") for h in history],
                "broadcast_norm": [h.get("broadcast_norm") for h in history],
                "broadcast_used": [h["broadcast_used"] for h in history],
                "missing": [h["missing"] for h in history], "randomness": self.randomness,
                "broadcasts": broadcasts}

    def configure_evaluate(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                           grid: Grid) -> Iterable[Message]:
        return []

    def aggregate_evaluate(self, server_round: int, replies: Iterable[Message]) -> MetricRecord | None:
        return None

    def summary(self) -> None:
        cfg = self.config
        print(f"DP-FTS-DE server: N={self.n_agents} P={self.P} q={cfg.q} z={self.plan.z:.4g} S={cfg.S} "
              f"sampling={cfg.sampling} releases={self.releases_allowed} accountant={cfg.accountant}")
