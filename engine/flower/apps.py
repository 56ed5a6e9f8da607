"""The ServerApps of the exported Flower apps (the ClientApps are in ``fbo_client`` and ``hype_client``).

Each ServerApp reads the explorer's settings from the run config, waits for
its nodes, runs, logs a one-line JSON summary and, when the run config names
a ``result_file``, writes the summary there. Each run function imports what
its tool needs when it starts (a ServerApp process serves one tool).
"""

from __future__ import annotations

import json
import time

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from engine.flower.run_config import run_settings

NODE_WAIT_SECONDS = 60.0
REPLY_POLL_SECONDS = 0.2


class PollingGrid(Grid):
    """The ServerApp's grid, asking for replies every ``poll`` seconds.

    Flower's ``send_and_receive`` (flwr 1.42, ``superlink/grid/http_grid.py``)
    pushes the messages, then asks the SuperLink for the replies every 3 s,
    so every round (every stage of SecAgg+) waits up to 3 s after its last
    reply. This grid does the same with Flower's own ``push_messages`` and
    ``pull_messages``, only polling more often; everything else is the
    wrapped grid's.
    """

    def __init__(self, grid: Grid, poll: float = REPLY_POLL_SECONDS):
        self.grid, self.poll = grid, float(poll)

    def set_run(self, run) -> None:
        self.grid.set_run(run)

    @property
    def run(self):
        return self.grid.run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return self.grid.create_message(content, message_type, dst_node_id, group_id, ttl)

    def get_node_ids(self):
        return self.grid.get_node_ids()

    def get_nodes(self):
        return self.grid.get_nodes()

    def push_messages(self, messages):
        return self.grid.push_messages(messages)

    def pull_messages(self, message_ids):
        return self.grid.pull_messages(message_ids)

    def send_and_receive(self, messages, *, timeout: float | None = None):
        waiting = set(self.grid.push_messages(messages))
        end = time.time() + (timeout if timeout is not None else 0.0)
        replies = []
        while waiting and (timeout is None or time.time() < end):
            got = list(self.grid.pull_messages(waiting))
            replies.extend(got)
            waiting.difference_update(reply.metadata.reply_to_message_id for reply in got)
            if waiting:
                time.sleep(self.poll)
        return replies


def wait_for_nodes(grid: Grid, count: int, seconds: float = NODE_WAIT_SECONDS) -> int:
    """Wait until ``count`` nodes are connected (or ``seconds`` pass); returns how many are."""
    end = time.monotonic() + seconds
    while True:
        nodes = len(list(grid.get_node_ids()))
        if nodes >= count or time.monotonic() > end:
            return nodes
        time.sleep(0.2)


def _finish(summary: dict, settings: dict) -> dict:
    line = json.dumps(summary, default=float)
    print("RESULT " + line, flush=True)
    if settings.get("result_file"):
        with open(settings["result_file"], "w", encoding="utf-8") as out:
            out.write(line)
    return summary


def run_fbo(grid: Grid, context: Context) -> dict:
    import numpy as np
    from flwr.app import Array, ArrayRecord

    from engine.flower.fbo_strategy import DpFtsDeStrategy
    from engine.flower.settings import fbo_config

    settings = run_settings(context.run_config, "fbo")
    config = fbo_config(settings)
    strategy = DpFtsDeStrategy(config)
    start = time.perf_counter()
    nodes = wait_for_nodes(grid, strategy.n_agents)
    waited, began = time.perf_counter() - start, time.monotonic()
    initial = ArrayRecord({"broadcast": Array(np.zeros((strategy.P, config.features)))})
    strategy.start(grid, initial, num_rounds=config.iterations + 1, timeout=settings["reply_timeout"])
    ends = [began] + strategy.round_ends
    summary = {"tool": "fbo", "nodes": nodes, **strategy.run_summary(), "seconds": time.perf_counter() - start,
               "node_wait_seconds": waited, "round_seconds": [b - a for a, b in zip(ends, ends[1:])]}
    return _finish(summary, settings)


def run_hype(grid: Grid, context: Context) -> dict:
    from flwr.server import LegacyContext, ServerConfig
    from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow

    from engine.flower.hype_strategy import SecAggHypeStrategy
    from engine.flower.settings import hype_config
    from engine.flower.voter import QUANTIZATION_RANGE, quantisation_report, secagg_plan
    from engine.hype.calibration import epsilon_for_sigma

    settings = run_settings(context.run_config, "hype")
    config = hype_config(settings)
    sigma = float(config.sigma)
    plan = secagg_plan(sigma, config.clients, config.p, config.k, config.delta, config.xi)
    print(quantisation_report(plan), flush=True)
    strategy = SecAggHypeStrategy(config, sigma)
    start = time.perf_counter()
    nodes = wait_for_nodes(grid, config.clients)
    waited = time.perf_counter() - start
    legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=1), strategy=strategy)
    workflow = SecAggPlusWorkflow(num_shares=1.0, reconstruction_threshold=0.67, max_weight=1.0,
                                  clipping_range=plan.clipping_range, quantization_range=QUANTIZATION_RANGE)
    DefaultWorkflow(fit_workflow=workflow)(grid, legacy)
    summary = {"tool": "hype", "nodes": nodes, "winner": strategy.winner, "reported": strategy.reported,
               "secure_aggregation": strategy.secure_aggregation, "sigma": sigma,
               "epsilon": epsilon_for_sigma(sigma, config.delta, config.k) if sigma > 0 else None,
               "noisy_sum": None if strategy.noisy_sum is None else strategy.noisy_sum.tolist(),
               "clipping_range": plan.clipping_range, "quantisation_step": plan.step,
               "epsilon_rounding": plan.epsilon_rounding, "seconds": time.perf_counter() - start,
               "node_wait_seconds": waited}
    return _finish(summary, settings)


def make_server_app(tool: str) -> ServerApp:
    app = ServerApp()
    run = run_fbo if tool == "fbo" else run_hype

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        run(PollingGrid(grid), context)

    return app
