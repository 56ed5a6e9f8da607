"""A DP-FTS-DE Flower app run in one process: Flower's own round loop, the exported strategy and agents, no network.

:func:`run_offline` drives :class:`engine.flower.fbo_strategy.DpFtsDeStrategy` through Flower's
``Strategy.start`` (the loop a ServerApp runs) with :class:`OfflineGrid`, a grid whose ``send_and_receive``
hands each message to the ClientApp's round (:func:`engine.fbo_client.agent_round`) of the node it names, each
node keeping its own ``Context`` (its ``partition-id`` and its state between rounds) as a SuperNode does. What is
left out is only the transport: the messages, the records, the seeds and the order of the rounds are the app's.
A seeded app (the test-only secrets of :mod:`engine.flower.randomness`) gives the summary a loopback
federation of the same export and secrets gives (``tests/test_flower_compare.py``
checks both against stored federations), so the comparison with the engine (:mod:`engine.flower.compare`)
can also be run, and its power shown, on strategies a test changes on purpose.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable

import numpy as np
from flwr.app import Array, ArrayRecord, Context, Message, RecordDict
from flwr.serverapp import Grid

from engine.fbo.config import FboConfig
from engine.flower.audit_targets import offline_identity
from engine.flower.fbo_client import agent_round
from engine.flower.fbo_strategy import DpFtsDeStrategy
from engine.flower.settings import fbo_config, fbo_run_config


class OfflineGrid(Grid):
    """Nodes 1..N in this process: node n + 1 is agent n (``partition-id`` n); ``agent(message, context)`` answers
    (the exported agent's round by default, drawing from OS entropy or the nodes' test-only ``node_secret``)."""

    def __init__(self, run_config: dict, n_nodes: int, node_secret: str | int | None = None,
                 agent: Callable | None = None):
        self.agent = agent or functools.partial(agent_round, secret=node_secret)
        self.contexts = {n + 1: Context(run_id=0, node_id=n + 1, state=RecordDict(), run_config=dict(run_config),
                                        node_config={"partition-id": n, "num-partitions": n_nodes})
                         for n in range(n_nodes)}
        self._run = None

    def set_run(self, run) -> None:
        self._run = run

    @property
    def run(self):
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return Message(content=content, dst_node_id=dst_node_id, message_type=message_type, group_id=group_id)

    def get_node_ids(self) -> Iterable[int]:
        return list(self.contexts)

    def push_messages(self, messages):
        raise NotImplementedError("The offline grid answers in send_and_receive.")

    def pull_messages(self, message_ids):
        raise NotImplementedError("The offline grid answers in send_and_receive.")

    def send_and_receive(self, messages, *, timeout: float | None = None) -> list[Message]:
        return [self.agent(message, self.contexts[message.metadata.dst_node_id]) for message in messages]


def run_offline(config: FboConfig, strategy: Callable[..., DpFtsDeStrategy] = DpFtsDeStrategy, *,
                server_secret: str | int | None = None, node_secret: str | int | None = None,
                agent: Callable | None = None) -> dict:
    """The summary the exported app's ServerApp writes (its curve, releases, epsilon), computed in-process.

    ``config`` is exported as the app would be (:func:`engine.flower.settings.fbo_run_config`); ``strategy``
    builds the server (the exported one unless a caller gives another) and ``agent`` answers for every node
    (the exported agent's round unless given). As in a deployment, the server and the agents draw from the
    operating system's entropy, so two calls differ; ``server_secret`` and ``node_secret`` are the test-only
    secrets (:mod:`engine.flower.randomness`) that make a run reproducible, the server's never seen by the agents.
    """
    offline_identity()
    run_config = fbo_run_config(config)
    settings = fbo_config(run_config)
    server = strategy(settings, secret=server_secret)
    grid = OfflineGrid(run_config, server.n_agents, node_secret, agent)
    initial = ArrayRecord({"broadcast": Array(np.zeros((server.P, settings.features)))})
    server.start(grid, initial, num_rounds=settings.iterations + 1, timeout=0.0)
    return server.run_summary()
