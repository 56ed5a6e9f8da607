"""Ablations of the claims that do not hold: each of our deviations from what the authors did, switched off.

Where a claim of the DP-FTS-DE paper does not hold here and the investigation blames the paper, the
project differs from the authors' run in ways of its own. Each ablation switches one deviation to what
the authors did and re-judges the claims it could explain, with the same seeds (paired runs):

- ``landmine-metric``: the landmine score, the decision function's AUC (ours) against the AUC of
  ``SVC(probability=True).predict_proba`` (the authors', landmine_dp_fts_de.py:37-40; random_state 0);
  ``engine.objectives.landmine.make_task(metric=...)``.
- ``landmine-optimiser``: each landmine agent takes the argmax of its sample over the 50 x 50 table of (C, gamma)
  (ours) against the authors' optimiser on the continuous box, the SVM trained at the point found
  (:class:`engine.fbo.refine.RefinedSimulation`; helper_funcs_dp_fts_de.py:7-33).
- ``fig7a-shifts``: Fig. 7a's agents mix their own GP draw with a shared one (App. B.1.2) with our extra
  +-0.02 shifts on top, against the mixing alone (``engine.objectives.synthetic.build(shifts=...)``).
- ``pogpucb-extent``: PO-GP-UCB's Fig. 2a orderings on our synthetic grid [0, 7.5]^2 against half and twice
  that extent (the paper states none); ``PoConfig(extent=...)``.
- ``fig11-neighbours``: the RDP loss of a fixed sample under replace-one neighbours (ours, sensitivity
  2C) against the add/remove relation whose Poisson analysis the paper's Fig. 11 numbers match.
- ``clip-rate``: our agents' vectors clip 3-5 times as often as the paper says (Fig. 2b, 4); the vectors
  the agents send scaled by the factor that brings the S = 11 clip share to the paper's 0.8 %
  (:class:`ScaledSimulation`). Confounded: shrinking the vectors also lowers their signal against the fixed
  noise. ``clip-bound`` removes the confound: the clipping bound raised by 1 / factor (the same clip share),
  the vectors and the noise as they are, so only the clip rate moves. The factor is fitted on a seed set of its
  own (``seed + FIT_OFFSET``) and judged on the discovery and replication seed sets, never on the runs it was
  fitted to.
- ``phi-max``: the paper's global phi_max (Algorithm 1, line 11; the server's only setting) against the authors'
  per-sub-region phi_max (landmine_dp_fts_de.py:145, ``np.max(ws)``: each sub-region's noise from its own
  weights), on the claims about DE under privacy.

Every switch is an explicit option whose default is the path the reproduction runs (tests check the
default is unchanged bit for bit and that the switch changes only what it names). Each side of every row is
judged by the reproductions' one rule (:mod:`engine.reproduce.ablation_rule`: Student's t, Benjamini-Hochberg
over the ablation family, replication on the replication seed set, one-sided); :func:`conclusion_of` states
what the row says. ``python -m engine reproduce ablations`` runs them; the stored output is
``data/reproduction/ablations.json`` (read by :mod:`engine.reproduce.ablation_tables`).
"""

from __future__ import annotations

import math
import time
from functools import lru_cache

import numpy as np

from engine.reproduce.dp_fts_de import PART_SPECS
from engine.reproduce.report import SettingResult, deciding_comparison, judge
from engine.reproduce.runs import block_plan, outcome, run_tasks, setting_config
from engine.validation import ConfigError, check_choice, check_int

from engine.reproduce.ablation_specs import (ABLATIONS, CLIP_CLAIMS, FIT_OFFSET, FIT_RUNS,  # noqa: F401
                                             NAMES, OWN_CODE, PAPER_CLIP_PERCENT, SERVER_ONLY, conclusion_of)


# ---------------------------------------------------------------------------------------------- switches

