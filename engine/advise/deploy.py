"""One click to deploy: the recommendation as the configuration file ``fbo --config`` reads, the command line
that runs it, and the Flower app (:mod:`engine.flower.export`, secured by default).

All three carry the same setting: q, S, P and 1 - p_t as recommended, the budget with z calibrated to it (the
run plan, the command line and the Flower app's server recompute exactly the recommended z), N, T and delta.
The Flower app's agents evaluate the team's own objective (``evaluate(x)`` in its ``client_app.py``) on [0, 1]^D
with the task's dimension and shared-feature settings; with the hook left empty they evaluate the synthetic task.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.fbo.config import FboConfig
from engine.flower.export import app_zip, export_app

__all__ = ["app_zip", "config_text", "export_app", "flower_config", "write_config"]


def config_text(config: FboConfig) -> str:
    """The configuration file of a deployment (JSON of every FboConfig field; ``fbo --config FILE`` runs it)."""
    return json.dumps(config.to_dict(), indent=2) + "\n"


def write_config(advice, path: str) -> str:
    """Write the recommendation's configuration file to ``path``; returns the path."""
    Path(path).write_text(advice.config_text(), encoding="utf-8")
    return str(path)


def flower_config(config: FboConfig) -> FboConfig:
    """The deployment as a Flower app exports it: the same knobs, budget, N, T and delta; the agents' objective is
    the app's hook (the built-in task's data stays with the explorer)."""
    return config.replace(dataset="synthetic", split=None, alpha=None, domain="continuous")

