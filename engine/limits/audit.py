"""The price of a privacy audit (``audit_cost``), and the chunks its games are played in.

An audit plays ``trials`` games, in chunks whose size bounds the memory and
lets progress and cancel come often (:func:`chunk_trials`, which the games
use). The configurations are read by their fields (``mechanism``, ``trials``
and the mechanism's own sizes), so this module needs nothing of
:mod:`engine.audit`, which imports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.limits.core import Cost, knob_ranking, with_margin
from engine.limits.privacy import accountant_cost

CHUNK_ELEMENTS = 1 << 21   # elements of the largest per-chunk array (16 MiB of float64)
CHUNK_WORK = 1 << 23       # elements touched per chunk over all releases: progress every ~0.1 s

# Measured on the 2-core development machine (benchmarks/bench_audit.py and the
# README's audit section), rounded up: seconds per trial and release are
# OVERHEAD + PER_ELEMENT x (elements the mechanism touches per trial and release);
# a chunk needs a few arrays of its largest size (the mechanism's temporaries).
# Trials are counted on grids as they are played (engine.audit.bands), so no
# memory grows with them: the pilot that places the grids keeps its scores
# (PILOT_TRIALS per world, a float64 per statistic), the counts are a few kB.
# The server's game on many agents touches each element several times (the clipped vectors, the sub-regions' sums
# and weights): 10,000 agents x 2 features over 6,000 trials took 6.5 reference seconds (5.4e-8 per element),
# 2,400 agents and sub-regions x 8 features x 4 releases 29.1 (3.2e-8); priced at 6e-8.
OVERHEAD_SECONDS = {"fbo-server": 1.0e-6, "hype-votes": 0.2e-6}
PER_ELEMENT_SECONDS = {"fbo-server": 6.0e-8, "hype-votes": 1.8e-8}
CHUNK_ARRAYS = 6
BYTES_PER_TRIAL = 3 * 8      # a Flower strategy's game: its pilot and counts, priced per trial as before
PILOT_PER_WORLD, PILOT_LEAST = 20_000, 200    # engine.audit.bands.PILOT_TRIALS, engine.audit.game.grids_of's least
PILOT_BYTES = 2 * PILOT_PER_WORLD * 2 * 8     # the pilot's scores: two worlds, two statistics
AUDIT_BASE_MB = 10.0         # the game's setup (vectors, weights) and the bound's arrays
AUDIT_SETUP_SECONDS = 0.2    # the game's setup and the bound's statistics
AUDIT_USUAL = dict(P=1, trials=200_000, steps=1, agents=10, features=4, candidates=100, clients=250)


def chunk_trials(elements_per_release: int, releases: int = 1) -> int:
    """Trials per chunk: one (trials x elements) array holds at most CHUNK_ELEMENTS numbers and a
    chunk touches at most CHUNK_WORK over all releases (so progress and cancel come often)."""
    elements = max(1, int(elements_per_release))
    return int(max(1, min(CHUNK_ELEMENTS // elements, CHUNK_WORK // (elements * max(1, int(releases))))))


@dataclass(frozen=True)
class AuditCost:
    """What an audit will ask of the machine, known before it runs.

    ``work``: array elements the mechanism touches, trials x steps x agents x
    features for the server, trials x candidates (x clients for secure
    summation) for the votes; ``peak_bytes`` (beyond the interpreter's
    imports) and ``seconds`` are upper estimates from measured constants.
    """

    work: int
    chunk_trials: int
    peak_bytes: int
    seconds: float


def _mechanism(config) -> str:
    mechanism = getattr(config, "mechanism", None)
    if mechanism not in OVERHEAD_SECONDS:
        raise TypeError(f"Not an audit configuration: {type(config).__name__}.")
    return mechanism


def _elements_per_trial(config) -> tuple[int, int]:
    """(elements of the largest per-trial array, how many times the mechanism touches that many)."""
    if _mechanism(config) == "fbo-server":
        return config.agents * config.features, config.steps
    return config.candidates, (config.clients if config.aggregation == "secure-sum" else 1)


def estimate(config) -> AuditCost:
    """The cost of ``run_audit(config)`` (a ServerAudit or VoteAudit), without running it."""
    mechanism = _mechanism(config)
    largest, repeats = _elements_per_trial(config)
    # the server's sub-regions: each trial's (P, M) sums, noise and broadcast (engine.fbo.weights.RegionWeights)
    regions = getattr(config, "P", 1) * config.features if mechanism == "fbo-server" else 0
    chunk = chunk_trials(largest + regions, repeats)
    # The pilot that places the grids plays max(200, min(20,000, trials per world)) more trials in each world.
    played = int(config.trials) + 2 * max(PILOT_LEAST, min(PILOT_PER_WORLD, int(config.trials) // 2))
    work = played * largest * repeats
    peak = CHUNK_ARRAYS * min(chunk, played) * (largest + regions) * 8 + PILOT_BYTES
    per_release = OVERHEAD_SECONDS[mechanism] + PER_ELEMENT_SECONDS[mechanism] * (largest + regions)
    return AuditCost(work=work, chunk_trials=chunk, peak_bytes=int(peak), seconds=played * repeats * per_release)


def audit_cost(config) -> Cost:
    """:func:`estimate` as the host's :class:`~engine.limits.Cost`, with the knob to lower first."""
    estimated = estimate(config)
    names = (("trials", "steps", "agents", "features") if _mechanism(config) == "fbo-server"
             else ("trials", "clients", "candidates"))
    knobs = [(name, getattr(config, name), AUDIT_USUAL[name], 1) for name in names]
    if _mechanism(config) == "fbo-server" and getattr(config, "P", 1) > 1:
        knobs.append(("P", config.P, 1, 1))
    ranked = knob_ranking(knobs)
    seconds = with_margin("audit", estimated.seconds + AUDIT_SETUP_SECONDS)
    if _mechanism(config) == "fbo-server":
        # the claimed epsilon and the canary's, each one epsilon of the config's accountant after ``steps``
        seconds += accountant_cost(config.steps, (config.accountant,), curve=False, points=2, z=config.z).seconds
    return Cost(seconds=seconds, memory_mb=AUDIT_BASE_MB + estimated.peak_bytes / 1e6, field=ranked[0], knobs=ranked)


