"""Sweeps from the papers, ready to run (the page's presets and ``--preset`` on the CLI)."""

from __future__ import annotations

import math

from engine.fbo.presets import PRESETS
from engine.sweep.spec import SweepSpec
from engine.validation import check_choice


def _fig3a() -> dict:
    preset = PRESETS["fig3a"]
    base = dict(preset["base"])
    z_values = [c["z"] for c in preset["compare"] if "z" in c]
    q_values = sorted({c["q"] for c in preset["compare"] if "q" in c} | {base["q"]})
    return dict(label="Landmine, paper Fig. 3a: privacy loss against 1 - AUC after 60 iterations "
                      "(z varies at q = 0.35, q varies at z = 1; TS, FTS and FTS-DE as levels)",
                tool="fbo", base=base, axes=(("z", tuple(z_values)), ("q", tuple(q_values))),
                # 5 runs per setting keep a first visit (the landmine table built, 12 settings of 29 agents'
                # own GPs) within a default host's 2 minutes; the paper's 100 runs are on the Paper
                # reproduction page.
                combine="one-at-a-time", references=tuple(preset["references"]), runs=5,
                needs_data="landmine")


def _synthetic(name: str, axis: str) -> dict:
    preset = PRESETS[name]
    values = tuple(c[axis] for c in preset["compare"])
    return dict(label=f"Synthetic, paper {preset['label'].split(':')[0].replace('Paper ', '')}: "
                      f"impact of {axis} (N = 200, T = 40; TS and FTS-DE as levels)",
                tool="fbo", base=dict(preset["base"]), axes=((axis, values),), combine="grid",
                references=(dict(algorithm="ts"), dict(algorithm="fts-de")), runs=5)


SWEEP_PRESETS = {
    "fig3a": _fig3a(),
    "fig2c": _synthetic("fig2c", "q"),
    "fig2d": _synthetic("fig2d", "z"),
    "synthetic-q-z": dict(label="Synthetic: q x z grid (heatmap of Fig. 2c-d's settings)", tool="fbo",
                          base=dict(PRESETS["fig2c"]["base"]),
                          axes=(("q", (0.15, 0.25, 0.5)), ("z", (1.0, 1.2, 1.5))), combine="grid",
                          references=(dict(algorithm="ts"),), runs=5),
    # DP-HYPE paper Sec. V-B: n = 250 clients, p = 100 candidates, |H_good| = 5, delta = 1e-5; the
    # epsilons of Sec. VI; k from unanimous-ish (1) to many votes per client. 500 repetitions x 2 seeded
    # runs per setting keep the page interactive (the paper uses 5000 repetitions).
    "hype-epsilon-k": dict(label="DP-HYPE simulation (paper Sec. V-B): success rate over epsilon x k",
                           tool="hype", base=dict(mode="simulation", clients=250, candidates=100, good=5,
                                                  sigma_loss=0.2, delta=1e-5, repetitions=500),
                           axes=(("epsilon", (0.1, 0.25, 0.5, 1.0, 3.0)), ("k", (1, 5, 20))),
                           combine="grid", runs=2),
    # PO-GP-UCB paper Tables 1-3: synthetic GP, delta = 1e-5, T = 50, epsilon = exp(1.1), exp(1.3), exp(1.5).
    "pogpucb-epsilon-r": dict(label="PO-GP-UCB synthetic GP (paper Tables 1-3): simple regret over epsilon x r",
                              tool="pogpucb", base=dict(dataset="synthetic", delta=1e-5, iterations=50, baseline=False),
                              axes=(("epsilon", tuple(round(math.exp(v), 3) for v in (1.1, 1.3, 1.5))),
                                    ("r", (3, 10, 20))), combine="grid", runs=5),
}


def preset_spec(name: str, **changes) -> SweepSpec:
    """The :class:`SweepSpec` of a preset, with ``changes`` (e.g. ``runs=2``) applied."""
    check_choice("preset", name, SWEEP_PRESETS, name="sweep preset")
    preset = {k: v for k, v in SWEEP_PRESETS[name].items() if k != "needs_data"}
    preset.update(changes)
    return SweepSpec(**preset)
