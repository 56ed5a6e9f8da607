"""The explorer's settings as a Flower run config, and back (no Flower needed).

A Flower run config holds ints, floats, strings and booleans, no None: a
setting left at None (e.g. delta, from the configuration's delta rule) is resolved before export or
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
from engine.privacy import default_delta, delta_weakness
from engine.validation import ConfigError

__all__ = ["CONFIGS", "SETTINGS", "TOOLS", "agent_settings", "check_delta",
           "delta_note", "fbo_config", "hype_config", "run_config", "run_settings"]

CONFIGS = {"fbo": FboConfig, "hype": HypeConfig}


def check_delta(delta: float, n_agents: int, what: str = "agents") -> None:
    """Refuse a delta above 1/N in one sentence (such a guarantee allows one participant's data out)."""
    if delta > 1.0 / n_agents:
        raise ConfigError(f"delta = {delta:.3g} is more than 1/N = {1.0 / n_agents:.3g} for {n_agents} {what}: a "
                          "guarantee that weak allows releasing one participant's data outright; export with a "
                          "delta well below 1/N.", "delta")


def check_tool(tool: str) -> str:
    if tool not in TOOLS:
        raise ConfigError(f"tool must be one of {', '.join(TOOLS)}, got {tool!r}.", "tool")
    return tool


def fbo_run_config(config: FboConfig, dim: int | None = None) -> dict:
    """The run config of a DP-FTS-DE app with ``config``'s settings (validated for a Flower deployment);
    ``dim``: the dimension of the team's own objective (default: the synthetic task's).

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

    config = config.replace(runs=1, domain="continuous")
    n_agents = resolve_agents(config)
    out = {name: getattr(config, name) for name in FBO_SETTINGS}
    out["agents"] = n_agents
    if config.is_private:
        # The delta the team saw on the page or in the API for this N: the one delta rule (engine.privacy).
        delta = config.delta if config.delta is not None else default_delta(n_agents, config.delta_rule)
        check_delta(delta, n_agents)
        out["delta"] = delta
    out["lengthscale"] = float(config.lengthscale or synthetic.LENGTHSCALE)
    out["noise_var"] = float(config.noise_var or synthetic.NOISE_VAR)
    out.update(FBO_APP, dim=synthetic.DIM if dim is None else int(dim))
    return {name: value for name, value in out.items() if value is not None}


def hype_run_config(config: HypeConfig) -> dict:
    """The run config of a DP-HYPE app with ``config``'s settings (simulated local losses)."""
    if config.mode != "simulation":
        raise ConfigError("The exported DP-HYPE clients score candidates on simulated local losses (paper "
                          "Sec. V-B); export from the simulated-losses mode.", "mode")
    from engine.hype.calibration import noise_summary

    check_delta(config.delta, config.clients, "clients")
    noise = noise_summary(config)
    out = {name: getattr(config, name) for name in HYPE_SETTINGS}
    out["sigma"], out["epsilon"] = float(noise.sigma), None
    out.update(HYPE_APP)
    return {name: value for name, value in out.items() if value is not None}


def delta_note(tool: str, config, settings: dict) -> str:
    """One sentence on the delta of the exported app (``settings``: its run config)."""
    if tool == "hype":
        return f"delta = {settings['delta']:g} for {settings['clients']} clients (the explorer's DP-HYPE delta)."
    if "delta" not in settings:
        return "No differential privacy: this algorithm releases without noise, so there is no delta."
    n = settings["agents"]
    delta = settings["delta"]
    if config.delta is not None:
        source = "as given"
    elif config.delta_rule == "paper":
        source = "the DP-FTS-DE paper's 1/N^1.1, as on the page that reproduces it"
    else:
        source = "the product's rule: 1e-5, or 1 % of 1/N when smaller"
    weak = delta_weakness(delta, n)
    return f"delta = {delta:.3g} for {n} agents ({source})." + (f" Warning: {weak}" if weak else "")


def run_config(tool: str, config, dim: int | None = None) -> dict:
    return fbo_run_config(config, dim) if check_tool(tool) == "fbo" else hype_run_config(config)


def fbo_config(settings: dict) -> FboConfig:
    """The :class:`FboConfig` of a run's settings (one run, continuous domain)."""
    names = {f.name for f in dataclasses.fields(FboConfig)}
    fields = {k: v for k, v in settings.items() if k in names and k in FBO_SETTINGS}
    return FboConfig(**fields, dataset="synthetic", domain="continuous", runs=1)


def hype_config(settings: dict) -> HypeConfig:
    fields = {k: v for k, v in settings.items() if k in HYPE_SETTINGS and k != "epsilon"}
    return HypeConfig(**fields, mode="simulation", epsilon=None)
