"""``python -m engine fbo``: run a federated BO experiment and print its result as JSON."""

from __future__ import annotations

import sys

from engine.fbo import FboConfig, run_fbo
from engine.fbo.plan import make_plan, plan_cost
from engine.settings import add_config_arguments, add_config_file_argument, values_from_args
from engine.settings import command_line as settings_command_line

HELP = "Federated BO (TS, FTS, FTS-DE, DP-FTS, DP-FTS-DE): mean metric per iteration and privacy loss, as JSON."



def add_arguments(parser) -> None:
    # One option per FboConfig field, from its declaration; values are checked by FboConfig (one sentence per
    # bad value), so no argparse choices here.
    add_config_file_argument(parser)
    add_config_arguments(parser, FboConfig)
    parser.add_argument("--data-dir", default=None,
                        help="folder holding the data sets: sets DPBO_DATA_DIR for this command")


def config_from_args(args) -> FboConfig:
    return FboConfig(**values_from_args(args, FboConfig))


def command_line(config: FboConfig) -> str:
    """``python -m engine fbo ...`` that runs ``config`` (only its non-default settings)."""
    return settings_command_line("fbo", config)


def cost(args):
    """The run's price as its plan counts it (a real task's table only when it is not cached yet)."""
    return plan_cost(config_from_args(args))


def run(args) -> dict:
    config = config_from_args(args)
    warning = make_plan(config).delta_warning       # the privacy curve is cached: the run reuses it
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    return run_fbo(config).to_json()
