"""Famous configurations from the papers, as FboConfig overrides.

Each preset is a dict of FboConfig fields, so a page can load it into its
controls and a sweep can start from it.
"""

from __future__ import annotations

# DP-FTS-DE paper, Sec. 5.1 and App. B.1: N = 200 agents, 1-D grid of 1000
# points, M = 50, 1 - p_t = 1/sqrt(t), N_init = 10, T = 40, S = 11. Each agent's own
# GP keeps the generating hyperparameters (the synthetic code is not public). Privacy as the paper
# accounted it: the moments accountant at delta = 1/N^1.1 (its Sec. 5 and Fig. 2), labelled as the paper's.
SYNTHETIC = dict(dataset="synthetic", agents=200, iterations=40, features=50, pt_schedule="sqrt", n_init=10,
                 S=11.0, weight_schedule="synthetic", accountant="ma", delta=None, delta_rule="paper",
                 own_sampler="authors")

# DP-FTS-DE paper, Sec. 5.2 and App. B.2: landmine detection, 29 fields, the authors' fixed
# data split; each agent's own GP is re-fitted every 5 observations and sampled through
# 100 fresh random features (landmine_dp_fts_de.py:14 and :88).
LANDMINE = dict(dataset="landmine", agents=None, iterations=60, features=100, lengthscale=0.01, noise_var=1e-6,
                P=4, S=22.0, pt_schedule="linear", n_init=10, weight_schedule="real", accountant="ma", delta=None,
                delta_rule="paper", own_sampler="authors", own_features=100, refit_every=5, split="authors")

# The "FTS" of the paper's landmine figures is the authors' DP-FTS-DE code with one sub-region
# and no privacy (landmine_dp_fts_de.py:44-48, "use the parameters below if you want to run FTS"):
# in our terms fts-de with P = 1, not the original FTS algorithm.
FTS_REFERENCE = dict(algorithm="fts-de", P=1)
# The non-private reference levels of the papers' figures, by the name the figures give them.
REFERENCES = {"ts": dict(algorithm="ts"), "fts": FTS_REFERENCE, "fts-de": dict(algorithm="fts-de")}


def reference_name(reference: dict) -> str | None:
    """The figure name ("ts", "fts", "fts-de") of a reference configuration, or None."""
    for name, spec in REFERENCES.items():
        if all(reference.get(k) == v for k, v in spec.items()) and (name != "fts-de" or reference.get("P") != 1):
            return name
    return None

# FTS paper, Sec. 5.1: one target agent and N = 50 others at distance d_n on a 1-D grid of 1000
# points, one initial point, P_N uniform, 1 - p_t = 1/sqrt(t) with p_1 = p_2 (engine.fbo.target).
# The figures' horizon and the M of the lines other than M = 100 are not in the text we have.
FTS_SYNTHETIC = dict(dataset="synthetic", algorithm="fts", fts_variant="target", agents=50, iterations=50,
                     features=100, pt_schedule="sqrt", n_init=1, dissimilarity=0.02, own_sampler="authors")
