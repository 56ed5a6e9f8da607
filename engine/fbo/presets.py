"""Famous configurations from the papers, as FboConfig overrides.

Each preset is a dict of FboConfig fields, so a page can load it into its
controls and a sweep can start from it.
"""

from __future__ import annotations

# DP-FTS-DE paper, Sec. 5.1 and App. B.1: N = 200 agents, 1-D grid of 1000
# points, M = 50, 1 - p_t = 1/sqrt(t), N_init = 10, T = 40, S = 11.
SYNTHETIC = dict(dataset="synthetic", agents=200, iterations=40, features=50, pt_schedule="sqrt", n_init=10,
                 S=11.0, weight_schedule="synthetic", accountant="ma", delta=None)

# DP-FTS-DE paper, Sec. 5.2 and App. B.2: landmine detection, 29 fields.
LANDMINE = dict(dataset="landmine", agents=None, iterations=60, features=100, lengthscale=0.01, noise_var=1e-6,
                P=4, S=22.0, pt_schedule="linear", n_init=10, weight_schedule="real", accountant="ma", delta=None)

PRESETS = {
    "fig2a": dict(label="Paper Fig. 2a: benefit of distributed exploration",
                  base=dict(SYNTHETIC, algorithm="fts-de", P=2),
                  compare=[dict(algorithm="ts"), dict(algorithm="fts-de", P=1), dict(algorithm="fts-de", P=2),
                           dict(algorithm="fts-de", P=3)]),
    "fig2c": dict(label="Paper Fig. 2c: impact of q",
                  base=dict(SYNTHETIC, algorithm="dp-fts-de", P=2, z=1.0, q=0.25),
                  compare=[dict(q=0.15), dict(q=0.25), dict(q=0.5)]),
    "fig2d": dict(label="Paper Fig. 2d: impact of z",
                  base=dict(SYNTHETIC, algorithm="dp-fts-de", P=2, q=0.25, z=1.0),
                  compare=[dict(z=1.0), dict(z=1.2), dict(z=1.5)]),
    "fig3a": dict(label="Paper Fig. 3a: landmine privacy against utility after 60 iterations",
                  base=dict(LANDMINE, algorithm="dp-fts-de", q=0.35, z=1.0),
                  compare=[dict(z=z) for z in (1.0, 1.6, 2.0, 3.0, 4.0)]
                  + [dict(q=q) for q in (0.1, 0.15, 0.2, 0.25)],
                  references=[dict(algorithm="ts"), dict(algorithm="fts", fts_variant="concurrent"),
                              dict(algorithm="fts-de")]),
}