@lru_cache(maxsize=4)
def switched_objective(switch: str | None, dataset: str, agents, alpha, objective_seed: int, split=None):
    """The objective a switch runs on (None: the configuration's own, built by the simulation)."""
    if switch == "metric":
        from engine.objectives.landmine import make_task
        from engine.objectives.task_objective import objective_for

        return objective_for(make_task(agents, metric="auc-proba"), "table")
    if switch == "continuous":
        from engine.objectives.landmine import make_task
        from engine.objectives.task_objective import objective_for

        return objective_for(make_task(agents), "continuous")
    if switch == "no-shifts":
        from engine.objectives import synthetic

        return synthetic.build(agents, alpha, objective_seed, shifts=False)
    if switch is None and dataset != "synthetic":     # a real task on the first ``agents`` fields
        from engine.objectives import build_objective

        return build_objective(dataset, n_agents=agents, split=split)
    return None


def scaled_simulation(config, objective=None, scale: float = 1.0):
    """A :class:`engine.fbo.simulation.Simulation` whose agents send ``scale`` times their vectors (1: unchanged)."""
    from engine.fbo.simulation import Simulation

    class ScaledSimulation(Simulation):
        sent_norms: list = []       # the norms of every round's sent vectors, all runs (read by clip_scale)

        def _draw_vectors(self, t: int) -> None:
            super()._draw_vectors(t)
            if self._sent is not None and scale != 1.0:
                self._sent = self._sent * scale
            if self._sent is not None:
                self.sent_norms = self.sent_norms + [np.linalg.norm(self._sent, axis=2).ravel()]

    return ScaledSimulation(config, objective)


def switched_config(config, switch: str | None):
    """The configuration a block runs with ``switch`` on: the continuous domain for the authors' optimiser."""
    return config.replace(domain="continuous") if switch == "continuous" else config


def block_cost(config, switch: str | None):
    """The price of one block of ``config`` with ``switch`` on (its objective apart): the one gate's FBO price, for
    the authors' optimiser with its refinement (:func:`engine.fbo.refine.refined_cost`)."""
    from engine.fbo.refine import refined_cost

    return refined_cost(switched_config(config, switch), refine=switch == "continuous")


def server_simulation(config, objective=None, **options):
    """A :class:`engine.fbo.simulation.Simulation` whose server runs with ablation switches ``options``
    (:func:`engine.fbo.server.aggregate_batch`'s ``phi_max``, ``clip_factor``; none: the paper's server)."""
    from engine.fbo.simulation import Simulation

    class SwitchedServer(Simulation):
        server_options = dict(options)

    return SwitchedServer(config, objective)


def run_switched(config, switch: str | None, scale: float = 1.0) -> tuple:
    """One block (``config.runs`` runs) with ``switch`` on (None: the reproduction's own path), its outcome;
    ``scale``: the fitted omega factor of the clip-rate switches."""
    from engine.fbo.simulation import Simulation
    from engine.reproduce.runs import run_config

    if switch is None and (config.agents is None or config.dataset == "synthetic"):
        return run_config(config)
    if switch in SERVER_ONLY and not config.is_private:
        return run_switched(config, None)
    objective = switched_objective(switch, config.dataset, config.agents, config.alpha, config.objective_seed,
                                   config.split)
    if switch == "omega-scale":
        sim = scaled_simulation(config, objective, scale)
    elif switch == "clip-bound":
        sim = server_simulation(config, objective, clip_factor=1.0 / scale)
    elif switch == "phi-max":
        sim = server_simulation(config, objective, phi_max="per-region")
    elif switch == "continuous":
        from engine.fbo.refine import RefinedSimulation

        sim = RefinedSimulation(switched_config(config, switch), objective)
    else:
        sim = Simulation(config, objective)
    for _ in sim:
        pass
    return outcome(sim.result())


def _block(key, item):
    config, switch, scale = item
    return key, run_switched(config, switch, scale)


# ---------------------------------------------------------------------------------------------- judging

def matching_claims(part, starts) -> tuple:
    """The part's claims whose text starts with one of ``starts`` (in the part's order)."""
    return tuple(c for c in part.claims if any(c.text.startswith(s) for s in starts))