# A Flower strategy's game runs the strategy's own aggregate_train once per trial and release, on replies built
# once (benchmarks/bench_flower_audit.py --per-trial): 0.25-0.45 ms of CPU with 4 agents, 0.36-0.71 ms with 8 on the
# 2-core machine, about 0.07 ms more per agent; priced at 0.4 ms + 0.15 ms per agent, two to four times that
# (a loaded machine), plus Flower's imports.
STRATEGY_TRIAL_SECONDS = 4e-4
STRATEGY_AGENT_SECONDS = 1.5e-4
STRATEGY_BASE_SECONDS = 5.0
STRATEGY_BASE_MB = 300.0


def strategy_audit_cost(trials: int, steps: int = 1, agents: int = 10, features: int = 4) -> Cost:
    """The price of auditing a Flower strategy (``audit --mechanism flower``): every trial runs the strategy's
    ``aggregate_train`` on ``agents`` replies of ``features`` numbers, ``steps`` times."""
    per_trial = STRATEGY_TRIAL_SECONDS + STRATEGY_AGENT_SECONDS * int(agents)
    seconds = with_margin("audit", STRATEGY_BASE_SECONDS + int(trials) * max(1, int(steps)) * per_trial)
    memory = STRATEGY_BASE_MB + BYTES_PER_TRIAL * int(trials) / 1e6 + 8 * agents * features * 100 / 1e6
    knobs = [("trials", trials, AUDIT_USUAL["trials"], 1), ("steps", steps, 1, 1), ("agents", agents, 10, 1)]
    ranked = knob_ranking(knobs)
    return Cost(seconds=seconds, memory_mb=memory, field=ranked[0], knobs=ranked)


# A participant's attack (engine.flower.participant_targets) plays the app once in one process: every agent's
# round (its own GP's Thompson sample over 256 candidates, its BLR draw) is 5-15 ms of CPU on the 2-core machine
# (5 agents x 11 rounds took 1.1 s with Flower's round loop), priced at 40 ms, plus Flower's imports; the attack
# itself replays the releases on zero replies (negligible). DP-HYPE: one vote, n clients.
PARTICIPANT_ROUND_SECONDS = 0.04
PARTICIPANT_CLIENT_SECONDS = 0.01


