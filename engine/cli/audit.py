"""``python -m engine audit``: attack a mechanism's own code and bound the epsilon it really has."""

from __future__ import annotations

import sys

from engine.audit import MECHANISMS, ServerAudit, VoteAudit, audit_cost, run_audit
from engine.executor import add_arguments as add_executor_arguments
from engine.executor import from_args
from engine.limits import participant_audit_cost, strategy_audit_cost
from engine.settings import add_config_arguments, public
from engine.validation import ConfigError, check_choice

WHAT = "This audit"
HELP = "Empirical privacy audit: claimed epsilon against a lower bound proved by attacking the mechanism, as JSON."

# Options of one game only, and those both games share: from the fields of ServerAudit and VoteAudit.
COMMON_OPTIONS = tuple(name for name in public(ServerAudit) if name in public(VoteAudit))
SERVER_OPTIONS = tuple(name for name in public(ServerAudit) if name not in COMMON_OPTIONS)
VOTE_OPTIONS = tuple(name for name in public(VoteAudit) if name not in COMMON_OPTIONS)


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
    parser.add_argument("--workers", type=int, default=1, help="processes to play the trials in (same scores)")
    add_executor_arguments(parser, workers=False)
    server = parser.add_argument_group("fbo-server (DP-FTS-DE server round)")
    votes = parser.add_argument_group("hype-votes (DP-HYPE noisy vote sum)")
    add_config_arguments(parser, ServerAudit, containers={name: server for name in SERVER_OPTIONS})
    add_config_arguments(parser, VoteAudit, containers={name: votes for name in VOTE_OPTIONS}, skip=COMMON_OPTIONS)


def config_from_args(args):
    mechanism = check_choice("mechanism", args.mechanism, MECHANISMS)
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
        return strategy_audit_cost(config.trials, config.steps, config.agents, config.features)
    if args.strategy is not None or args.claimed_epsilon is not None or args.attacker != "game":
        raise ConfigError("--strategy, --claimed-epsilon and --attacker apply to the flower mechanism only.",
                          "strategy")
    return audit_cost(config_from_args(args))


def run(args) -> dict:
    if args.mechanism == "flower":
        from engine.cli.audit_flower import run_flower      # the Flower bridge, loaded only when asked for

        return run_flower(args)
    result = run_audit(config_from_args(args), executor=from_args(args))
    if result.violation:
        print(f"warning: {result.verdict}", file=sys.stderr)
    return result.to_json()
