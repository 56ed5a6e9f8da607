"""The DP-HYPE client as a Flower ClientApp behind Flower's SecAgg+ mod.

:func:`make_client_app` takes the local-data hook ``local_losses(p) -> (p,)``
losses, lower is better (train and score each candidate on the node's own
data there). Without one, client n scores with the paper's simulated losses
(:func:`engine.flower.voter.simulated_losses`). The client votes for its k
best candidates and adds its share of the noise (:func:`engine.flower.voter.client_vote`);
``secaggplus_mod`` then masks and quantises the message, so the server
learns only the sum.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from flwr.app import Context
from flwr.client import NumPyClient
from flwr.client.mod import secaggplus_mod
from flwr.clientapp import ClientApp

from engine.flower.run_config import run_settings


class VoteClient(NumPyClient):
    """Client ``index``: its noisy vote is its 'model', weighted 1 so SecAgg+ returns the mean."""

    def __init__(self, index: int, settings: dict, local_losses: Callable[[int], np.ndarray] | None,
                 secret: str | int | None = None):
        self.index, self.settings, self.local_losses, self.secret = index, settings, local_losses, secret

    def generator(self) -> np.random.Generator:
        """The client's noise generator: fresh and secret, the node's own entropy, never the run config's seed
        (test-only: the node's secret, from its environment or ``secret``; engine.flower.randomness)."""
        from engine.flower.randomness import client_generator

        return client_generator(int(self.settings.get("seed", 0)), self.index, self.secret)

    def fit(self, parameters, config):
        # Loaded here: SecAgg+'s other three stages start this app too, and need none of it.
        from engine.flower.voter import client_vote, simulated_losses

        s = self.settings
        p, k, std = int(config["candidates"]), int(config["k"]), float(config["std"])
        if self.local_losses is not None:
            losses = np.asarray(self.local_losses(p), dtype=float)
        else:
            losses = simulated_losses(self.index, p, int(s["good"]), float(s["sigma_loss"]), int(s["seed"]))
        return [client_vote(losses, k, std, self.generator())], 1, {}


def make_client_app(local_losses: Callable[[int], np.ndarray] | None = None) -> ClientApp:
    def client_fn(context: Context):
        settings = run_settings(context.run_config, "hype")
        return VoteClient(int(context.node_config.get("partition-id", 0)), settings, local_losses).to_client()

    return ClientApp(client_fn=client_fn, mods=[secaggplus_mod])
