"""``python -m engine audit``: attack a mechanism's own code and bound the epsilon it really has."""

from __future__ import annotations

import sys

from engine.audit import (
    MECHANISMS,
    OneRunAudit,
    ServerAudit,
    VoteAudit,
    audit_cost,
    one_run_cost,
    run_audit,
    run_one_run,
)
from engine.executor import add_arguments as add_executor_arguments
from engine.executor import from_args
from engine.limits import flower_one_run_cost, participant_audit_cost, strategy_audit_cost
from engine.settings import add_config_arguments, public
from engine.validation import ConfigError, check_choice

WHAT = "This audit"
HELP = "Empirical privacy audit: claimed epsilon against a lower bound proved by attacking the mechanism, as JSON."

# Options of one game only, and those both games share: from the fields of ServerAudit and VoteAudit.
COMMON_OPTIONS = tuple(name for name in public(ServerAudit) if name in public(VoteAudit))
SERVER_OPTIONS = tuple(name for name in public(ServerAudit) if name not in COMMON_OPTIONS)
VOTE_OPTIONS = tuple(name for name in public(VoteAudit) if name not in COMMON_OPTIONS)
# The one-run audit of the server: its fields (all but "canaries" are also the server game's options).
ONE_RUN_OPTIONS = tuple(public(OneRunAudit))
NOT_FOR_ONE_RUN = tuple(name for name in (*SERVER_OPTIONS, *COMMON_OPTIONS) if name not in ONE_RUN_OPTIONS)


def add_arguments(parser) -> None:
    # Values are checked by the audit configurations (one sentence each), so no argparse choices here.
    parser.add_argument("--mechanism", default="fbo-server", metavar="{" + ",".join(MECHANISMS + ("flower",)) + "}")
    flower = parser.add_argument_group("flower (a Flower strategy's aggregate_train; uses --q --z --S --agents "
                                       "--features --steps --canary-norm)")
    flower.add_argument("--strategy", help="built-in name or MODULE:FACTORY (local only); see engine.flower.audit")
    flower.add_argument("--claimed-epsilon", type=float, help="claim to test instead of the strategy's accountant")
    flower.add_argument("--attacker", default="game",
                        help="game (the distinguishing game) or participant (one agent that knows the run config, "
                             "the app's code, its own replies and every broadcast regenerates the noise)")
    parser.add_argument("--one-run", action="store_true",
                        help="audit one run of all T releases with --canaries canary agents (each in with "
                             "probability 1/2) instead of many trials of the game (fbo-server, flower)")
    parser.add_argument("--workers", type=int, default=1, help="processes to play the trials in (same scores)")
    add_executor_arguments(parser, workers=False)
    server = parser.add_argument_group("fbo-server (DP-FTS-DE server round)")
    votes = parser.add_argument_group("hype-votes (DP-HYPE noisy vote sum)")
    add_config_arguments(parser, ServerAudit, containers={name: server for name in SERVER_OPTIONS})
    add_config_arguments(parser, VoteAudit, containers={name: votes for name in VOTE_OPTIONS}, skip=COMMON_OPTIONS)
    one_run = parser.add_argument_group("--one-run (the server's options above and)")
    add_config_arguments(one_run, OneRunAudit, skip=tuple(name for name in ONE_RUN_OPTIONS if name != "canaries"))


def one_run_config(args) -> OneRunAudit:
    """The server's one-run audit of ``--one-run --mechanism fbo-server``."""
    stray = [name for name in (*NOT_FOR_ONE_RUN, *VOTE_OPTIONS) if getattr(args, name, None) is not None]
    if stray:
        raise ConfigError(f"--{stray[0].replace('_', '-')} does not apply to the one-run audit.", stray[0])
    settings = {name: getattr(args, name) for name in ONE_RUN_OPTIONS if getattr(args, name, None) is not None}
    return OneRunAudit(**settings)


def config_from_args(args):
    mechanism = check_choice("mechanism", args.mechanism, MECHANISMS)
    if getattr(args, "one_run", False):
        if mechanism != "fbo-server":
            raise ConfigError("--one-run audits the fbo-server or a flower strategy; a DP-HYPE vote is one release, "
                              "audited by its many-trial game.", "mechanism")
        return one_run_config(args)
    if getattr(args, "canaries", None) is not None:
        raise ConfigError("--canaries applies to the one-run audit only (--one-run).", "canaries")
    own, other = (SERVER_OPTIONS, VOTE_OPTIONS) if mechanism == "fbo-server" else (VOTE_OPTIONS, SERVER_OPTIONS)
    stray = [name for name in other if getattr(args, name) is not None]
    if stray:
        option = "--" + stray[0].replace("_", "-")
        raise ConfigError(f"{option} does not apply to the {mechanism} mechanism.", stray[0])
    settings = {name: getattr(args, name) for name in (*own, *COMMON_OPTIONS) if getattr(args, name) is not None}
    if mechanism == "hype-votes" and settings.get("sigma") is not None and "epsilon" not in settings:
        settings["epsilon"] = None
    return (ServerAudit if mechanism == "fbo-server" else VoteAudit)(**settings)


def cost(args):
    from_args(args)         # --scheduler without --executor dask, a malformed address: one sentence
    if args.mechanism == "flower":
        from engine.cli.audit_flower import config_from_args as flower_config   # loads no Flower
        from engine.flower.audit_config import ParticipantAudit

        config = flower_config(args)
        if isinstance(config, ParticipantAudit):
            return participant_audit_cost(config.app, config.agents, config.steps)
        if getattr(args, "one_run", False):
            return flower_one_run_cost(config.canaries, config.steps)
        return strategy_audit_cost(config.trials, config.steps, config.agents, config.features)
    if args.strategy is not None or args.claimed_epsilon is not None or args.attacker != "game":
        raise ConfigError("--strategy, --claimed-epsilon and --attacker apply to the flower mechanism only.",
                          "strategy")
    config = config_from_args(args)
    return one_run_cost(config) if isinstance(config, OneRunAudit) else audit_cost(config)


def run(args) -> dict:
    if args.mechanism == "flower":
        from engine.cli.audit_flower import run_flower      # the Flower bridge, loaded only when asked for

        return run_flower(args)
    config = config_from_args(args)
    result = run_one_run(config) if isinstance(config, OneRunAudit) else run_audit(config, executor=from_args(args))
    if result.violation:
        print(f"warning: {result.verdict}", file=sys.stderr)
    return result.to_json()
