"""Where a deployed federation's privacy-protecting randomness comes from (numpy only: clients import it).

In a deployment the DP-FTS-DE server's subsample and noise, and every agent's own draws, come from the
operating system's entropy (``numpy.random.default_rng()`` with no seed), never from anything in the run config
or the app's code: the run config's ``seed`` goes to every SuperNode, so a generator seeded by it is one every
participant can regenerate (``engine.flower.participant`` is that participant's attack). The run config's seed
seeds only what is meant to be shared: the shared random features and the simulated objective.

Test-only switch: a reproducible federation for tests sets a secret in the environment of the SuperLink
(:data:`SERVER_SECRET_ENV`, inherited by the ServerApp process it starts) and of every SuperNode
(:data:`NODE_SECRET_ENV`, inherited by its ClientApp processes). The secret is never sent to the nodes or put in
the run config; with it the generators are seeded by (secret, the run's seed, the stream), so the same secret and
seed give the same federation and a participant without the secret cannot regenerate them. Never set it in a
deployment: two runs with the same secret and seed reuse the same noise, and their difference then shows the
difference of the aggregates without any noise.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

SERVER_SECRET_ENV = "DPBO_FLOWER_SERVER_SECRET"
NODE_SECRET_ENV = "DPBO_FLOWER_NODE_SECRET"
SERVER_STREAM = 17      # the server's subsample and noise
AGENT_STREAM = 13       # an agent's own draws in round t
OS_ENTROPY = "os-entropy"
TEST_SECRET = "test-secret"


def secret_number(secret: str | int | None) -> int | None:
    """The secret as a number (any text: its SHA-256), None when there is none."""
    if secret is None or secret == "":
        return None
    if isinstance(secret, int) and secret >= 0:
        return secret
    return int.from_bytes(hashlib.sha256(str(secret).encode()).digest()[:16], "big")


def _secret(explicit, variable: str) -> int | None:
    return secret_number(explicit if explicit is not None else os.environ.get(variable))


def source(secret: str | int | None = None, variable: str = SERVER_SECRET_ENV) -> str:
    """``"os-entropy"``, or ``"test-secret"`` when a secret is given or set in ``variable``."""
    return OS_ENTROPY if _secret(secret, variable) is None else TEST_SECRET


def server_generator(seed: int, secret: str | int | None = None) -> np.random.Generator:
    """The server's generator: the operating system's entropy, or (test only) the server's secret with ``seed``."""
    number = _secret(secret, SERVER_SECRET_ENV)
    if number is None:
        return np.random.default_rng()
    return np.random.default_rng((number, int(seed), SERVER_STREAM))


def agent_generator(seed: int, index: int, t: int, secret: str | int | None = None) -> np.random.Generator:
    """Agent ``index``'s generator in round ``t``: its own entropy, or (test only) the node's secret with them."""
    number = _secret(secret, NODE_SECRET_ENV)
    if number is None:
        return np.random.default_rng()
    return np.random.default_rng((number, int(seed), AGENT_STREAM, int(index), int(t)))


def client_generator(seed: int, index: int, secret: str | int | None = None) -> np.random.Generator:
    """A DP-HYPE client's generator for its share of the noise (as :func:`agent_generator`, one vote)."""
    return agent_generator(seed, index, 0, secret)
