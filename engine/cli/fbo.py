"""``python -m engine fbo``: run a federated BO experiment and print its result as JSON."""

from __future__ import annotations

from engine.fbo import FboConfig, run_fbo
from engine.fbo.config import ALGORITHMS, FTS_VARIANTS, OWN_SAMPLERS, PT_SCHEDULES, SPLITS, WEIGHT_SCHEDULES, WEIGHTS
from engine.fbo.plan import plan_cost
from engine.objectives import DATASETS
from engine.privacy import ACCOUNTANTS, SAMPLING

HELP = "Federated BO (TS, FTS, FTS-DE, DP-FTS, DP-FTS-DE): mean metric per iteration and privacy loss, as JSON."

_DEFAULTS = FboConfig()


def _choices(values) -> str:
    return "{" + ",".join(values) + "}"


def add_arguments(parser) -> None:
    d = _DEFAULTS
    # Values are checked by FboConfig (one sentence per bad value), so no argparse choices here.
    parser.add_argument("--algorithm", default=d.algorithm, metavar=_choices(ALGORITHMS))
    parser.add_argument("--dataset", default=d.dataset, metavar=_choices(DATASETS))
    parser.add_argument("--agents", type=int, default=None,
                        help="number of agents N (default: the data set's own, 200 for synthetic)")
    parser.add_argument("--iterations", type=int, default=d.iterations, help="T, iterations after initialisation")
    parser.add_argument("--features", type=int, default=d.features, help="M random Fourier features")
    parser.add_argument("--lengthscale", type=float, default=None, help="SE lengthscale (default: the task's)")
    parser.add_argument("--noise-var", type=float, default=None,
                        help="lambda of the BLR posterior (default: the task's)")
    parser.add_argument("--q", type=float, default=d.q, help="sampling probability of an agent per server round")
    parser.add_argument("--z", type=float, default=d.z, help="noise multiplier")
    parser.add_argument("--S", type=float, default=d.S, help="clipping threshold (vectors clipped to S / sqrt(P))")
    parser.add_argument("--P", type=int, default=d.P, help="number of sub-regions (FTS-DE / DP-FTS-DE)")
    parser.add_argument("--sampling", default=d.sampling, metavar=_choices(SAMPLING),
                        help="poisson (probability q) or fixed (round(N q) agents)")
    parser.add_argument("--pt-schedule", default=d.pt_schedule, metavar=_choices(PT_SCHEDULES),
                        help="1 - p_t = 1/sqrt(t), 1/t, 1/t^2 or constant")
    parser.add_argument("--pt-constant", type=float, default=d.pt_constant, help="1 - p_t for the constant schedule")
    parser.add_argument("--weights", default=d.weights, metavar=_choices(WEIGHTS),
                        help="adaptive softmax, equal (uniform) or fixed (non-adaptive, T_t = 1)")
    parser.add_argument("--weight-a", type=float, default=d.weight_a, help="a of the softmax weights")
    parser.add_argument("--weight-schedule", default=d.weight_schedule, metavar=_choices(WEIGHT_SCHEDULES))
    parser.add_argument("--no-local-exploration", action="store_true",
                        help="draw initial points from the whole domain instead of the agent's sub-region")
    parser.add_argument("--n-init", type=int, default=d.n_init, help="initial points per agent")
    parser.add_argument("--fts-variant", default=d.fts_variant, metavar=_choices(FTS_VARIANTS))
    parser.add_argument("--alpha", type=float, default=None, help="task heterogeneity (default: the task's)")
    parser.add_argument("--objective-seed", type=int, default=d.objective_seed, help="fixes the objective itself")
    parser.add_argument("--domain", default=d.domain, metavar="{table,continuous}")
    parser.add_argument("--own-sampler", default=d.own_sampler, metavar=_choices(OWN_SAMPLERS),
                        help="an agent's own Thompson sample: authors (its GP, fresh random features), pathwise "
                             "(its GP, exact update of a random-feature prior) or shared (ablation: shared features)")
    parser.add_argument("--own-features", type=int, default=d.own_features,
                        help="random features per own sample (default 100, the authors')")
    parser.add_argument("--refit-every", type=int, default=None,
                        help="re-fit each agent's GP hyperparameters every this many observations; 0 never "
                             "(default: the task's, 5 on real tasks, never on synthetic)")
    parser.add_argument("--split", default=None, metavar=_choices(SPLITS),
                        help="landmine data split: authors (the paper's fixed split, default) or seeded "
                             "(drawn from --objective-seed)")
    parser.add_argument("--data-dir", default=None,
                        help="folder holding the data sets: sets DPBO_DATA_DIR for this command")
    parser.add_argument("--runs", type=int, default=d.runs, help="independent runs simulated together")
    parser.add_argument("--seed", type=int, default=d.seed)
    parser.add_argument("--accountant", default=d.accountant, metavar=_choices(ACCOUNTANTS))
    parser.add_argument("--delta", type=float, default=None, help="default 1 / N^1.1")
    parser.add_argument("--budget", type=float, default=None, help="privacy budget epsilon*")
    parser.add_argument("--calibrate-z", action="store_true", help="choose z so that the run ends at the budget")


def config_from_args(args) -> FboConfig:
    return FboConfig(
        algorithm=args.algorithm, dataset=args.dataset, agents=args.agents, iterations=args.iterations,
        features=args.features, lengthscale=args.lengthscale, noise_var=args.noise_var, q=args.q, z=args.z, S=args.S,
        P=args.P, sampling=args.sampling, pt_schedule=args.pt_schedule, pt_constant=args.pt_constant,
        weights=args.weights, weight_a=args.weight_a, weight_schedule=args.weight_schedule,
        local_exploration=not args.no_local_exploration, n_init=args.n_init, fts_variant=args.fts_variant,
        alpha=args.alpha, objective_seed=args.objective_seed, domain=args.domain,
        own_sampler=args.own_sampler, own_features=args.own_features, refit_every=args.refit_every, split=args.split,
        runs=args.runs, seed=args.seed, accountant=args.accountant, delta=args.delta, budget=args.budget,
        calibrate_z=args.calibrate_z)


def cost(args):
    """The run's price as its plan counts it (a real task's table only when it is not cached yet)."""
    return plan_cost(config_from_args(args))


def run(args) -> dict:
    return run_fbo(config_from_args(args)).to_json()
