"""The exported DP-FTS-DE server as it was before its randomness came from secrets: known broken, kept as a control.

Its subsample and noise come from a generator seeded by the run config's seed, which every participant holds
(``engine.flower.participant`` regenerates them; the audits' one-run shadow statistic does too). The privacy
audit's built-in target ``dp-fts-de-public-seed`` and the participant's attack use it as a negative control.
"""

from __future__ import annotations

import numpy as np

from engine.fbo.config import FboConfig
from engine.flower.fbo_strategy import DpFtsDeStrategy


class PublicSeedStrategy(DpFtsDeStrategy):
    """Known broken (the server as exported before): its subsample and noise from the run config's seed."""

    def __init__(self, config: FboConfig, rng=None, secret=None):
        super().__init__(config, rng=np.random.default_rng(config.seed))
        self.randomness = "public-seed"
