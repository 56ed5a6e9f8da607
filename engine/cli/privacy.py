"""``python -m engine privacy``: epsilon of the subsampled Gaussian mechanism, or the calibrated z.

``--delta`` defaults as in ``fbo``: the delta rule's for ``--agents N`` (the
product's 1e-5, or 1 % of 1/N when smaller; ``--delta-rule paper``: the DP-FTS-DE
paper's 1 / N^1.1); without ``--agents`` there is no N to take it from, so
``--delta`` is then required. The accountant defaults to the product's (RDP), as
everywhere else.
"""

from __future__ import annotations

from engine.limits import Cost, accountant_cost
from engine.privacy import (ACCOUNTANTS, DEFAULT_ACCOUNTANT, DELTA_RULES, SAMPLING, calibrate_z, default_delta, epsilon,
                            epsilon_curve)
from engine.validation import ConfigError

HELP = "Epsilon of T releases of the subsampled Gaussian mechanism, or the z that reaches a target epsilon."
WHAT = "This accounting"


def add_arguments(parser) -> None:
    parser.add_argument("--q", type=float, required=True, help="sampling probability of an agent per release")
    parser.add_argument("--z", type=float, help="noise multiplier (omit when giving --target-epsilon)")
    parser.add_argument("--steps", type=int, required=True, help="number of releases T")
    parser.add_argument("--delta", type=float,
                        help="delta of the guarantee (default with --agents N: its delta rule's, as fbo; else needed)")
    parser.add_argument("--delta-rule", choices=DELTA_RULES, default="product",
                        help="the default delta for --agents N: product (1e-5, or 1%% of 1/N when smaller) or paper "
                             "(the DP-FTS-DE paper's 1 / N^1.1)")
    parser.add_argument("--accountant", choices=ACCOUNTANTS, default=DEFAULT_ACCOUNTANT)
    parser.add_argument("--sampling", choices=SAMPLING, default="poisson")
    parser.add_argument("--agents", type=int,
                        help="number of agents N (sets the default delta; needed for fixed-size sampling)")
    parser.add_argument("--target-epsilon", type=float, help="calibrate z to reach this epsilon")
    parser.add_argument("--curve", action="store_true", help="also print epsilon after every step")


def delta_of(args) -> float:
    """``--delta``, else the delta rule's for ``--agents N`` (as fbo)."""
    if args.delta is not None:
        return args.delta
    if args.agents is None:
        raise ConfigError("Give --delta, or --agents N for the default delta of N agents (as fbo uses).", "delta")
    return default_delta(args.agents, args.delta_rule)


def cost(args):
    """The accounting's price: one epsilon (or a calibration and its epsilon), and the curve when asked."""
    delta_of(args)
    if args.steps < 1 or (args.z is not None and not args.z > 0):
        return Cost.free("an invalid request: the accountant refuses it in one sentence before any work")
    calibrating = args.target_epsilon is not None
    return accountant_cost(args.steps, (args.accountant,), curve=args.curve, points=1,
                           calibrations=1 if calibrating else 0, z=None if calibrating else args.z)


def run(args) -> dict:
    delta = delta_of(args)
    common = dict(sampling=args.sampling, n_agents=args.agents)
    if args.target_epsilon is not None:
        if args.z is not None:
            raise ConfigError("Give either --z or --target-epsilon, not both.")
        z = calibrate_z(args.target_epsilon, args.q, args.steps, delta, args.accountant, **common)
        out = {"z": z, "epsilon": epsilon(args.q, z, args.steps, delta, args.accountant, **common)}
    else:
        if args.z is None:
            raise ConfigError("Give --z (noise multiplier) or --target-epsilon.")
        z = args.z
        out = {"epsilon": epsilon(args.q, z, args.steps, delta, args.accountant, **common)}
    out.update(q=args.q, steps=args.steps, delta=delta, accountant=args.accountant, sampling=args.sampling)
    if args.curve:
        out["curve"] = epsilon_curve(args.q, z, args.steps, delta, args.accountant, **common)
    return out