# FTS paper, Sec. 5.2, and the authors' landmine scripts: targets are the first 6 fields, the other 28
# fields finished TS tasks of t_n = 50 iterations (run_landmine_federated_bo.py:37-58), 3 initial
# inputs (:93), 50 iterations (:12), 1 - p_t = 1/t^2 with p_1 = p_2 (:39-40), the shared features'
# lengthscale 0.01 and noise 1e-6 (generate_agent_info.py:9-11), M_target = 200 own features (:21).
FTS_LANDMINE = dict(dataset="landmine", algorithm="fts", fts_variant="target", agents=None, iterations=50,
                    features=100, lengthscale=0.01, noise_var=1e-6, n_init=3, targets=6, other_observations=50,
                    pt_schedule="square", own_sampler="authors", own_features=200, refit_every=5, split="authors")

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
                  references=[dict(algorithm="ts"), dict(FTS_REFERENCE), dict(algorithm="fts-de")]),
    "fts1a": dict(label="FTS paper Fig. 1a: M when the other agents' t_n is small (d_n = 0.02, t_n = 40)",
                  base=dict(FTS_SYNTHETIC, other_observations=40),
                  compare=[dict(algorithm="ts")] + [dict(features=m) for m in (10, 50, 100)]),
    "fts1b": dict(label="FTS paper Fig. 1b: M when the other agents' t_n is large (d_n = 0.02, t_n = 100)",
                  base=dict(FTS_SYNTHETIC, other_observations=100),
                  compare=[dict(algorithm="ts")] + [dict(features=m) for m in (10, 50, 100)]),
    "fts1c": dict(label="FTS paper Fig. 1c: heterogeneous other agents (d_n = 1.2)",
                  base=dict(FTS_SYNTHETIC, dissimilarity=1.2, other_observations=100),
                  compare=[dict(algorithm="ts"), dict(algorithm="fts")]),
    "fts2a": dict(label="FTS paper Fig. 2a: landmine, best AUC after 50 iterations against message length",
                  base=dict(FTS_LANDMINE),
                  compare=[dict(algorithm="ts")] + [dict(algorithm=a, features=m) for a in ("fts", "rgpe", "taf")
                                                    for m in (50, 100, 150, 200)]),
    # Fig. 2b and App. B.1 (Figs. 4-7, 12a). A comparison varies one of q, z, S, P, M over its algorithms, so a
    # figure whose lines differ otherwise (Fig. 5's ablations, Fig. 7b's faster 1 - p_t, Fig. 12a's weights)
    # loads one preset per line against TS. Values the paper does not print (the S of Fig. 2b, the P of Fig. 6,
    # Fig. 7b's faster 1 - p_t) are ours, as in engine.reproduce.dp_fts_de_appendix.
    "fig2b": dict(label="Paper Fig. 2b: impact of the clipping threshold S",
                  base=dict(SYNTHETIC, algorithm="dp-fts-de", P=2, q=0.25, z=1.0),
                  compare=[dict(S=5.0), dict(S=11.0), dict(S=30.0)]),
    "fig4": dict(label="Paper Fig. 4: DP-FTS (S = 8) against DP-FTS-DE (S = 11), each at both S",
                 base=dict(SYNTHETIC, algorithm="dp-fts-de", P=2, q=0.25, z=1.0),
                 compare=[dict(algorithm="dp-fts", S=8.0), dict(algorithm="dp-fts-de", S=11.0)]),
    "fig5-equal": dict(label="Paper Fig. 5 (orange): FTS-DE with equal weights",
                       base=dict(SYNTHETIC, algorithm="fts-de", P=2, weights="equal"), compare=[dict()]),
    "fig5-global": dict(label="Paper Fig. 5 (purple): FTS-DE, initial points from the whole domain",
                        base=dict(SYNTHETIC, algorithm="fts-de", P=2, local_exploration=False), compare=[dict()]),
    "fig6": dict(label="Paper Fig. 6: the trade-off in the number of sub-regions P",
                 base=dict(SYNTHETIC, algorithm="dp-fts-de", q=0.25, z=1.0, S=11.0),
                 compare=[dict(P=1), dict(P=2), dict(P=3), dict(P=5)]),
    "fig7a": dict(label="Paper Fig. 7a: heterogeneous agents (alpha = 0.7, 50 agents)",
                  base=dict(SYNTHETIC, agents=50, P=2, alpha=0.7, algorithm="fts-de"),
                  compare=[dict(algorithm="ts"), dict(algorithm="fts-de")]),
    "fig7b": dict(label="Paper Fig. 7b: independent agents (alpha = 1, 50 agents, 1 - p_t = 1/sqrt(t))",
                  base=dict(SYNTHETIC, agents=50, P=2, alpha=1.0, algorithm="fts-de"),
                  compare=[dict(algorithm="ts"), dict(algorithm="fts-de")]),
    "fig7b-fast": dict(label="Paper Fig. 7b (orange): alpha = 1 with a faster 1 - p_t = 1/t",
                       base=dict(SYNTHETIC, agents=50, P=2, alpha=1.0, algorithm="fts-de", pt_schedule="linear"),
                       compare=[dict(algorithm="ts"), dict(algorithm="fts-de")]),
    "fig12a": dict(label="Paper Fig. 12a (green): DP-FTS-DE with non-adaptive weights",
                   base=dict(SYNTHETIC, algorithm="dp-fts-de", P=2, q=0.25, z=1.0, weights="fixed"),
                   compare=[dict(algorithm="ts"), dict(algorithm="dp-fts-de")]),
}
