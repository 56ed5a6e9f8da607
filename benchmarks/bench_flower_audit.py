"""Benchmark the audit of the three built-in Flower strategies: the claimed-vs-audited table, and a trial's cost.

For every strategy (Flower's ``DifferentialPrivacyServerSideFixedClipping``
around ``FedAvg``, the product's DP-FTS-DE strategy, the deliberately broken
clip-after-mean one) at q in {0.25, 0.5} and z in {1, 2} (one release,
delta = 1e-5, 95 % confidence): the claimed epsilon, the audited lower bound,
whether it is flagged, the trials and the seconds. ``--reference`` adds the
engine's own server game (``engine.audit``, no Flower) at the same q, z and
trials: the most a game of this shape shows with that many trials.

The number of agents is the smallest that gives the two honest strategies two replies a
round (Flower's wrapper and the broken one sample round(q N) clients outside
the audited ``aggregate_train``; neither claim depends on N), so a trial costs
as little as the strategy allows; the broken one gets 16 (see :func:`engine.flower.audit_config.game_agents`).
``--agents`` overrides both.

``--per-trial`` only measures the CPU time of one trial (one call of the
strategy's ``aggregate_train`` plus the game's bookkeeping) per strategy.

Usage::

    python -m benchmarks.bench_flower_audit [--trials 20000] [--workers 2] [--reference]
    python -m benchmarks.bench_flower_audit --trials 1000000 --strategies flower-dp-fixed dp-fts-de --q 0.5 --z 1
    python -m benchmarks.bench_flower_audit --per-trial

Prints a Markdown table and writes JSON to ``benchmarks/results/bench_flower_audit.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from benchmarks import RESULTS

import numpy as np

from engine.audit import ServerAudit, run_audit
from engine.flower.audit import BUILTINS, StrategyAudit, StrategyGame, audit_strategy, load_factory, quiet_flower
from engine.flower.audit_config import game_agents

ROOT = Path(__file__).resolve().parents[1]
LABELS = {"flower-dp-fixed": "Flower DP wrapper (server-side fixed clipping) + FedAvg",
          "dp-fts-de": "product's DP-FTS-DE strategy (P = 1)",
          "broken-clip-after-mean": "broken: clip after averaging",
          "engine": "engine's own server game (no Flower)"}


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def per_trial(trials: int = 2000) -> list[dict]:
    rows = []
    for name in BUILTINS:
        config = StrategyAudit(strategy=name, q=0.5, z=1.0, agents=4, trials=400)
        target = load_factory(name)(config)
        with quiet_flower():
            game = StrategyGame(config, target)
            start = time.process_time()
            game.scores("in", trials, np.random.default_rng(1))
            cpu = (time.process_time() - start) / trials
        rows.append({"strategy": name, "agents": 4, "cpu_ms_per_trial": 1e3 * cpu})
        print(f"{name}: {1e3 * cpu:.3f} ms CPU per trial ({load()})", flush=True)
    return rows


def row_of(name: str, q: float, z: float, trials: int, result, seconds: float, agents: int) -> dict:
    return {"strategy": name, "q": q, "z": z, "agents": agents, "epsilon_claimed": float(result.epsilon_claimed),
            "epsilon_lower": float(result.epsilon_lower), "flagged": bool(result.violation), "trials": trials,
            "seconds": seconds, "share_of_claim": float(result.epsilon_lower / result.epsilon_claimed)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--strategies", nargs="+", default=list(BUILTINS), choices=BUILTINS)
    parser.add_argument("--q", type=float, nargs="+", default=[0.25, 0.5])
    parser.add_argument("--z", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--agents", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reference", action="store_true", help="add the engine's own server game")
    parser.add_argument("--per-trial", action="store_true", help="only measure a trial's CPU time")
    parser.add_argument("--out", default=str(RESULTS / "bench_flower_audit.json"))
    args = parser.parse_args(argv)

    if args.per_trial:
        rows = per_trial()
    else:
        rows = []
        print("| strategy | q | z | agents | claimed ε | audited lower bound | share | flagged | trials | seconds |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        cases = [(name, q, z) for name in args.strategies for q in args.q for z in args.z]
        if args.reference:
            cases += [("engine", q, z) for q in args.q for z in args.z]
        for name, q, z in cases:
            agents = args.agents or game_agents(name, q)
            start = time.perf_counter()
            if name == "engine":
                result = run_audit(ServerAudit(q=q, z=z, agents=agents, trials=args.trials, accountant="rdp",
                                               canary_norm=1000.0, seed=args.seed))
            else:
                config = StrategyAudit(strategy=name, q=q, z=z, agents=agents, trials=args.trials, seed=args.seed)
                result = audit_strategy(config, workers=args.workers)
            row = row_of(name, q, z, args.trials, result, time.perf_counter() - start, agents)
            rows.append(row)
            print(f"| {LABELS[name]} | {q:g} | {z:g} | {agents} | {row['epsilon_claimed']:.3f} | "
                  f"{row['epsilon_lower']:.3f} | {row['share_of_claim']:.0%} | "
                  f"{'**yes**' if row['flagged'] else 'no'} | {args.trials:,} | {row['seconds']:.1f} |", flush=True)
        print(f"({load()}, {args.workers} worker processes)")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "load": load(), "args": vars(args)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