def numbers_of(verdict) -> dict:
    """The raw numbers of a judged claim (the deciding comparison of an any-of claim); its verdict is given by
    :func:`engine.reproduce.ablation_rule.decide_ablations` over the ablation family."""
    n = deciding_comparison(verdict.numbers)
    row = {k: n.get(k) for k in ("better", "worse", "better_mean", "worse_mean", "difference", "stderr", "runs",
                                 "units", "paired")}
    if verdict.claim.kind != "metric":
        row["verdict"] = verdict.verdict
        row["ratio"] = n.get("ratio")
    return row


def _results(part, keys, outcomes, draws) -> dict:
    return {s.key: SettingResult(s, *outcomes[s.key], draws=draws) for s in part.settings if s.key in keys}


def _concat(parts: list[tuple]) -> tuple:
    clips = [p[4] for p in parts if p[4] is not None]
    return (np.concatenate([p[0] for p in parts]), parts[0][1], parts[0][2], float(sum(p[3] for p in parts)),
            float(np.average(clips, weights=[len(p[0]) for p in parts if p[4] is not None])) if clips else None)


def _sides(name: str, runs: int, seed: int, jobs, scale: float) -> dict:
    """{side: {claim text: Verdict}} of both sides of an FBO ablation at seed set ``seed``."""
    spec = ABLATIONS[name]
    part = PART_SPECS[spec["part"]]
    base = {**part.base, **spec.get("base", {})}
    claims = matching_claims(part, spec["claims"])
    keys = {k for c in claims for k in (*c.better, c.worse) if k in {s.key for s in part.settings}}
    settings = [s for s in part.settings if s.key in keys]
    if spec["switch"] == "metric":      # build both tables once here, not in every worker
        switched_objective(None, base["dataset"], base["agents"], None, 0, base.get("split"))
        switched_objective("metric", base["dataset"], base["agents"], None, 0, base.get("split"))
    plan = block_plan(seed, runs, part.draws, part.per_draw)
    todo = [((side, s.key, b), (setting_config(base, s, seed_b, size, objective), side, scale))
            for side in (None, spec["switch"]) for s in settings for b, (seed_b, size, objective) in enumerate(plan)]
    done = dict(run_tasks(todo, _block, jobs=jobs))
    from engine.reproduce.report import plan_draws

    draws = plan_draws(plan)
    out = {}
    for side in (None, spec["switch"]):
        outcomes = {s.key: _concat([done[(side, s.key, b)] for b in range(len(plan))]) for s in settings}
        out[side] = {v.claim.text: v for v in judge(claims, _results(part, keys, outcomes, draws), base)}
    return out


def run_fbo_ablation(name: str, runs: int, seed: int = 0, jobs: int | None = None, replicate: bool = True) -> dict:
    """Both sides of an FBO ablation at ``runs`` paired runs on the discovery seed set and (``replicate``) on the
    replication seed set: each claim's numbers with the deviation and without (judged by
    :func:`engine.reproduce.ablation_rule.decide_ablations`)."""
    from engine.reproduce.replication import replication_seed

    spec = ABLATIONS[name]
    started = time.perf_counter()
    fitted = {}
    scale = 1.0
    if spec["switch"] in ("omega-scale", "clip-bound"):
        scale = clip_scale(FIT_RUNS, seed + FIT_OFFSET)
        fitted = {"scale": scale, "fitted_on": {"seed": seed + FIT_OFFSET, "runs": FIT_RUNS}}
    found = _sides(name, runs, seed, jobs, scale)
    again = _sides(name, runs, replication_seed(seed), jobs, scale) if replicate else None
    rows = []
    for text in found[None]:
        w, wo = numbers_of(found[None][text]), numbers_of(found[spec["switch"]][text])
        row = {"claim": text, "source": found[None][text].claim.source, "deviation": spec["deviation"],
               "authors": spec["authors"], "with": w, "without": wo}
        if again is not None:
            row["replication"] = {"seed": replication_seed(seed), "with": numbers_of(again[None][text]),
                                  "without": numbers_of(again[spec["switch"]][text])}
        rows.append(row)
    return {"name": name, "part": spec["part"], "switch": spec["switch"], "runs": runs, "seed": seed,
            "base": spec.get("base", {}), **fitted, "rows": rows, "seconds": round(time.perf_counter() - started, 1)}


