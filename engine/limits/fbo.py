"""The price of a federated BO run: building its objective, the runs, each agent's own GP, its privacy curve.

Facts that belong to a data set (its candidate count, the seconds to score one
agent's table or to train one query, its own-GP refit period) are read from
the data set's registry entry (:func:`engine.objectives.registry.dataset_costs`).
"""

from __future__ import annotations

from dataclasses import replace

from engine.cancel import CHUNK_ELEMENTS
from engine.limits.core import Cost, priced, with_margin
from engine.limits.privacy import accountant_cost
from engine.objectives.registry import dataset_costs

# Synthetic: 1000 values per agent and a few temporaries (20,000 agents: 0.71 s, 331 MB; each agent's own GP
# draw with alpha > 0 doubles both). Real tasks: building a table scores every agent on the grid (in worker
# processes; seconds per agent in the data set's DatasetCosts); the continuous domain trains one model per
# query instead.
SYNTHETIC_AGENT_S = 6e-5
SYNTHETIC_AGENT_MB = 0.03
TABLE_BUILD_MB = 400.0       # two worker processes with the task's data


def objective_cost(dataset: str, n_agents: int, *, alpha: float | None = None, domain: str = "table",
                   table_ready: bool = False) -> Cost:
    """Cost of building the objective of ``dataset`` for ``n_agents`` agents (tables: only when not cached)."""
    N = int(n_agents)
    if dataset == "synthetic":
        factor = 2.0 if alpha else 1.0
        seconds, memory = with_margin("fbo", factor * N * SYNTHETIC_AGENT_S), factor * N * SYNTHETIC_AGENT_MB
    elif domain == "table" and not table_ready:
        costs = dataset_costs(dataset)
        seconds, memory = with_margin("table", costs.table_seconds(N)), max(TABLE_BUILD_MB, costs.table_mb)
    else:
        seconds, memory = 0.0, 0.0
    return priced(seconds, memory, [("agents", N, 200, 1)])


# ---------------------------------------------------------------- federated BO
# Per iteration every one of the K = runs x agents shared-feature posteriors is sampled and
# updated (~M^2 each) and scores the C candidates (K C M multiply-adds);
# initialisation adds n_init observations per posterior. Measured CPU seconds
# (estimate): N = 50, T = 30, 3 runs, M = 50: 0.10 (0.16); N = 200, T = 40,
# 5 runs: 0.86 (1.4); M = 800: 11.3 (13.8); landmine 29 x 60, 10 runs,
# M = 100: 1.6 (2.8). Peak memory MB: 15 (39), 118 (211), 1605 (2464), 130 (181).
FBO_SCORE_S = 0.65e-9        # per K x C x M
FBO_POSTERIOR_S = 4.5e-9     # per K x M^2 and iteration
FBO_INIT_S = 2e-9            # per K x n_init x M^2
FBO_BASE_MB = 25.0
FBO_BASE_S = 0.05            # drawing the features, the domain and the sub-regions; the result
FBO_ITERATION_S = 5e-4       # an iteration's fixed work (a few dozen small array operations)
# Each agent's own GP (engine.surrogate.thompson.OwnGp; not with own_sampler "shared"): per iteration and
# model a Thompson sample of F fresh features scored on the C candidates (C F), the n x n Gram matrix of
# the n = n_init + T observations on them (n^2 F) and its Cholesky (n^3); every refit_every observations
# a marginal-likelihood fit (a few n x n Choleskys). Measured CPU seconds per model and iteration (this
# estimate): n = 40, F = 100: 6e-5 (9e-5); n = 210: 4.2e-4 (8.7e-4); n = 505: 4.8e-3 (4.8e-3); n = 1005:
# 1.9e-2 (1.9e-2); F = 1000: 8.3e-4 (8.9e-4); landmine (C = 2500, refits): 2.6e-4 (4.4e-4); all x 1.4 below
# (1.5 until the large-n Gram term took the kernels' spread: OWN_GRAM_KERNEL; the landmine Fig. 3a cells took 2.7
# reference seconds on this session's machine, priced 5.1 with 1.5).
# Memory: the K x n x n distances (and, pathwise, the inverse) plus chunks of 512 models' n x n
# temporaries: K = 100, n = 1005: 1.7 GB (2.4 GB); n = 505: 475 MB (610 MB).
OWN_OVERHEAD_S = 4e-5        # per model and iteration and 100 features
OWN_CANDIDATE_S = 3e-10      # per C x F beyond the overhead (tables are grids: engine.surrogate.candidates)
OWN_GRAM_S = 1.84e-10        # per n^2 F
# The Gram matrix is a matrix product per model, BLAS-bound once n is large: with n = 505, F = 100 a run took 1.36
# times as long on OpenBLAS's SandyBridge kernel as on Haswell, with n = 40 1.05 times (benchmarks/
# bench_price_spread.py). Its price grows by up to this share, in proportion to n up to OWN_GRAM_LARGE_N, so that it
# covers that kernel with a tenth to spare.
OWN_GRAM_KERNEL = 0.42
OWN_GRAM_LARGE_N = 500
OWN_CHOLESKY_S = 3.4e-13     # per n^3
OWN_FIT_S = 2.5e-4           # per model and fit, plus OWN_FIT_CUBE_S n^3
OWN_FIT_CUBE_S = 5e-10
FIRST_FIT_COST = 4             # the first fit takes FIRST_FIT_STEPS = 4 steps, a refit one
OWN_MARGIN = 1.4
OWN_CHUNK = 512              # engine.surrogate.thompson SOLVE_CHUNK and FIT_CHUNK
OWN_BASE_MB = 40.0           # the models' small arrays and the fit's temporaries at a few observations
CONTINUOUS_CANDIDATES = 1000  # the continuous domain draws this many candidates per iteration
FBO_USUAL = dict(agents=200, iterations=40, runs=5, features=50, n_init=10, P=4)
# P sub-regions (algorithms with a server): every iteration scores each candidate with its own sub-region's
# broadcast vector (an (R, C, M) gather, like the candidates' features); the round keeps (R, P, M) sums, noise
# and broadcast; the weights are two numbers per sub-region (engine.fbo.weights.RegionWeights), so nothing is
# P x N. Initialisation draws each sub-region's points with a pass over the agents and candidates per
# sub-region (engine.fbo.subregions.Subregions.sample_candidates).
FBO_REGION_S = 2e-9          # per R x P x M element of a round
# per P x (C + K) at initialisation: 8,000 agents and sub-regions (M = 1) took 1.17 reference seconds, priced 0.81
# with 2e-9 here (benchmarks/bench_price_spread.py's machine)
FBO_REGION_INIT_S = 8e-9


