"""``python -m engine hype``: repeated DP-HYPE votes on simulated losses or real data, or the calibrated sigma."""

from __future__ import annotations

from engine.hype import HypeConfig, calibrate_sigma, run_hype, sensitivity
from engine.hype.calibration import epsilon_for_sigma
from engine.hype.config import DEFAULT_EPSILON, default_clients
from engine.hype.sweeps import FIG2A_EPSILONS, FIG2A_KS, FIG2A_SIGMA_LOSSES, success_grid
from engine.limits import Cost, hype_cost, hype_grid_cost
from engine.settings import add_config_arguments, add_config_file_argument, defaults, values_from_args
from engine.settings import command_line as settings_command_line
from engine.validation import ConfigError, check_int, check_positive, check_probability_open, check_range

HELP = "DP-HYPE: success rate of private hyperparameter voting (simulation or data), or the calibrated noise."


def add_arguments(parser) -> None:
    parser.add_argument("--calibrate", action="store_true",
                        help="only print the noise std sigma for --k, --epsilon, --delta (or epsilon for --sigma)")
    parser.add_argument("--fig2a", action="store_true",
                        help="print the paper's Fig. 2a grid (success per sigma_loss, k, epsilon) for these settings")
    # One option per HypeConfig field, from its declaration (values checked by HypeConfig).
    add_config_file_argument(parser)
    add_config_arguments(parser, HypeConfig)
    parser.add_argument("--cache-dir", help="where score tables are cached: sets DPBO_CACHE_DIR for this command")


def _calibrate(args) -> dict:
    values = dict(defaults(HypeConfig), **values_from_args(args, HypeConfig))
    k = check_int("k", values["k"], 1)
    delta = check_probability_open("delta", values["delta"])
    if values["sigma"] is not None and values["epsilon"] is not None:
        raise ConfigError("Give either epsilon or sigma, not both.", "sigma")
    if values["sigma"] is not None:
        sigma = check_range("sigma", values["sigma"], 0)
        return {"sigma": sigma, "epsilon": epsilon_for_sigma(sigma, delta, k), "k": k, "delta": delta,
                "sensitivity": sensitivity(k)}
    epsilon = check_positive("epsilon", DEFAULT_EPSILON if values["epsilon"] is None else values["epsilon"])
    return {"sigma": calibrate_sigma(epsilon, delta, k), "epsilon": epsilon, "k": k, "delta": delta,
            "sensitivity": sensitivity(k)}


def config_from_args(args) -> HypeConfig:
    values = values_from_args(args, HypeConfig)
    if values.get("clients") is None:
        values["clients"] = default_clients(values.get("mode", HypeConfig.mode))
    return HypeConfig(**values)


def command_line(config: HypeConfig) -> str:
    """``python -m engine hype ...`` that runs ``config`` (only its non-default settings)."""
    # The CLI's epsilon defaults to 1 unless sigma is given: an epsilon of 1 need not be written.
    omit = ("epsilon",) if config.epsilon == DEFAULT_EPSILON and config.sigma is None else ()
    if config.clients == default_clients(config.mode):
        omit += ("clients",)
    return settings_command_line("hype", config, omit=omit)


def cost(args) -> Cost:
    """The votes' price; the Fig. 2a grid is priced as a grid (every loss spread and (k, epsilon) point)."""
    if args.calibrate:
        return Cost.free("a closed-form noise calibration (one bisection of the Gaussian mechanism)")
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
