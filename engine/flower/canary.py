"""A one-run privacy audit of a live DP-FTS-DE federation: canary SuperNodes, one run, the bound from the broadcasts.

What the operator does (docs/flower.md, "A one-run audit of a federation")
    1. Export the app with N = (the real agents) + C canary agents (``agents`` in the run config).
    2. ``python -m engine.flower.canary plan --agents A --canaries C > plan.json`` draws, from the operating
       system's entropy, which canary is in (probability 1/2 each) and prints every canary SuperNode's
       ``--node-config``: ``partition-id=i num-partitions=N canary="in"`` (or ``"out"``; Flower wants a string
       value quoted, so the whole value goes in single quotes on a command line). Keep plan.json from everyone
       else: it is the secret the audit tests against.
    3. Register and start the C canary SuperNodes with those node configs beside the real ones and run the
       app as usual (the README's run block); an ``in`` canary replies its canary vector (its own axis, at
       the clip bound), an ``out`` canary the zero vector (:func:`engine.flower.fbo_client.canary_round`).
    4. ``python -m engine.flower.canary audit --app . --plan plan.json --log run.log`` reads the broadcasts
       from the ServerApp's summary (every broadcast, as every node received it) and prints the claimed
       epsilon of the run and the one-run lower bound.
What it can show
    C canaries give at most C guesses: with a few SuperNodes the bound is near 0 whatever the mechanism, and even
    with all C guesses right it cannot exceed log(p / (1 - p)) with p^C = the test's level (about 1.9 for 10
    canaries at 95 %). A live one-run audit proves the deployment's path (the nodes' replies, the server's
    code, the broadcasts) runs the audited mechanism; the simulated one-run audit (``python -m engine audit
    --one-run``) and the many-trial audits are where its privacy is measured.
The scores are those of :mod:`engine.audit.one_run_server`, from the run config's public settings: the canary's
selection-mixture log-likelihood ratio along its axis, the reuse statistic and the shadow replay (the app's
server rebuilt from the run config, without any secret, replayed on zero vectors). The real agents' replies
also move the canaries' axes (they are not orthogonal to them), which only weakens the audit.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tomllib
from pathlib import Path

import numpy as np

from engine.audit.one_run import one_run_bound, randomized_response_ceiling
from engine.audit.stats import CONFIDENCE
from engine.fbo.plan import make_plan
from engine.fbo.subregions import Subregions
from engine.fbo.weights import subregion_weights
from engine.flower.fbo_client import CANARY_STATES
from engine.flower.outcome import RESULT_PREFIX, _records
from engine.flower.run_config import run_settings
from engine.validation import ConfigError, check_int

MAX_CANARY_NODES = 1000


def plan_canaries(agents: int, canaries: int, seed: int | None = None) -> dict:
    """Which of canary agents ``agents .. agents + canaries - 1`` are in (probability 1/2 each), and each canary
    SuperNode's ``--node-config``. The draw comes from the operating system's entropy unless ``seed`` is given
    (a test's)."""
    agents = check_int("agents", agents, 0, name="number of real agents")
    canaries = check_int("canaries", canaries, 1, MAX_CANARY_NODES, name="number of canary nodes")
    draw = np.random.default_rng(seed).random(canaries) < 0.5
    total = agents + canaries
    states = {agents + i: ("in" if draw[i] else "out") for i in range(canaries)}
    return {"agents": total, "real_agents": agents, "canaries": {str(i): s for i, s in states.items()},
            "node_configs": {str(i): f'partition-id={i} num-partitions={total} canary="{s}"'
                             for i, s in states.items()}}


def app_run_config(app_dir: Path) -> dict:
    """The run config an exported app's pyproject.toml gives ``flwr run``."""
    with open(Path(app_dir) / "pyproject.toml", "rb") as handle:
        return dict(tomllib.load(handle)["tool"]["flwr"]["app"]["config"])


def _mixture(w: np.ndarray, shift: np.ndarray, log_p: float, log_not_p: float) -> np.ndarray:
    """log(1 - p + p exp(shift w - shift^2 / 2)) with a shift per canary."""
    return np.logaddexp(log_not_p, log_p + shift * w - 0.5 * shift * shift)


def live_scores(run_config: dict, broadcasts: list, canaries: list[int], shadow=None) -> dict:
    """Each canary agent's scores from the run's broadcasts (release r at position r - 1, P x M each).

    ``shadow(config)``: the app's server class rebuilt without any secret (the participant's view); its
    releases on zero vectors are subtracted for the ``shadow`` score (left out when None)."""
    from engine.flower.settings import fbo_config

    config = fbo_config(run_settings(run_config, "fbo"))
    plan = make_plan(config)
    N, P, M, q = plan.n_agents, plan.n_subregions, config.features, config.q
    assignment = Subregions(P, 1).assign(N)
    clip = config.S / math.sqrt(P)
    index = np.asarray(canaries, dtype=int)
    scores = {"llr": np.zeros(len(index))}
    if len(broadcasts) >= 2:
        scores["reuse"] = np.zeros(len(index))
    replayer = None
    if shadow is not None:
        from engine.flower.participant import participant_process

        with participant_process():
            replayer = shadow(config)
        scores["shadow"] = np.zeros(len(index))
    log_p, log_not_p = math.log(q), (math.log1p(-q) if q < 1 else -math.inf)
    previous = None
    for r, broadcast in enumerate(broadcasts, start=1):
        y = np.asarray(broadcast, dtype=float).reshape(P, M)
        weights = np.asarray(subregion_weights(assignment, P, r, a=config.weight_a, schedule=config.weight_schedule,
                                               mode=config.weights), dtype=float)
        sigma = plan.z * weights.max() * config.S / q
        phi = weights[:, index]                                        # (P, C)
        along = y[:, index % M]                                        # (P, C)
        norms = np.linalg.norm(phi, axis=0)
        w = np.sum(phi * along, axis=0) / norms / sigma
        shift = norms * clip / q / sigma
        scores["llr"] += _mixture(w, shift, log_p, log_not_p)
        if previous is not None:
            scores["reuse"] = np.maximum(scores["reuse"],
                                         np.abs(along - previous).max(axis=0) / (math.sqrt(2) * sigma))
        if replayer is not None:
            replay = np.asarray(replayer.release(r, np.zeros((N, M))).broadcast, dtype=float)
            residual = np.sum(phi * (along - replay[:, index % M]), axis=0) / norms / (math.sqrt(2) * sigma)
            scores["shadow"] += _mixture(residual, shift / math.sqrt(2), log_p, log_not_p)
        previous = along
    return scores


def live_one_run(run_config: dict, summary: dict, plan: dict, *, shadow=None,
                 confidence: float = CONFIDENCE) -> dict:
    """The one-run audit of a live run: its ServerApp ``summary`` (with ``broadcasts``) against the canary
    ``plan`` (:func:`plan_canaries`); the JSON record the CLI prints."""
    start = time.perf_counter()
    broadcasts = summary.get("broadcasts")
    if not broadcasts:
        raise ConfigError("The run's summary holds no broadcasts (none released, or too many numbers to log).",
                          "summary")
    states = {int(i): s for i, s in plan["canaries"].items()}
    if any(s not in CANARY_STATES for s in states.values()):
        raise ConfigError("The plan's canaries must each be in or out.", "plan")
    canaries = sorted(states)
    included = np.array([states[i] == "in" for i in canaries])
    scores = live_scores(run_config, broadcasts, canaries, shadow)
    bound = one_run_bound(scores, included, float(summary["delta"]), confidence, nested=False)
    releases = len(broadcasts)
    guesses = bound.best
    return {"audit": "one-run", "mechanism": "flower-federation", "canaries": len(canaries),
            "included": int(included.sum()), "releases": releases, "epsilon_claimed": float(summary["epsilon"]),
            "delta": float(summary["delta"]), "epsilon_lower": bound.epsilon_lower,
            "epsilon_fdp": bound.epsilon_fdp, "confidence": confidence,
            "violation": bool(bound.epsilon_lower > float(summary["epsilon"])),
            "guesses": None if guesses is None else {"statistic": guesses.statistic, "guess_in": guesses.k_in,
                                                     "guess_out": guesses.k_out, "correct": guesses.correct},
            "most_provable": randomized_response_ceiling(len(canaries), 1.0 - confidence),
            "scores": {name: values.tolist() for name, values in scores.items()},
            "note": (f"{len(canaries)} canaries: even all {len(canaries)} guesses right prove at most epsilon "
                     f"{randomized_response_ceiling(len(canaries), 1.0 - confidence):.2f}; a live one-run audit "
                     "checks the deployment's path, the simulated one measures its privacy."),
            "seconds": time.perf_counter() - start}


def summary_from_log(text: str) -> dict:
    results = _records(text, RESULT_PREFIX)
    if not results:
        raise ConfigError("The log holds no RESULT summary of the ServerApp.", "log")
    return results[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.flower.canary", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    planned = commands.add_parser("plan", help="draw which canaries are in; print their node configs (JSON)")
    planned.add_argument("--agents", type=int, required=True, help="the federation's real agents")
    planned.add_argument("--canaries", type=int, required=True, help="canary SuperNodes to add")
    audited = commands.add_parser("audit", help="bound epsilon from a run's broadcasts and the plan (JSON)")
    audited.add_argument("--app", default=".", help="the exported app's folder (its run config)")
    audited.add_argument("--plan", required=True, help="the plan's JSON")
    audited.add_argument("--log", required=True, help="the run block's log (its RESULT line)")
    args = parser.parse_args(argv)
    try:
        if args.command == "plan":
            record = plan_canaries(args.agents, args.canaries)
        else:
            from engine.flower.fbo_strategy import DpFtsDeStrategy

            plan = json.loads(Path(args.plan).read_text())
            summary = summary_from_log(Path(args.log).read_text(errors="replace"))
            record = live_one_run(app_run_config(Path(args.app)), summary, plan, shadow=DpFtsDeStrategy)
    except (ConfigError, OSError, KeyError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(record, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
