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
    :class:`DropoutTolerantSecAggPlus` is Flower's SecAgg+ workflow that also
    survives a client lost before its key shares went out.

Epsilon spent. The sum's noise is what the reporting clients added:
per-client std sigma / sqrt((1 - xi) n) times sqrt(reported). With at least
(1 - xi) n reports it is at least sigma and the vote spends at most the
planned epsilon (:meth:`SecAggHypeStrategy.spent`); with fewer masked votes
:class:`DropoutTolerantSecAggPlus` does not unmask the sum (``min_reports``),
so a vote never spends more than its plan. A vote with no winner released
nothing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from logging import WARNING

import numpy as np
from flwr.app import Array, ArrayRecord, ConfigRecord, Message, MetricRecord, RecordDict
from flwr.app.message_type import MessageType
from flwr.common import FitIns, Parameters, ndarrays_to_parameters, parameters_to_ndarrays
from flwr.common.logger import log
from flwr.server.strategy import Strategy as LegacyStrategy
from flwr.server.workflow import SecAggPlusWorkflow
from flwr.serverapp import Grid
from flwr.serverapp.strategy import Strategy

from engine.flower.outcome import release_line
from engine.hype.calibration import epsilon_for_sigma
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
        # The nodes the SuperLink lists now (a node lost before the vote is left out once the SuperLink sees it
        # gone; one lost later is SecAgg+'s dropout), at most the planned clients.
        available = int(client_manager.num_available())
        wanted = min(available, int(self.config.clients))
        clients = client_manager.sample(num_clients=wanted, min_num_clients=wanted) if wanted else []
        instructions = FitIns(parameters, self.instructions())
        return [(client, instructions) for client in clients]

    def aggregate_fit(self, server_round, results, failures):
        if not results:
            return None, {}
        # Every FitRes carries the same unmasked, dequantised mean of the reporting clients' messages.
        mean = parameters_to_ndarrays(results[0][1].parameters)[0]
        self.decide(np.asarray(mean, dtype=float) * len(results), len(results))
        spent = self.spent()
        if spent["epsilon"] is not None and spent["epsilon_planned"] is not None and \
                spent["epsilon"] > spent["epsilon_planned"] * (1 + 1e-9):
            print(f"Only {self.reported} of {self.config.clients} clients reported, more dropouts than the noise "
                  f"was scaled for (xi = {self.config.xi:g}): this vote spent epsilon {spent['epsilon']:.4g} "
                  f"instead of {spent['epsilon_planned']:.4g}.", flush=True)
        print(release_line(1, 1, spent["epsilon"], spent["delta"]), flush=True)
        return ndarrays_to_parameters([self.noisy_sum]), self.metrics()

    def spent(self) -> dict:
        """The vote's epsilon: for the noise the reporting clients actually added (0 with no winner), and planned."""
        cfg = self.config
        planned = epsilon_for_sigma(self.sigma, cfg.delta, cfg.k) if self.sigma > 0 else None
        if self.winner is None:
            return {"epsilon": 0.0, "epsilon_planned": planned, "delta": cfg.delta, "sigma_realised": None}
        realised = self.per_client_std * math.sqrt(self.reported)
        epsilon = epsilon_for_sigma(realised, cfg.delta, cfg.k) if realised > 0 else None
        return {"epsilon": epsilon, "epsilon_planned": planned, "delta": cfg.delta, "sigma_realised": realised}

    def configure_evaluate(self, server_round, parameters, client_manager):
        return []

    def aggregate_evaluate(self, server_round, results, failures):
        return None, {}

    def evaluate(self, server_round, parameters):
        return None


class DropoutTolerantSecAggPlus(SecAggPlusWorkflow):
    """Flower's SecAgg+ workflow that also survives a client lost before its key shares went out.

    Flower 1.42's workflow keeps every sampled client in the set whose secrets its unmask stage reconstructs
    (``state.sampled_node_ids``), also one that never answered the setup or the share-keys stage. Nobody holds
    shares of such a client's secrets, so the unmask stage stops ("Not enough shares to recover secret in unmask
    vectors stage") and the vote has no winner, although the protocol (Bell et al. 2020, and Flower's own client
    mod, which masks only with the neighbours whose shares it received) simply leaves such a client out. After
    the share-keys stage this keeps only the clients whose shares went out, as the sampled set and as every
    client's neighbours, and checks the threshold again; clients lost later are SecAgg+'s dropouts as before
    (their pairwise masks removed from the shares of the others). Everything else is Flower's workflow.
    ``halted`` says why a vote stopped.
    """

    halted: str | None = None

    def __init__(self, *args, min_reports: int = 0, **kwargs):
        super().__init__(*args, **kwargs)
        # The fewest clients whose noise the vote's sigma is planned for (ceil((1 - xi) n)): with fewer masked
        # votes the sum would carry less noise than planned, so it is not unmasked (never more epsilon than the plan).
        self.min_reports = int(min_reports)

    def _check_threshold(self, state) -> bool:
        going_on = super()._check_threshold(state)
        if not going_on:
            self.halted = (f"fewer clients answered than SecAgg+'s reconstruction threshold ({state.threshold} of "
                           f"{len(state.sampled_node_ids)})")
        return going_on

    def _timed(self, name: str, stage, grid, context, state) -> bool:
        asked, start = len(state.active_node_ids), time.perf_counter()
        going_on = stage(grid, context, state)
        print(f"SecAgg+ {name}: {len(state.active_node_ids)} of {asked or len(state.sampled_node_ids)} clients "
              f"answered in {time.perf_counter() - start:.1f} s.", flush=True)
        return going_on

    def setup_stage(self, grid, context, state) -> bool:
        return self._timed("setup", super().setup_stage, grid, context, state)

    def collect_masked_vectors_stage(self, grid, context, state) -> bool:
        return self._timed("masked votes", super().collect_masked_vectors_stage, grid, context, state)

    def share_keys_stage(self, grid, context, state) -> bool:
        self._timed("key shares", super().share_keys_stage, grid, context, state)
        shared = set(state.active_node_ids)
        lost = set(state.sampled_node_ids) - shared
        if lost:
            log(WARNING, "SecAgg+: %s client(s) lost before their key shares went out; the vote goes on without "
                "them.", len(lost))
        state.sampled_node_ids = shared
        state.nid_to_neighbours = {node: neighbours & shared for node, neighbours in state.nid_to_neighbours.items()
                                   if node in shared}
        return self._check_threshold(state)

    def unmask_stage(self, grid, context, state) -> bool:
        arrived = len(state.active_node_ids)       # the clients whose masked votes (and noise) are in the sum
        if arrived < self.min_reports:
            self.halted = (f"only {arrived} clients' votes arrived, fewer than the {self.min_reports} whose noise "
                           "the vote's sigma is planned for (raise xi to tolerate more dropouts), so the sum was "
                           "not unmasked and nothing was released")
            log(WARNING, "SecAgg+: %s", self.halted)
            return False
        going_on = self._timed("unmasking", super().unmask_stage, grid, context, state)
        if not going_on and self.halted is None:
            self.halted = "too few clients sent their shares to unmask the sum"
        return going_on