def clip_scale(runs: int = FIT_RUNS, seed: int = FIT_OFFSET, target: float = PAPER_CLIP_PERCENT) -> float:
    """The factor on the agents' vectors that makes DP-FTS-DE (S = 11, P = 2, synthetic) clip ``target`` percent,
    as the reproduction counts it (the share of each round's vectors above S / sqrt(P), averaged over rounds), on
    ``runs`` runs at seed set ``seed`` (each on its own function, as the part draws them): the fitting seed set,
    never the runs the ablation judges. The rounds' vectors of every run are taken as sent."""
    from engine.fbo import FboConfig
    from engine.reproduce.dp_fts_de_appendix import DP_MAIN

    part = PART_SPECS["synthetic-appendix"]
    norms = []
    for block_seed, size, objective in block_plan(seed, runs, part.draws, part.per_draw):
        draw = {} if objective is None else {"objective_seed": objective}
        config = FboConfig(**{**part.base, **DP_MAIN, "runs": size, "seed": block_seed, **draw})
        sim = scaled_simulation(config)
        for _ in sim:
            pass
        norms += sim.sent_norms
    threshold = config.S / math.sqrt(config.P)
    low, high = 0.0, 1.0
    for _ in range(40):      # the share falls as the factor does: bisection
        middle = (low + high) / 2
        share = 100.0 * np.mean([np.mean(middle * n > threshold) for n in norms])
        low, high = (middle, high) if share < target else (low, middle)
    return float(low)


def run_ablations(names=NAMES, *, runs: int = 100, seed: int = 0, jobs: int | None = None,
                  replicate: bool = True) -> dict:
    """Every ablation asked for, judged by the one rule: ``{"ablations": {name: table}}`` (plain data)."""
    from engine.reproduce.ablation_own import extent_ablation, fig11_ablation
    from engine.reproduce.ablation_rule import decide_ablations

    names = tuple(names)
    if not names:
        raise ConfigError("Name at least one ablation.", "ablations")
    for name in names:
        check_choice("ablation", name, NAMES)
    check_int("runs", runs, 2, 10_000)
    out = {}
    for name in names:
        if name == "fig11-neighbours":
            out[name] = fig11_ablation()
        elif name == "pogpucb-extent":
            out[name] = extent_ablation(min(runs, 50), seed, replicate=replicate)
        else:
            out[name] = run_fbo_ablation(name, runs, seed, jobs, replicate)
    return decide_ablations({"ablations": out})


def ablation_settings(names=None) -> list[tuple[str, str]]:
    """(part, setting key) of every setting the FBO ablations ``names`` run (a comma-separated string or names)."""
    if isinstance(names, str) or names is None:
        names = NAMES if names is None else tuple(n.strip() for n in names.split(",") if n.strip())
    out = []
    for name in names:
        spec = ABLATIONS[name]
        if name in OWN_CODE:
            continue
        part = PART_SPECS[spec["part"]]
        keys = {k for c in matching_claims(part, spec["claims"]) for k in (*c.better, c.worse)}
        out += [(spec["part"], s.key) for s in part.settings if s.key in keys]
    return out


def ablation_lines(payload: dict) -> list[str]:
    """A readable table per ablation: each claim's verdict with our deviation and without it (the CLI's stderr)."""
    lines = []
    for name, table in payload["ablations"].items():
        spec = ABLATIONS[name]
        lines.append(f"\n{name} ({table['runs']} paired runs): ours: {spec['deviation']}; the authors': "
                     f"{spec['authors']}")
        for row in table["rows"]:
            w, wo = row["with"], row["without"]
            lines.append(f"  {row['claim']}: with {w['verdict']} ({w['difference']:+.4f} ± {w['stderr']:.4f}), "
                         f"without {wo['verdict']} ({wo['difference']:+.4f} ± {wo['stderr']:.4f})"
                         + (f" [{w.get('why')}; {wo.get('why')}]" if w.get("why") else ""))
    return lines

