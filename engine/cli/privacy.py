"""``python -m engine privacy``: epsilon of the subsampled Gaussian mechanism, or the calibrated z."""

from __future__ import annotations

from engine.privacy import ACCOUNTANTS, SAMPLING, calibrate_z, epsilon, epsilon_curve
from engine.validation import ConfigError

HELP = "Epsilon of T releases of the subsampled Gaussian mechanism, or the z that reaches a target epsilon."


def add_arguments(parser) -> None:
    parser.add_argument("--q", type=float, required=True, help="sampling probability of an agent per release")
    parser.add_argument("--z", type=float, help="noise multiplier (omit when giving --target-epsilon)")
    parser.add_argument("--steps", type=int, required=True, help="number of releases T")
    parser.add_argument("--delta", type=float, required=True)
    parser.add_argument("--accountant", choices=ACCOUNTANTS, default="rdp")
    parser.add_argument("--sampling", choices=SAMPLING, default="poisson")
    parser.add_argument("--agents", type=int, help="number of agents (needed for fixed-size sampling)")
    parser.add_argument("--target-epsilon", type=float, help="calibrate z to reach this epsilon")
    parser.add_argument("--curve", action="store_true", help="also print epsilon after every step")


def run(args) -> dict:
    common = dict(sampling=args.sampling, n_agents=args.agents)
    if args.target_epsilon is not None:
        if args.z is not None:
            raise ConfigError("Give either --z or --target-epsilon, not both.")
        z = calibrate_z(args.target_epsilon, args.q, args.steps, args.delta, args.accountant, **common)
        out = {"z": z, "epsilon": epsilon(args.q, z, args.steps, args.delta, args.accountant, **common)}
    else:
        if args.z is None:
            raise ConfigError("Give --z (noise multiplier) or --target-epsilon.")
        z = args.z
        out = {"epsilon": epsilon(args.q, z, args.steps, args.delta, args.accountant, **common)}
    out.update(q=args.q, steps=args.steps, delta=args.delta, accountant=args.accountant, sampling=args.sampling)
    if args.curve:
        out["curve"] = epsilon_curve(args.q, z, args.steps, args.delta, args.accountant, **common)
    return out
