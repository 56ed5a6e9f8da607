"""The run-config names of the exported Flower apps and their types (imports nothing of the engine).

The ClientApps read their settings with :func:`run_settings` only, so a
client process (Flower starts one per message) does not load the server's
planning and accounting code.
"""

from __future__ import annotations

TOOLS = ("fbo", "hype")
# Settings of each tool that the exported app reads, with their types (None: resolved or left out).
FBO_SETTINGS = {"algorithm": str, "agents": int, "iterations": int, "features": int, "lengthscale": float,
                "noise_var": float, "q": float, "z": float, "S": float, "P": int, "sampling": str,
                "pt_schedule": str, "pt_constant": float, "weights": str, "weight_a": float,
                "weight_schedule": str, "local_exploration": bool, "n_init": int, "alpha": float,
                "objective_seed": int, "seed": int, "accountant": str, "delta": float, "budget": float,
                "calibrate_z": bool}
HYPE_SETTINGS = {"clients": int, "candidates": int, "good": int, "sigma_loss": float, "k": int,
                 "epsilon": float, "sigma": float, "delta": float, "xi": float, "seed": int}
# Settings of the app itself (not of the explorer's configuration), with their defaults.
# reply_timeout: seconds a round waits for the agents' replies; an agent that has not replied by then counts as
# sending the zero vector for that round (engine.flower.fbo_strategy, docs/flower.md "Dropouts").
FBO_APP = {"dim": 1, "candidates": 256, "result_file": "", "reply_timeout": 120.0}
# reply_timeout (DP-HYPE): seconds each SecAgg+ stage waits for the clients' answers; a client that has not
# answered by then is a dropout of that stage (engine.flower.hype_strategy.DropoutTolerantSecAggPlus).
HYPE_APP = {"result_file": "", "reply_timeout": 120.0}
SETTINGS = {"fbo": FBO_SETTINGS, "hype": HYPE_SETTINGS}
APP_SETTINGS = {"fbo": FBO_APP, "hype": HYPE_APP}


def run_settings(run_config_values, tool: str) -> dict:
    """Typed settings from a Flower run config (what ``context.run_config`` holds)."""
    values = dict(run_config_values)
    out = dict(APP_SETTINGS[tool])
    for name, kind in {**SETTINGS[tool], **{k: type(v) for k, v in APP_SETTINGS[tool].items()}}.items():
        if name in values:
            out[name] = kind(values[name])
    return out
