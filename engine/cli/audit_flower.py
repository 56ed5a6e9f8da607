"""``python -m engine audit --mechanism flower``: the distinguishing game against a Flower strategy.

Kept apart from :mod:`engine.cli.audit` so that module's options stay as they
are; this one reads the options it shares (q, z, S, agents, features, steps,
canary norm, trials, delta, seed, accountant) and the two of its own.
"""

from __future__ import annotations

import sys

from engine.executor import from_args
from engine.flower.audit import BUILTINS, StrategyAudit, load_factory, run_strategy_audit
from engine.flower.audit_config import PARTICIPANT_TARGETS, ParticipantAudit
from engine.flower.one_run import StrategyOneRun
from engine.validation import ConfigError, check_choice, check_int

SHARED = ("q", "z", "S", "agents", "features", "steps", "canary_norm", "trials", "delta", "seed")
MAX_WORKERS = 64
NOT_FOR_FLOWER = ("P", "sampling", "weights", "weight_a", "weight_schedule", "epsilon", "sigma", "k", "candidates",
                  "clients", "aggregation")
ATTACKERS = ("game", "participant")
PARTICIPANT_OPTIONS = ("agents", "steps", "q", "z", "S", "P", "features", "candidates", "k", "epsilon", "seed")
NOT_FOR_PARTICIPANT = ("trials", "canary_norm", "delta", "claimed_epsilon", "sampling", "weights", "weight_a",
                       "weight_schedule", "sigma", "clients", "aggregation")


def participant_config(args) -> ParticipantAudit:
    """The participant's attack of ``--attacker participant`` (its own targets, its own options)."""
    if not args.strategy:
        raise ConfigError(f"Name the target with --strategy: one of {', '.join(PARTICIPANT_TARGETS)}.", "strategy")
    stray = [name for name in NOT_FOR_PARTICIPANT if getattr(args, name, None) is not None]
    if stray:
        raise ConfigError(f"--{stray[0].replace('_', '-')} does not apply to the participant's attack.", stray[0])
    if getattr(args, "noise_scale", 1.0) not in (None, 1.0):
        raise ConfigError("--noise-scale does not apply to the participant's attack.", "noise_scale")
    settings = {name: getattr(args, name) for name in PARTICIPANT_OPTIONS if getattr(args, name, None) is not None}
    return ParticipantAudit(strategy=args.strategy, **settings)


ONE_RUN_SHARED = ("q", "z", "S", "steps", "canaries", "canary_norm", "delta", "seed")
NOT_FOR_ONE_RUN = ("trials", "agents", "features", *NOT_FOR_FLOWER)


def one_run_config(args) -> StrategyOneRun:
    """The one-run audit of ``--mechanism flower --one-run``: canary replies to the strategy's aggregate_train."""
    if not args.strategy:
        raise ConfigError(f"Name the strategy with --strategy: one of {', '.join(BUILTINS)} or MODULE:FACTORY.",
                          "strategy")
    stray = [name for name in NOT_FOR_ONE_RUN if getattr(args, name, None) is not None]
    if stray:
        raise ConfigError(f"--{stray[0].replace('_', '-')} does not apply to the one-run audit of a Flower "
                          "strategy.", stray[0])
    settings = {name: getattr(args, name) for name in ONE_RUN_SHARED if getattr(args, name, None) is not None}
    accountant = args.accountant if args.accountant in ("ma", "rdp", "pld") else "rdp"
    return StrategyOneRun(strategy=args.strategy, claimed_epsilon=args.claimed_epsilon, accountant=accountant,
                          **settings)


def config_from_args(args) -> StrategyAudit | ParticipantAudit | StrategyOneRun:
    if check_choice("attacker", getattr(args, "attacker", "game") or "game", ATTACKERS) == "participant":
        if getattr(args, "one_run", False):
            raise ConfigError("--one-run and --attacker participant are two different audits; choose one.",
                              "attacker")
        return participant_config(args)
    if getattr(args, "one_run", False):
        return one_run_config(args)
    if getattr(args, "canaries", None) is not None:
        raise ConfigError("--canaries applies to the one-run audit only (--one-run).", "canaries")
    if not args.strategy:
        raise ConfigError(f"Name the strategy with --strategy: one of {', '.join(BUILTINS)} or MODULE:FACTORY.",
                          "strategy")
    stray = [name for name in NOT_FOR_FLOWER if getattr(args, name, None) is not None]
    if stray:
        raise ConfigError(f"--{stray[0].replace('_', '-')} does not apply to the flower mechanism.", stray[0])
    if getattr(args, "noise_scale", 1.0) not in (None, 1.0):
        raise ConfigError("--noise-scale does not apply to the flower mechanism; audit a strategy of your own "
                          "that adds less noise instead.", "noise_scale")
    settings = {name: getattr(args, name) for name in SHARED if getattr(args, name, None) is not None}
    accountant = args.accountant if args.accountant in ("ma", "rdp", "pld") else "rdp"
    return StrategyAudit(strategy=args.strategy, claimed_epsilon=args.claimed_epsilon, accountant=accountant,
                         **settings)


def run_flower(args) -> dict:
    config = config_from_args(args)
    if isinstance(config, ParticipantAudit):
        return run_participant(config)
    if isinstance(config, StrategyOneRun):
        return run_one_run(config)
    workers = check_int("workers", getattr(args, "workers", 1), 1, MAX_WORKERS, name="number of worker processes")
    try:
        factory = load_factory(config.strategy)      # refuses module paths when hosted, before any work
        result = run_strategy_audit(config, factory, executor=from_args(args, workers=workers))
    except ImportError as err:
        raise ConfigError(f"Auditing a Flower strategy needs Flower (pip install -r requirements-dev.txt): {err}.",
                          "strategy") from err
    if result["violation"]:
        print(f"warning: the audited lower bound {result['epsilon_lower']:.3f} exceeds the claimed epsilon "
              f"{result['epsilon_claimed']:.3f}: the strategy leaks more than it claims.", file=sys.stderr)
    return result


def run_participant(config: ParticipantAudit) -> dict:
    try:
        from engine.flower.participant_targets import participant_audit     # needs Flower
    except ImportError as err:
        raise ConfigError(f"The participant's attack needs Flower (pip install -r requirements-dev.txt): {err}.",
                          "strategy") from err
    result = participant_audit(config)
    if result["regenerated"] or result["inconclusive"]:
        print(f"warning: {result['verdict']}", file=sys.stderr)
    return result


def run_one_run(config: StrategyOneRun) -> dict:
    try:
        from engine.flower.one_run import strategy_one_run     # needs Flower

        factory = load_factory(config.strategy)      # refuses module paths when hosted, before any work
        result = strategy_one_run(config, factory)
    except ImportError as err:
        raise ConfigError(f"Auditing a Flower strategy needs Flower (pip install -r requirements-dev.txt): {err}.",
                          "strategy") from err
    if result.violation:
        print(f"warning: {result.verdict}", file=sys.stderr)
    return result.to_json()
