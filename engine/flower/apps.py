"""The ServerApps of the exported Flower apps (the ClientApps are in ``fbo_client`` and ``hype_client``).

Each ServerApp reads the explorer's settings from the run config, waits for
its nodes, runs, logs a one-line JSON summary and, when the run config names
a ``result_file``, writes the summary there. The summary says whether the run
completed (``"status"``) and what it released, so what epsilon it spent; a run
that fails still writes it (no release: nothing spent) and then fails, so
Flower marks the run failed and the README's run block
(:mod:`engine.flower.outcome`) exits non-zero. Each run function imports what
its tool needs when it starts (a ServerApp process serves one tool).
"""

from __future__ import annotations

import json
import math
import time

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from engine.flower.outcome import COMPLETED, FAILED, RESULT_PREFIX
from engine.flower.run_config import run_settings

NODE_WAIT_SECONDS = 60.0
REPLY_POLL_SECONDS = 0.2
RECONSTRUCTION_THRESHOLD = 0.67   # SecAgg+: shares needed to unmask, as a fraction of the clients (at least 2)


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


class RunFailed(RuntimeError):
    """The run did not complete; its summary (status "failed") is written before this is raised."""


def _finish(summary: dict, settings: dict) -> dict:
    line = json.dumps(summary, default=float)
    print(RESULT_PREFIX + line, flush=True)
    if settings.get("result_file"):
        with open(settings["result_file"], "w", encoding="utf-8") as out:
            out.write(line)
    if summary.get("status") == FAILED:
        raise RunFailed(summary.get("error") or "the run failed")
    return summary


def _error(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _randomness_note(source: str) -> None:
    from engine.flower.randomness import SERVER_SECRET_ENV, TEST_SECRET

    if source == TEST_SECRET:
        print(f"WARNING: {SERVER_SECRET_ENV} is set: the server's subsample and noise come from that test-only "
              "secret and the run's seed. Never in a deployment: two runs with the same secret and seed reuse the "
              "same noise.", flush=True)
    else:
        print("The server's subsample and noise come from the operating system's entropy.", flush=True)


def run_fbo(grid: Grid, context: Context) -> dict:
    import numpy as np
    from flwr.app import Array, ArrayRecord

    from engine.flower.fbo_strategy import DpFtsDeStrategy
    from engine.flower.settings import fbo_config

    settings = run_settings(context.run_config, "fbo")
    start = time.perf_counter()
    try:
        config = fbo_config(settings)
        strategy = DpFtsDeStrategy(config)
    except Exception as err:  # noqa: BLE001 - any failure is the run's: nothing released, nothing spent
        return _finish({"tool": "fbo", "status": FAILED, "error": _error(err), "releases": 0, "epsilon": 0.0,
                        "delta": settings.get("delta")}, settings)
    _randomness_note(strategy.randomness)
    nodes = wait_for_nodes(grid, strategy.n_agents)
    waited, began = time.perf_counter() - start, time.monotonic()
    initial = ArrayRecord({"broadcast": Array(np.zeros((strategy.P, config.features)))})
    status, error = COMPLETED, None
    try:
        strategy.start(grid, initial, num_rounds=config.iterations + 1, timeout=settings["reply_timeout"])
    except Exception as err:  # noqa: BLE001 - any failure is the run's: the summary says what was released
        status, error = FAILED, _error(err)
    ends = [began] + strategy.round_ends
    summary = {"tool": "fbo", "status": status, "error": error, "nodes": nodes, **strategy.run_summary(),
               "seconds": time.perf_counter() - start, "node_wait_seconds": waited,
               "round_seconds": [b - a for a, b in zip(ends, ends[1:])]}
    if summary["epsilon"] is None and not summary["releases"]:
        summary["epsilon"] = 0.0
    return _finish(summary, settings)


def run_hype(grid: Grid, context: Context) -> dict:
    from flwr.server import LegacyContext, ServerConfig
    from flwr.server.workflow import DefaultWorkflow

    from engine.flower.hype_strategy import DropoutTolerantSecAggPlus, SecAggHypeStrategy
    from engine.flower.settings import hype_config
    from engine.flower.voter import QUANTIZATION_RANGE, quantisation_report, secagg_plan

    settings = run_settings(context.run_config, "hype")
    start = time.perf_counter()
    try:
        config = hype_config(settings)
    except Exception as err:  # noqa: BLE001 - any failure is the run's: nothing released, nothing spent
        return _finish({"tool": "hype", "status": FAILED, "error": _error(err), "winner": None, "epsilon": 0.0,
                        "delta": settings.get("delta")}, settings)
    sigma = float(config.sigma)
    plan = secagg_plan(sigma, config.clients, config.p, config.k, config.delta, config.xi)
    print(quantisation_report(plan), flush=True)
    strategy = SecAggHypeStrategy(config, sigma)
    nodes = wait_for_nodes(grid, config.clients)
    waited = time.perf_counter() - start
    status, error, workflow = COMPLETED, None, None
    try:
        legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=1), strategy=strategy)
        workflow = DropoutTolerantSecAggPlus(num_shares=1.0, reconstruction_threshold=RECONSTRUCTION_THRESHOLD,
                                             max_weight=1.0, clipping_range=plan.clipping_range,
                                             quantization_range=QUANTIZATION_RANGE,
                                             timeout=float(settings["reply_timeout"]),
                                             min_reports=math.ceil((1.0 - config.xi) * config.clients - 1e-9))
        DefaultWorkflow(fit_workflow=workflow)(grid, legacy)
    except Exception as err:  # noqa: BLE001 - any failure is the run's: the summary says if the winner was out
        status, error = FAILED, _error(err)
    if status == COMPLETED and strategy.winner is None:
        status, error = FAILED, (workflow.halted if workflow and workflow.halted
                                 else "the secure aggregation ended without a sum")
    summary = {"tool": "hype", "status": status, "error": error, "nodes": nodes, "winner": strategy.winner,
               "reported": strategy.reported, "secure_aggregation": strategy.secure_aggregation, "sigma": sigma,
               **strategy.spent(), "noisy_sum": None if strategy.noisy_sum is None else strategy.noisy_sum.tolist(),
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
