"""``python -m engine advise``: the DP-FTS-DE (or DP-HYPE) setting that meets a team's budget, as JSON.

The JSON holds the recommended q, z, S, P and 1 - p_t with their predicted utility and standard error, the
settings tied with it, FTS-DE (no privacy) and TS (no collaboration) on the same seeds, the sensitivity table and
the deployment (the configuration ``fbo --config`` reads and its command line). ``--export-flower DIR`` also
writes the Flower app of the recommendation, ``--export-config FILE`` its configuration file. Stopped by the time
limit or Ctrl-C, the search prints what it found so far (``"stopped"``).
"""

from __future__ import annotations

import sys

from engine.advise import AdviceRequest, advice_of_search, hype_advice, iter_search, request_cost
from engine.advise.deploy import write_config
from engine.cancel import TIME_LIMIT, Cancelled, CancelToken, current, guarded
from engine.executor import add_arguments as add_executor_arguments
from engine.executor import from_args, use
from engine.settings import add_config_arguments, add_config_file_argument, values_from_args
from engine.settings import command_line as settings_command_line

HELP = "Settings advisor: the q, z, S, P (or DP-HYPE's k and noise) that meet a budget, with their utility, as JSON."
WHAT = "This search"


def add_arguments(parser) -> None:
    add_config_file_argument(parser)
    add_config_arguments(parser, AdviceRequest)
    add_executor_arguments(parser)
    parser.add_argument("--export-flower", metavar="DIR", default=None,
                        help="also write the recommendation as a Flower app into DIR")
    parser.add_argument("--export-config", metavar="FILE", default=None,
                        help="also write the recommendation's configuration (what fbo --config reads) to FILE")
    parser.add_argument("--data-dir", default=None, help="folder holding the data sets: sets DPBO_DATA_DIR for "
                                                         "this command")


def config_from_args(args) -> AdviceRequest:
    return AdviceRequest(**values_from_args(args, AdviceRequest))


def command_line(request: AdviceRequest) -> str:
    """``python -m engine advise ...`` that asks ``request`` again (only its non-default settings)."""
    return settings_command_line("advise", request)


def cost(args):
    """The search's price: every run it will make, its calibrations and its worker processes."""
    return request_cost(config_from_args(args), executor=from_args(args))


def run(args) -> dict:
    request = config_from_args(args)
    if request.algorithm == "dp-hype":
        advice = hype_advice(request)
        if args.export_flower or args.export_config:
            print("warning: the DP-HYPE advice's deployment is its command line (hype --config or export flower "
                  "--tool hype); --export-* writes only DP-FTS-DE apps.", file=sys.stderr)
        return advice.to_json()
    token = current() or CancelToken()
    search, stopped = None, None
    with use(from_args(args)):
        try:
            with guarded(token):
                for search in iter_search(request):
                    pass
        except Cancelled as err:
            if search is None:
                raise
            stopped = "time limit" if err.reason == TIME_LIMIT else "interrupted"
    advice = advice_of_search(search, stopped)
    out = advice.to_json()
    if advice.deployment is not None:
        if args.export_config:
            out["exported_config"] = write_config(advice, args.export_config)
        if args.export_flower:
            out["exported_flower"] = advice.export_flower(args.export_flower)
    if stopped:
        print(f"warning: the search was stopped ({stopped}) after {search.tasks_done} of {search.plan.tasks()} "
              "tasks; the advice is what it found so far.", file=sys.stderr)
    return out
