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
# a chunk needs a few arrays of its largest size (the mechanism's temporaries),
# and every trial keeps 3 float64 (its score, the sorted halves).
OVERHEAD_SECONDS = {"fbo-server": 1.0e-6, "hype-votes": 0.2e-6}
PER_ELEMENT_SECONDS = {"fbo-server": 2.0e-8, "hype-votes": 1.8e-8}
CHUNK_ARRAYS = 6
BYTES_PER_TRIAL = 3 * 8
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
    work = int(config.trials) * largest * repeats
    peak = CHUNK_ARRAYS * min(chunk, config.trials) * (largest + regions) * 8 + BYTES_PER_TRIAL * int(config.trials)
    per_release = OVERHEAD_SECONDS[mechanism] + PER_ELEMENT_SECONDS[mechanism] * (largest + regions)
    return AuditCost(work=work, chunk_trials=chunk, peak_bytes=int(peak),
                     seconds=int(config.trials) * repeats * per_release)


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