HISTORY_DIM = 4              # the query history keeps D + 2 numbers per query; D when the objective is not known


def fbo_cost(config, n_agents: int, candidates: int | None = None, *, objective: Cost | None = None,
             accounting: bool = True, own: dict | None = None) -> Cost:
    """Cost of a federated BO run of ``config`` (an FboConfig) with ``n_agents`` agents.

    ``candidates``: size of the objective's candidate set (the continuous
    domain draws 1000 per iteration); unknown: the data set's default table (its ``DatasetCosts``).
    ``objective``: the cost of building the objective (default: as
    :func:`objective_cost` prices it when no table is cached). ``accounting``:
    include the privacy curve of a private algorithm. ``own``: a researcher's own function instead of the
    data set (its ``dim`` and its own GPs' ``refit_every``): continuous, its calls not priced (their time is
    the function's).
    """
    N, R, T, M = int(n_agents), int(config.runs), int(config.iterations), int(config.features)
    n_init = int(config.n_init)
    facts = dataset_costs(config.dataset)
    continuous = own is not None or config.domain == "continuous"
    C = CONTINUOUS_CANDIDATES if continuous else int(candidates or facts.candidates)
    K = R * N
    # In the FTS paper's setting the other agents run their TS tasks first (engine.fbo.target).
    copies = 2 if config.in_target_setting and config.algorithm != "ts" else 1
    seconds = copies * (K * n_init * M * M * FBO_INIT_S + T * K * (C * M * FBO_SCORE_S + M * M * FBO_POSTERIOR_S))
    seconds += FBO_BASE_S + copies * (T + 1) * FBO_ITERATION_S
    P = int(config.n_subregions) if config.uses_server else 1
    if config.uses_server:
        seconds += P * (C + K) * FBO_REGION_INIT_S + T * R * P * M * 6 * FBO_REGION_S
    if config.domain == "continuous" and own is None:
        # every query trains the task's model (or interpolates the synthetic table)
        seconds += copies * K * (n_init + T) * facts.query_seconds
    # Each posterior: Sigma^-1 (M^2), its feature history and the initial points' features (2 (n_init + T) M)
    # and a few vectors; batched temporaries come in chunks of CHUNK_ELEMENTS (engine.cancel.work_slices).
    # And the query history: each query's point and its two values (engine.fbo.agents).
    dim = int(own["dim"]) if own is not None else HISTORY_DIM
    per_model = 1.2 * M * M + 2 * (n_init + T) * M + 8 * M + (dim + 2) * (n_init + T)
    records = T * N * M * 4 + T * K * 2      # run 0's server rounds and the metric per iteration
    features = R * C * M                     # every candidate's features, computed once per run (tables)
    chunks = 6 * CHUNK_ELEMENTS if K * M * M > CHUNK_ELEMENTS else 0
    # a server round's (R, C, M) gather, its (R, P, M) arrays and copies of the sent vectors
    rounds = (R * C * M + 6 * R * P * M + 3 * K * M + 4 * N) if config.uses_server else 0
    chunks = max(chunks, rounds)
    records += T * (2 * P + N // 8) if config.uses_server else 0     # each round's compact weights
    memory = 1.2 * (copies * K * per_model + records + features + chunks) * 8 / 1e6 + FBO_BASE_MB
    transient = 1.2 * chunks * 8 / 1e6 + FBO_BASE_MB
    if config.algorithm in ("rgpe", "taf"):
        # The others' surrogates at every candidate (R N C M^2, once per run on a table) and, for RGPE, the
        # ranking losses of S = 100 samples on the target's observations every iteration (engine.fbo.meta).
        seconds += R * N * C * M * M * 2e-10
        if config.algorithm == "rgpe":
            targets = 1 if config.dissimilarity is not None else min(config.targets or N, N)
            seconds += T * R * targets * N * (n_init + T) ** 2 * 100 * 2e-9
        memory += (R * N * (2 * C + M * M)) * 8 / 1e6
    own_seconds, own_mb, own_transient = own_gp_cost(config, K, C,
                                                     refit=None if own is None else own["refit_every"])
    seconds = with_margin("fbo", seconds + copies * own_seconds)     # the run's own work (not its objective, its ε)
    memory += copies * own_mb
    transient += copies * own_transient
    if objective is None:
        objective = objective_cost(config.dataset, N, alpha=config.alpha, domain=config.domain)
    seconds += objective.seconds
    memory += objective.memory_mb
    transient += objective.memory_mb         # a table build's workers exit; a built objective is shared
    if accounting and config.is_private:
        seconds += accountant_cost(T, (config.accountant,), points=2 if config.budget is not None else 1,
                                   calibrations=1 if config.calibrate_z else 0, z=config.z).seconds
    knobs = [("agents", N, FBO_USUAL["agents"], 1), ("iterations", T, FBO_USUAL["iterations"], 1),
             ("runs", R, FBO_USUAL["runs"], 1), ("features", M, FBO_USUAL["features"], 2),
             ("n_init", n_init, FBO_USUAL["n_init"], 0.5)]
    if P > 1:
        knobs.append(("P", P, FBO_USUAL["P"], 1))
    if config.domain == "continuous" and config.dataset != "synthetic" and own is None:
        knobs.insert(0, ("domain", 1000, 1, 1))
    cost = priced(seconds, memory, knobs, transient_mb=min(transient, memory))
    # Nothing a run keeps is P x N (the sub-regions' weights are two numbers each): P drives time, not memory.
    return replace(cost, memory_field=next((k for k in cost.knobs if k != "P"), cost.field))


def _sum_of_squares(m: int) -> float:
    return m * (m + 1) * (2 * m + 1) / 6 if m > 0 else 0.0


def _sum_of_cubes(m: int) -> float:
    return (m * (m + 1) / 2) ** 2 if m > 0 else 0.0


def own_gp_cost(config, K: int, C: int, refit: int | None = None) -> tuple[float, float, float]:
    """(CPU seconds, MB, MB of temporaries) of the K agents' own GPs over a run of ``config`` (an FboConfig)
    with C candidates (``refit``: the objective's own re-fit period when the configuration leaves it open)."""
    if config.own_sampler == "shared":
        return 0.0, 0.0, 0.0
    T, F, n = int(config.iterations), int(config.own_features), int(config.n_init) + int(config.iterations)
    refit = config.refit_every if config.refit_every is not None else refit
    if refit is None:       # the task's own period (engine.objectives.registry)
        refit = dataset_costs(config.dataset).own_refit_every
    # Observations grow from n_init to n over the run: the time follows the mean of n^2 and n^3 over the
    # iterations, the memory the largest n.
    low, values = int(config.n_init) - 1, T + 1
    square = (_sum_of_squares(n) - _sum_of_squares(low)) / values
    cube = (_sum_of_cubes(n) - _sum_of_cubes(low)) / values
    gram = OWN_GRAM_S * (1 + OWN_GRAM_KERNEL * min(1.0, n / OWN_GRAM_LARGE_N))
    per_iteration = (OWN_OVERHEAD_S * max(1.0, F / 100) + OWN_CANDIDATE_S * C * F + gram * square * F
                     + OWN_CHOLESKY_S * cube)
    fits = (FIRST_FIT_COST + T // int(refit)) if refit else 0
    seconds = OWN_MARGIN * K * (T * per_iteration + fits * (OWN_FIT_S + OWN_FIT_CUBE_S * cube))
    matrices = 2 if config.own_sampler == "pathwise" else 1
    chunk = min(K, OWN_CHUNK) * (2 * n * n + 3 * n * F)
    transient_mb = OWN_BASE_MB + 1.2 * chunk * 8 / 1e6
    return seconds, transient_mb + 1.2 * (matrices * K * n * n + K * n * 4) * 8 / 1e6, transient_mb
