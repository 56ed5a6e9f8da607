"""The explorer's settings as a Flower run config, and back (no Flower needed).

A Flower run config holds ints, floats, strings and booleans, no None: a
setting left at None (e.g. delta = 1 / N^1.1) is resolved before export or
left out. The names are the fields of :class:`engine.fbo.FboConfig` and
:class:`engine.hype.HypeConfig`, so ``--run-config "q=0.5"`` on ``flwr run``
changes the same q as the explorer's control.
"""

from __future__ import annotations

import dataclasses

from engine.fbo.config import FboConfig
from engine.hype.config import HypeConfig
from engine.flower.agent import agent_settings
from engine.flower.run_config import FBO_APP, FBO_SETTINGS, HYPE_APP, HYPE_SETTINGS, SETTINGS, TOOLS, run_settings
from engine.validation import ConfigError

__all__ = ["CONFIGS", "SETTINGS", "TOOLS", "agent_settings", "fbo_config", "hype_config", "run_config", "run_settings"]

CONFIGS = {"fbo": FboConfig, "hype": HypeConfig}


def check_tool(tool: str) -> str:
    if tool not in TOOLS:
        raise ConfigError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}.", "tool")
    return tool


def fbo_run_config(config: FboConfig) -> dict:
    """The run config of a DP-FTS-DE app with ``config``'s settings (validated for a Flower deployment).

    It describes the run and builds nothing: the number of agents and the default delta are resolved from the
    configuration, the synthetic task's lengthscale, noise and dimension are its declared constants. The app
    plans the run (z calibrated, the privacy curve) and each agent builds its own function where it runs, so
    exporting a million agents writes the same few small files as exporting four.
    """
    if not config.uses_server:
        raise ConfigError(f"{config.algorithm.upper()} has no central server to deploy; choose FTS-DE, DP-FTS or "
                          "DP-FTS-DE.", "algorithm")
    if config.dataset != "synthetic":
        raise ConfigError("The exported agents evaluate the synthetic task unless you give them your own "
                          "objective; export with dataset synthetic and replace evaluate(x) in client_app.py.",
                          "dataset")
    from engine.fbo.plan import resolve_agents       # loaded by the export only
    from engine.objectives import synthetic
    from engine.privacy import default_delta

    config = config.replace(runs=1, domain="continuous")
    out = {name: getattr(config, name) for name in FBO_SETTINGS}
    out["agents"] = resolve_agents(config)
    if config.is_private and config.delta is None:
        out["delta"] = default_delta(out["agents"])
    out["lengthscale"] = float(config.lengthscale or synthetic.LENGTHSCALE)
    out["noise_var"] = float(config.noise_var or synthetic.NOISE_VAR)
    out.update(FBO_APP, dim=synthetic.DIM)
    return {name: value for name, value in out.items() if value is not None}


def hype_run_config(config: HypeConfig) -> dict:
    """The run config of a DP-HYPE app with ``config``'s settings (simulated local losses)."""
    if config.mode != "simulation":
        raise ConfigError("The exported DP-HYPE clients score candidates on simulated local losses (paper "
                          "Sec. V-B); export from the simulated-losses mode.", "mode")
    from engine.hype.calibration import noise_summary

    noise = noise_summary(config)
    out = {name: getattr(config, name) for name in HYPE_SETTINGS}
    out["sigma"], out["epsilon"] = float(noise.sigma), None
    out.update(HYPE_APP)
    return {name: value for name, value in out.items() if value is not None}


def run_config(tool: str, config) -> dict:
    return fbo_run_config(config) if check_tool(tool) == "fbo" else hype_run_config(config)


def fbo_config(settings: dict) -> FboConfig:
    """The :class:`FboConfig` of a run's settings (one run, continuous domain)."""
    names = {f.name for f in dataclasses.fields(FboConfig)}
    fields = {k: v for k, v in settings.items() if k in names and k in FBO_SETTINGS}
    return FboConfig(**fields, dataset="synthetic", domain="continuous", runs=1)


def hype_config(settings: dict) -> HypeConfig:
    fields = {k: v for k, v in settings.items() if k in HYPE_SETTINGS and k != "epsilon"}
    return HypeConfig(**fields, mode="simulation", epsilon=None)
