"""``python -m engine audit``: attack a mechanism's own code and bound the epsilon it really has."""

from __future__ import annotations

import sys

from engine.audit import MECHANISMS, ServerAudit, VoteAudit, audit_cost, run_audit
from engine.cli import host_limits
from engine.fbo.config import WEIGHT_SCHEDULES, WEIGHTS
from engine.hype.config import AGGREGATIONS
from engine.limits import check
from engine.privacy import ACCOUNTANTS, SAMPLING
from engine.validation import ConfigError, check_choice

HELP = "Empirical privacy audit: claimed epsilon against a lower bound proved by attacking the mechanism, as JSON."

# Options of one game only: (dest, ServerAudit / VoteAudit field).
SERVER_OPTIONS = {"q": "q", "z": "z", "S": "S", "P": "P", "agents": "agents", "features": "features",
                  "steps": "steps", "sampling": "sampling", "weights": "weights", "weight_a": "weight_a",
                  "weight_schedule": "weight_schedule", "canary_norm": "canary_norm"}
VOTE_OPTIONS = {"epsilon": "epsilon", "sigma": "sigma", "k": "k", "candidates": "candidates", "clients": "clients",
                "aggregation": "aggregation"}
COMMON_OPTIONS = {"trials": "trials", "delta": "delta", "seed": "seed", "accountant": "accountant",
                  "noise_scale": "noise_scale"}


def _choices(values) -> str:
    return "{" + ",".join(values) + "}"


def add_arguments(parser) -> None:
    s, v = ServerAudit(), VoteAudit()
    # Values are checked by the audit configurations (one sentence each), so no argparse choices here.
    parser.add_argument("--mechanism", default="fbo-server", metavar=_choices(MECHANISMS + ("flower",)))
    flower = parser.add_argument_group("flower (a Flower strategy's aggregate_train; uses --q --z --S --agents "
                                       "--features --steps --canary-norm)")
    flower.add_argument("--strategy", help="built-in name or MODULE:FACTORY (local only); see engine.flower.audit")
    flower.add_argument("--claimed-epsilon", type=float, help="claim to test instead of the strategy's accountant")
    server = parser.add_argument_group("fbo-server (DP-FTS-DE server round)")
    server.add_argument("--q", type=float, help=f"sampling probability of an agent (default {s.q})")
    server.add_argument("--z", type=float, help=f"noise multiplier (default {s.z})")
    server.add_argument("--S", type=float, help=f"clipping threshold, vectors clipped to S/sqrt(P) (default {s.S})")
    server.add_argument("--P", type=int, help=f"number of sub-regions (default {s.P})")
    server.add_argument("--agents", type=int, help=f"number of agents N (default {s.agents}; changes only the cost)")
    server.add_argument("--features", type=int, help=f"vector length M (default {s.features}; changes only the cost)")
    server.add_argument("--steps", type=int, help=f"T releases composed (default {s.steps})")
    server.add_argument("--sampling", metavar=_choices(SAMPLING), help="poisson (add/remove) or fixed (replace-one)")
    server.add_argument("--weights", metavar=_choices(WEIGHTS), help=f"sub-region weights (default {s.weights})")
    server.add_argument("--weight-a", type=float, help=f"a of the softmax weights (default {s.weight_a})")
    server.add_argument("--weight-schedule", metavar=_choices(WEIGHT_SCHEDULES))
    server.add_argument("--canary-norm", type=float,
                        help="canary norm in clip bounds (default 1; e.g. 1000 checks that clipping happens)")
    votes = parser.add_argument_group("hype-votes (DP-HYPE noisy vote sum)")
    votes.add_argument("--epsilon", type=float, help=f"privacy budget the noise is calibrated to (default {v.epsilon})")
    votes.add_argument("--sigma", type=float, help="noise std on the summed votes instead of --epsilon")
    votes.add_argument("--k", type=int, help=f"votes per client (default {v.k})")
    votes.add_argument("--candidates", type=int, help=f"number of candidates p (default {v.candidates})")
    votes.add_argument("--clients", type=int, help=f"number of clients n (default {v.clients})")
    votes.add_argument("--aggregation", metavar=_choices(AGGREGATIONS),
                       help="exact (summed noise at once, default) or secure-sum (client by client)")
    parser.add_argument("--trials", type=int, default=s.trials, help="games played, half with each input")
    parser.add_argument("--delta", type=float, default=s.delta)
    parser.add_argument("--seed", type=int, default=s.seed)
    parser.add_argument("--accountant", default=s.accountant, metavar=_choices(ACCOUNTANTS),
                        help="accountant of the claimed epsilon (default pld, the tightest)")
    parser.add_argument("--noise-scale", type=float, default=s.noise_scale,
                        help="negative control: multiply the noise actually added, keep the claim")


def config_from_args(args):
    mechanism = check_choice("mechanism", args.mechanism, MECHANISMS)
    own, other = (SERVER_OPTIONS, VOTE_OPTIONS) if mechanism == "fbo-server" else (VOTE_OPTIONS, SERVER_OPTIONS)
    stray = [name for name in other if getattr(args, name) is not None]
    if stray:
        option = "--" + stray[0].replace("_", "-")
        raise ConfigError(f"{option} does not apply to the {mechanism} mechanism.", stray[0])
    settings = {field: getattr(args, dest) for dest, field in {**own, **COMMON_OPTIONS}.items()
                if getattr(args, dest) is not None}
    if mechanism == "hype-votes" and settings.get("sigma") is not None and "epsilon" not in settings:
        settings["epsilon"] = None
    return (ServerAudit if mechanism == "fbo-server" else VoteAudit)(**settings)


def run(args) -> dict:
    if args.mechanism == "flower":
        from engine.cli.audit_flower import run_flower      # the Flower bridge, loaded only when asked for

        return run_flower(args)
    if args.strategy is not None or args.claimed_epsilon is not None:
        raise ConfigError("--strategy and --claimed-epsilon apply to the flower mechanism only.", "strategy")
    config = config_from_args(args)
    check(audit_cost(config), host_limits(), what="This audit")
    result = run_audit(config)
    if result.violation:
        print(f"warning: {result.verdict}", file=sys.stderr)
    return result.to_json()
