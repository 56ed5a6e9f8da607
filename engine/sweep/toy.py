"""A toy 'engine' with a privacy-utility trade-off, for trying and testing sweeps cheaply.

``x`` plays the noise multiplier: more noise, less privacy loss and worse
utility. ``fail_at`` makes the cell with ``x == fail_at`` raise, to show how a
sweep records a failure; ``sleep`` makes each call take a while.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.validation import check_int, check_positive, check_range


@dataclass(frozen=True)
class ToyConfig:
    x: float = 1.0          # "noise multiplier"
    y: float = 0.0          # an offset added to the loss
    noise: float = 0.05     # run-to-run standard deviation of the loss
    sleep: float = 0.0      # seconds each call waits
    fail_at: float | None = None
    runs: int = 1
    seed: int = 0

    def __post_init__(self):
        check_positive("x", self.x)
        check_range("y", self.y)
        check_range("noise", self.noise, 0)
        check_range("sleep", self.sleep, 0, 60)
        check_int("runs", self.runs, 1, name="number of runs")
        check_int("seed", self.seed, 0)


def run_toy(config: ToyConfig) -> tuple[np.ndarray, float]:
    """Per-run losses (lower is better) and the privacy loss of the setting."""
    if config.sleep:
        time.sleep(config.sleep)
    if config.fail_at is not None and config.x == config.fail_at:
        raise RuntimeError(f"toy failure injected at x={config.x:g}")
    rng = np.random.default_rng(config.seed)
    loss = 1.0 - 1.0 / (1.0 + config.x) + config.y + config.noise * rng.standard_normal(config.runs)
    epsilon = 4.0 / config.x
    return loss, epsilon
