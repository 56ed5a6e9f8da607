"""DP-HYPE's server (Algorithm 1, lines 10-12) as Flower strategies.

Two paths, the same vote:

:class:`DpHypeStrategy` (Message API)
    ``configure_train`` asks every node for its noisy vote; ``aggregate_train``
    adds the replies into the engine's :class:`engine.hype.voting.SecureSum`
    and returns the winner, :func:`engine.hype.voting.noisy_argmax` of the sum.
    The server process sees every client's noisy vote here, so this path is
    for tests, audits and trusted servers.
:class:`SecAggHypeStrategy` (the SecAgg+ path the exported app uses)
    Flower 1.42's SecAgg+ workflow drives a strategy of the older
    ``configure_fit`` / ``aggregate_fit`` interface, so this class speaks
    that one: the workflow unmasks only the mean of the clients' quantised
    messages and hands it to ``aggregate_fit``; the strategy multiplies it
    by the number of clients that reported (the sum, line 10) and takes the
    same noisy argmax (line 11). It never sees an individual vote.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, Message, MetricRecord, RecordDict
from flwr.app.message_type import MessageType
from flwr.common import FitIns, Parameters, ndarrays_to_parameters, parameters_to_ndarrays
from flwr.server.strategy import Strategy as LegacyStrategy
from flwr.serverapp import Grid
from flwr.serverapp.strategy import Strategy

from engine.hype.config import HypeConfig
from engine.hype.voting import SecureSum, noisy_argmax, per_client_std


class _Vote:
    """The vote's settings and outcome shared by both paths."""

    def __init__(self, config: HypeConfig, sigma: float):
        self.config = config
        self.sigma = float(sigma)
        self.per_client_std = per_client_std(self.sigma, config.clients, config.xi) if self.sigma > 0 else 0.0
        self.winner: int | None = None
        self.noisy_sum: np.ndarray | None = None
        self.reported = 0
        self.secure_aggregation = False

    def instructions(self) -> dict:
        cfg = self.config
        return {"k": int(cfg.k), "candidates": int(cfg.p), "std": float(self.per_client_std)}

    def decide(self, noisy_sum: np.ndarray, reported: int) -> int:
        self.noisy_sum = np.asarray(noisy_sum, dtype=float)
        self.reported = int(reported)
        self.winner = int(noisy_argmax(self.noisy_sum))
        return self.winner

    def metrics(self) -> dict:
        return {"winner": int(self.winner), "reported": self.reported,
                "secure_aggregation": int(self.secure_aggregation), "sigma": self.sigma}


class DpHypeStrategy(Strategy, _Vote):
    """One DP-HYPE vote on the Message API, the sum taken through the engine's simulated secure sum."""

    def __init__(self, config: HypeConfig, sigma: float):
        _Vote.__init__(self, config, sigma)

    def configure_train(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                        grid: Grid) -> Iterable[Message]:
        return [Message(content=RecordDict({"config": ConfigRecord(self.instructions())}), dst_node_id=node,
                        message_type=MessageType.TRAIN) for node in grid.get_node_ids()]

    def aggregate_train(self, server_round: int, replies: Iterable[Message]
                        ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        channel = SecureSum()
        for reply in replies:
            if not reply.has_error():
                channel.add(reply.content["vote"]["vote"].numpy().astype(float))
        if channel.count == 0:
            return None, None
        self.decide(channel.result(), channel.count)
        return ArrayRecord({"noisy_sum": Array(self.noisy_sum)}), MetricRecord(self.metrics())

    def configure_evaluate(self, server_round, arrays, config, grid) -> Iterable[Message]:
        return []

    def aggregate_evaluate(self, server_round, replies) -> MetricRecord | None:
        return None

    def summary(self) -> None:
        print(f"DP-HYPE vote: n={self.config.clients} p={self.config.p} k={self.config.k} sigma={self.sigma:.4g}")


class SecAggHypeStrategy(LegacyStrategy, _Vote):
    """One DP-HYPE vote for Flower's SecAgg+ workflow: sees only the unmasked mean of the votes."""

    def __init__(self, config: HypeConfig, sigma: float):
        _Vote.__init__(self, config, sigma)
        self.secure_aggregation = True

    def initialize_parameters(self, client_manager) -> Parameters | None:
        return ndarrays_to_parameters([np.zeros(self.config.p)])

    def configure_fit(self, server_round, parameters, client_manager):
        clients = client_manager.sample(num_clients=self.config.clients, min_num_clients=self.config.clients)
        instructions = FitIns(parameters, self.instructions())
        return [(client, instructions) for client in clients]

    def aggregate_fit(self, server_round, results, failures):
        if not results:
            return None, {}
        # Every FitRes carries the same unmasked, dequantised mean of the reporting clients' messages.
        mean = parameters_to_ndarrays(results[0][1].parameters)[0]
        self.decide(np.asarray(mean, dtype=float) * len(results), len(results))
        return ndarrays_to_parameters([self.noisy_sum]), self.metrics()

    def configure_evaluate(self, server_round, parameters, client_manager):
        return []

    def aggregate_evaluate(self, server_round, results, failures):
        return None, {}

    def evaluate(self, server_round, parameters):
        return None