def participant_audit_cost(app: str, agents: int, steps: int = 1) -> Cost:
    """The price of a participant's attack on an app played in one process (``audit --attacker participant``)."""
    rounds = int(agents) * (int(steps) + 1) if app == "fbo" else int(agents)
    per = PARTICIPANT_ROUND_SECONDS if app == "fbo" else PARTICIPANT_CLIENT_SECONDS
    knobs = [("agents", agents, 5, 1), ("steps", steps, 10, 1)] if app == "fbo" else [("agents", agents, 5, 1)]
    ranked = knob_ranking(knobs)
    return Cost(seconds=with_margin("audit", STRATEGY_BASE_SECONDS + rounds * per), memory_mb=STRATEGY_BASE_MB,
                field=ranked[0], knobs=ranked)


# The one-run audit of the fbo-server (engine.audit.one_run_server): T releases of m canary rows of the server's own
# round, then the bound (the one-run statistics over 54 candidate guess sets, the f-DP bound on six of them, the
# nested bounds). Measured on the 2-core machine at load ~10 (CPU seconds): 10^3 canaries x 40 releases 0.40 s,
# 10^4 x 40 0.87 s, 10^5 x 40 1.9 s, 10^4 x 1000 2.5 s; priced at 2 s + 1 us per canary-release + 20 us per canary.
ONE_RUN_BASE_SECONDS = 2.0
ONE_RUN_ROW_SECONDS = 1e-6
ONE_RUN_CANARY_SECONDS = 2e-5
ONE_RUN_BYTES_PER_CANARY = 400          # the scores, the rows of one release and the sorted orders


def one_run_cost(config) -> Cost:
    """The price of ``run_one_run(config)`` (an :class:`engine.audit.OneRunAudit`)."""
    rows = int(config.canaries) * int(config.steps)
    seconds = (ONE_RUN_BASE_SECONDS + ONE_RUN_ROW_SECONDS * rows + ONE_RUN_CANARY_SECONDS * int(config.canaries)
               + accountant_cost(config.steps, (config.accountant,), curve=False, points=2, z=config.z).seconds)
    memory = AUDIT_BASE_MB + ONE_RUN_BYTES_PER_CANARY * int(config.canaries) / 1e6
    ranked = knob_ranking([("canaries", config.canaries, 1_000, 1), ("steps", config.steps, 40, 1)])
    return Cost(seconds=with_margin("audit", seconds), memory_mb=memory, field=ranked[0], knobs=ranked)


# The one-run audit of a Flower strategy (engine.flower.one_run): T rounds of its aggregate_train on about m / 2
# replies of m numbers each (m canaries), rebuilt every round, and a replay on no replies. Measured (CPU seconds,
# DP-FTS-DE): 200 canaries x 2 rounds 0.36 s, 1000 x 10 1.0 s, 1000 x 40 3.0 s beyond Flower's imports; priced at
# 0.2 ms per reply and 40 ns per number a round, twice the replay, plus Flower's imports.
FLOWER_ONE_RUN_REPLY_SECONDS = 2e-4
FLOWER_ONE_RUN_NUMBER_SECONDS = 4e-8
FLOWER_ONE_RUN_BYTES_PER_NUMBER = 32    # the canaries' vectors, the strategy's (m, m) matrix and its copies


def flower_one_run_cost(canaries: int, steps: int) -> Cost:
    """The price of a one-run audit of a Flower strategy with ``canaries`` canaries and ``steps`` rounds."""
    m, rounds = int(canaries), int(steps)
    seconds = STRATEGY_BASE_SECONDS + 2 * rounds * (m * FLOWER_ONE_RUN_REPLY_SECONDS
                                                    + m * m * FLOWER_ONE_RUN_NUMBER_SECONDS) + ONE_RUN_BASE_SECONDS
    memory = STRATEGY_BASE_MB + FLOWER_ONE_RUN_BYTES_PER_NUMBER * m * m / 1e6
    ranked = knob_ranking([("canaries", m, 500, 1), ("steps", rounds, 10, 1)])
    return Cost(seconds=with_margin("audit", seconds), memory_mb=memory, field=ranked[0], knobs=ranked)
