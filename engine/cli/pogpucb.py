"""``python -m engine pogpucb``: PO-GP-UCB against non-private GP-UCB on one data set."""

from __future__ import annotations

import math

from engine.limits import pogpucb_cost
from engine.pogpucb import TASK_DEFAULTS, PoConfig, run_pogpucb
from engine.settings import add_config_arguments, add_config_file_argument, values_from_args
from engine.settings import command_line as settings_command_line
from engine.validation import check_range

HELP = ("PO-GP-UCB (private outsourced BO by random projection): simple regret over runs against "
        "non-private GP-UCB, the curator's branch (sigma_min vs omega) and the largest admissible r.")


def add_arguments(parser) -> None:
    # One option per PoConfig field, from its declaration; epsilon and its log share a group.
    eps = parser.add_mutually_exclusive_group()
    eps.add_argument("--log-epsilon", type=float, help="log of epsilon, as the paper reports it (e.g. 1.1)")
    add_config_file_argument(parser)
    add_config_arguments(parser, PoConfig, containers={"epsilon": eps})


def config_from_args(args) -> PoConfig:
    values = values_from_args(args, PoConfig)
    dataset = values.get("dataset", PoConfig.dataset)
    defaults = TASK_DEFAULTS.get(dataset, TASK_DEFAULTS[PoConfig.dataset])
    if args.log_epsilon is not None:
        values["epsilon"] = math.exp(check_range("log_epsilon", args.log_epsilon, -20, 20, name="log epsilon"))
    elif values.get("epsilon") is None:
        values["epsilon"] = math.exp(defaults["log_epsilon"])
    for name in ("delta", "r"):
        if values.get(name) is None:
            values[name] = defaults[name]
    return PoConfig(**values)


def command_line(config: PoConfig) -> str:
    """``python -m engine pogpucb ...`` that runs ``config`` (only its non-default settings)."""
    defaults = TASK_DEFAULTS.get(config.dataset, {})
    omit = tuple(name for name in ("delta", "r") if defaults.get(name) == getattr(config, name))
    if "log_epsilon" in defaults and config.epsilon == math.exp(defaults["log_epsilon"]):
        omit += ("epsilon",)
    return settings_command_line("pogpucb", config, omit=omit)


def cost(args):
    return pogpucb_cost(config_from_args(args))


def run(args) -> dict:
    return run_pogpucb(config_from_args(args)).to_json()
