"""The DP-FTS-DE agent as a Flower ClientApp (its numpy logic is :mod:`engine.flower.agent`).

:func:`make_client_app` takes the objective hook ``evaluate(x) -> float`` (x
in [0, 1]^D, larger is better). Without one, agent n evaluates agent n's
function of the engine's synthetic task (a noisy draw, as in the simulation)
and also reports its simple regret (the engine's metric), which only a task
that knows its noiseless values can.
The run config's seed seeds only what is shared (the features, the synthetic
task and its observation noise); the agent's own draws come from its own
entropy. The agent's index is the node's ``partition-id`` (``--node-config
"partition-id=0"`` when the SuperNode starts); its observations live in the
node's ``Context.state`` between rounds.

Canary nodes (a one-run privacy audit of a federation, :mod:`engine.flower.canary`):
a SuperNode whose node config says ``canary="in"`` replies, every round, the vector
along its own axis (the ``partition-id``-th feature) at the clip bound S / sqrt(P)
(times ``canary-norm``, default 1), and ``canary="out"`` replies the zero vector
(the output law of an absent agent). The audit's operator sets it when starting
the canary SuperNodes; the app is the same.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from flwr.app import Array, ArrayRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from engine.flower.agent import AgentSettings, FboAgent, agent_settings
from engine.flower.randomness import agent_generator
from engine.flower.run_config import run_settings

STATE_KEY = "agent-observations"


def default_objective(settings: dict):
    """The engine's synthetic task of the run (the agents' objective when no hook is given)."""
    from engine.objectives import build_objective

    return build_objective("synthetic", n_agents=int(settings["agents"]), alpha=settings.get("alpha"),
                           seed=int(settings.get("objective_seed", 0)), domain="continuous", split=None)


def simple_regret(objective, index: int, X: np.ndarray) -> float:
    """reference - best noiseless value among ``X``: the engine's metric of agent ``index`` (lower is better)."""
    values = objective.value(np.full(len(X), int(index)), np.asarray(X, dtype=float))
    return float(objective.reference[int(index)] - np.max(values))


def default_evaluate(index: int, settings: dict, t: int = 0, objective=None) -> Callable[[np.ndarray], float]:
    """Agent ``index``'s function of the engine's synthetic task, observed with its noise (round ``t``'s draws)."""
    objective = objective if objective is not None else default_objective(settings)
    rng = np.random.default_rng((int(settings.get("seed", 0)), 11, index, int(t)))
    agents = np.array([index])

    def evaluate(x: np.ndarray) -> float:
        value = float(objective.value(agents, np.asarray(x, dtype=float)[None])[0])
        return value + objective.noise_std * float(rng.standard_normal())

    return evaluate


CANARY_KEY = "canary"
CANARY_STATES = ("in", "out")


def canary_vector(index: int, settings: dict, state: str, norm: float = 1.0) -> np.ndarray:
    """A canary node's reply: along axis ``index`` at ``norm`` clip bounds when it is in, zero when it is out."""
    vector = np.zeros(int(settings["features"]))
    if state == "in":
        vector[int(index) % vector.size] = float(norm) * float(settings["S"]) / np.sqrt(int(settings.get("P", 1)))
    return vector


def canary_round(msg: Message, context: Context, settings: dict, index: int) -> Message:
    """One round of a canary node: its canary vector, no optimisation (see the module docstring)."""
    state = str(context.node_config[CANARY_KEY])
    if state not in CANARY_STATES:
        raise ValueError(f"canary must be one of {', '.join(CANARY_STATES)}, got {state!r}.")
    vector = canary_vector(index, settings, state, float(context.node_config.get("canary-norm", 1.0)))
    content = RecordDict({"omega": ArrayRecord({"omega": Array(vector)}),
                          "metrics": MetricRecord({"agent": index, "best": 0.0, "queries": 0, "used_broadcast": 0})})
    return Message(content=content, reply_to=msg)


def agent_round(msg: Message, context: Context, evaluate=None, rng: np.random.Generator | None = None,
                secret: str | int | None = None) -> Message:
    """One round of agent ``partition-id``: query a point, reply with omega and what it has seen.

    The agent's own draws (its initial points, candidates, Thompson samples and omega) come from its own entropy
    (:func:`engine.flower.randomness.agent_generator`; test-only: the node's secret, from its environment or
    ``secret``), ``rng`` when given.
    """
    settings = run_settings(context.run_config, "fbo")
    index = int(context.node_config.get("partition-id", 0))
    if CANARY_KEY in context.node_config:
        return canary_round(msg, context, settings, index)
    config = msg.content["config"]
    t = int(config["iteration"])
    broadcast = msg.content["broadcast"]["broadcast"].numpy() if bool(config["has_broadcast"]) else None
    stored = context.state.array_records.get(STATE_KEY)
    X = stored["X"].numpy() if stored is not None else None
    y = stored["y"].numpy() if stored is not None else None
    objective = default_objective(settings) if evaluate is None else None
    hook = evaluate if evaluate is not None else default_evaluate(index, settings, t, objective)
    agent = FboAgent(index, AgentSettings(**agent_settings(settings)), hook, X, y)
    if rng is None:
        rng = agent_generator(int(settings.get("seed", 0)), index, t, secret)
    omega, used = agent.round(t, broadcast, rng)
    context.state[STATE_KEY] = ArrayRecord({"X": Array(agent.X), "y": Array(agent.y)})
    metrics = {"agent": index, "best": agent.best, "queries": int(len(agent.y)), "used_broadcast": int(used)}
    if objective is not None:      # the synthetic task knows its noiseless values: report the engine's metric
        metrics["regret"] = simple_regret(objective, index, agent.X)
    content = RecordDict({
        "omega": ArrayRecord({"omega": Array(np.asarray(omega, dtype=float))}),
        "metrics": MetricRecord(metrics),
    })
    return Message(content=content, reply_to=msg)


def make_client_app(evaluate: Callable[[np.ndarray], float] | None = None) -> ClientApp:
    """A ClientApp whose agents evaluate ``evaluate`` (the synthetic task when None)."""
    app = ClientApp()

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        return agent_round(msg, context, evaluate)

    return app
