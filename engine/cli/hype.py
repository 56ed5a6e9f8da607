"""``python -m engine hype``: repeated DP-HYPE votes on simulated losses or real data, or the calibrated sigma."""

from __future__ import annotations

from engine.hype import AGGREGATIONS, HYPE_DATASETS, MODES, HypeConfig, calibrate_sigma, run_hype, sensitivity
from engine.hype.calibration import epsilon_for_sigma
from engine.hype.config import DEFAULT_EPSILON
from engine.hype.sweeps import FIG2A_EPSILONS, FIG2A_KS, FIG2A_SIGMA_LOSSES, success_grid
from engine.limits import hype_cost, hype_grid_cost
from engine.validation import ConfigError, check_int, check_positive, check_probability_open, check_range

HELP = "DP-HYPE: success rate of private hyperparameter voting (simulation or data), or the calibrated noise."


def add_arguments(parser) -> None:
    parser.add_argument("--mode", choices=MODES, default="simulation")
    parser.add_argument("--calibrate", action="store_true",
                        help="only print the noise std sigma for --k, --epsilon, --delta (or epsilon for --sigma)")
    parser.add_argument("--fig2a", action="store_true",
                        help="print the paper's Fig. 2a grid (success per sigma_loss, k, epsilon) for these settings")
    parser.add_argument("--clients", type=int, help="number of clients n (simulation: 250, data: 100)")
    parser.add_argument("--candidates", type=int, default=100, help="number of candidates p (simulation)")
    parser.add_argument("--good", type=int, default=5, help="number of good candidates |H_good| (simulation)")
    parser.add_argument("--sigma-loss", type=float, default=0.2, help="spread of the simulated local losses")
    parser.add_argument("--k", type=int, default=5, help="votes per client")
    parser.add_argument("--epsilon", type=float, help="privacy budget (default 1 unless --sigma is given)")
    parser.add_argument("--sigma", type=float, help="std of the noise on the summed votes instead of --epsilon")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--xi", type=float, default=0.0, help="dropout tolerance: noise scaled for xi * n dropouts")
    parser.add_argument("--dropout", type=float, default=0.0, help="fraction of clients that drop out in every vote")
    parser.add_argument("--repetitions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dataset", choices=tuple(HYPE_DATASETS), default="digits", help="data mode")
    parser.add_argument("--alpha", type=float, help="Dirichlet concentration of the client split (default: iid)")
    parser.add_argument("--runs", type=int, default=1, help="data mode: independent splits and trainings")
    parser.add_argument("--good-within", type=float, default=0.02,
                        help="data mode: a candidate is good within this accuracy of OPT")
    parser.add_argument("--aggregation", choices=AGGREGATIONS, default="exact")
    parser.add_argument("--cache-dir", help="where score tables are cached: sets DPBO_CACHE_DIR for this command")


def _calibrate(args) -> dict:
    k = check_int("k", args.k, 1)
    delta = check_probability_open("delta", args.delta)
    if args.sigma is not None and args.epsilon is not None:
        raise ConfigError("Give either epsilon or sigma, not both.", "sigma")
    if args.sigma is not None:
        sigma = check_range("sigma", args.sigma, 0)
        return {"sigma": sigma, "epsilon": epsilon_for_sigma(sigma, delta, k), "k": k, "delta": delta,
                "sensitivity": sensitivity(k)}
    epsilon = check_positive("epsilon", DEFAULT_EPSILON if args.epsilon is None else args.epsilon)
    return {"sigma": calibrate_sigma(epsilon, delta, k), "epsilon": epsilon, "k": k, "delta": delta,
            "sensitivity": sensitivity(k)}


def config_from_args(args) -> HypeConfig:
    clients = args.clients if args.clients is not None else (250 if args.mode == "simulation" else 100)
    return HypeConfig(mode=args.mode, clients=clients, candidates=args.candidates, good=args.good,
                      sigma_loss=args.sigma_loss, k=args.k, epsilon=args.epsilon, sigma=args.sigma, delta=args.delta,
                      xi=args.xi, dropout=args.dropout, repetitions=args.repetitions, seed=args.seed,
                      dataset=args.dataset, alpha=args.alpha, good_within=args.good_within, runs=args.runs,
                      aggregation=args.aggregation)


def cost(args):
    """The votes' price; the Fig. 2a grid is priced as a grid (every loss spread and (k, epsilon) point)."""
    if args.calibrate:
        return None
    config = config_from_args(args)
    if args.fig2a:
        points = len([k for k in FIG2A_KS if k <= config.p]) * len(FIG2A_EPSILONS)
        return hype_grid_cost(config, points, len(FIG2A_SIGMA_LOSSES))
    return hype_cost(config)


def run(args) -> dict:
    if args.calibrate:
        return _calibrate(args)
    config = config_from_args(args)
    if args.fig2a:
        return success_grid(config).to_json()
    return run_hype(config).to_json()
