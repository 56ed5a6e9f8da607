"""A comparison of PO-GP-UCB settings: one configuration, or one per value of epsilon or r.

The paper reports epsilon as exp(1.1), exp(1.3), ...; a person may type
either log epsilon or epsilon, so every value goes through
:func:`epsilon_from`. Only the first curve runs the non-private baseline (it
does not depend on epsilon or r).
"""

from __future__ import annotations

import math

from engine.pogpucb.config import PoConfig
from engine.pogpucb.presets import TABLE_PRESETS, paper_regret
from engine.validation import ConfigError, check_range, parse_values

COMPARE = ("none", "epsilon", "r")


def epsilon_from(value: float, as_log: bool) -> float:
    """Epsilon from what a person typed: ``exp(value)`` for log epsilon (checked to [-20, 20])."""
    if as_log:
        return math.exp(check_range("log_epsilon", value, -20, 20, name="log epsilon"))
    return value


def label(config: PoConfig) -> str:
    return f"log ε = {config.log_epsilon:.2f}, r = {config.r}"


def build_variants(base: PoConfig, compare: str, values: str, *, as_log: bool) -> list[tuple[str, PoConfig]]:
    """The (label, PoConfig) of every curve; raises ConfigError (field ``values``) for a bad compared value."""
    if compare == "none":
        return [(f"PO-GP-UCB ({label(base)})", base)]
    kind = int if compare == "r" else float
    name = "r" if compare == "r" else ("log ε" if as_log else "ε")
    variants = []
    for value in parse_values(values, kind, name):
        try:
            if compare == "r":
                config = base.replace(r=value, baseline=not variants)
            else:
                config = base.replace(epsilon=epsilon_from(value, as_log), baseline=not variants)
        except ConfigError as err:
            raise ConfigError(f"Compared value {name} = {value:g}: {err}", "values") from None
        variants.append((f"PO-GP-UCB ({label(config)})", config))
    return variants


def paper_value(config: PoConfig) -> float | None:
    """The paper's S_50 for this setting (Tables 1-3: synthetic GP, T = 50), None when it has none."""
    if config.dataset != "synthetic" or config.iterations != 50:
        return None
    for name, preset in TABLE_PRESETS.items():
        if abs(preset["log_epsilon"] - config.log_epsilon) < 1e-6:
            return paper_regret(name, config.r)
    return None
