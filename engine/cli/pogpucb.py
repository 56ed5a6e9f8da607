"""``python -m engine pogpucb``: PO-GP-UCB against non-private GP-UCB on one data set."""

from __future__ import annotations

import math

from engine.limits import pogpucb_cost
from engine.pogpucb import HYPER_MODES, TASK_DEFAULTS, TASKS, PoConfig, run_pogpucb
from engine.validation import check_range

HELP = ("PO-GP-UCB (private outsourced BO by random projection): simple regret over runs against "
        "non-private GP-UCB, the curator's branch (sigma_min vs omega) and the largest admissible r.")


def add_arguments(parser) -> None:
    parser.add_argument("--dataset", choices=tuple(TASKS), default="synthetic")
    eps = parser.add_mutually_exclusive_group()
    eps.add_argument("--epsilon", type=float, help="DP epsilon (default: the data set's, exp(1.1) for synthetic)")
    eps.add_argument("--log-epsilon", type=float, help="log of epsilon, as the paper reports it (e.g. 1.1)")
    parser.add_argument("--delta", type=float, help="DP delta in (0, 1) (default: the data set's, below 1/n)")
    parser.add_argument("--r", type=float, help="projection dimension r (default: the data set's)")
    parser.add_argument("--iterations", type=float, default=50, help="GP-UCB iterations T")
    parser.add_argument("--runs", type=float, default=20, help="independent runs (own M and initial rows)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--initial-points", type=int, default=2, help="random rows queried before GP-UCB")
    parser.add_argument("--delta-ucb", type=float, default=0.05, help="GP-UCB delta_ucb; beta_t uses delta_ucb/2")
    parser.add_argument("--hyperparameters", choices=HYPER_MODES, default="shared",
                        help="shared: the curator's ML fit for both kernels (paper); refit: the modeler's own fits")
    parser.add_argument("--refit-every", type=int, default=10)
    parser.add_argument("--task-seed", type=int, default=0, help="fixes the synthetic GP draw and the ML fit")
    parser.add_argument("--no-baseline", action="store_true", help="skip non-private GP-UCB")
    parser.add_argument("--distortion-pairs", type=int, default=2000)


def config_from_args(args) -> PoConfig:
    defaults = TASK_DEFAULTS[args.dataset]
    if args.log_epsilon is not None:
        epsilon = math.exp(check_range("log_epsilon", args.log_epsilon, -20, 20, name="log epsilon"))
    elif args.epsilon is not None:
        epsilon = args.epsilon
    else:
        epsilon = math.exp(defaults["log_epsilon"])
    return PoConfig(
        dataset=args.dataset, epsilon=epsilon,
        delta=defaults["delta"] if args.delta is None else args.delta,
        r=defaults["r"] if args.r is None else args.r,
        iterations=args.iterations, runs=args.runs, seed=args.seed, initial_points=args.initial_points,
        delta_ucb=args.delta_ucb, hyperparameters=args.hyperparameters, refit_every=args.refit_every,
        task_seed=args.task_seed, baseline=not args.no_baseline, distortion_pairs=args.distortion_pairs)


def cost(args):
    return pogpucb_cost(config_from_args(args))


def run(args) -> dict:
    return run_pogpucb(config_from_args(args)).to_json()
