"""The rest of the DP-FTS-DE paper: Fig. 2b and App. B (Figs. 4-12), as parts of ``reproduce dp-fts-de``.

- ``synthetic-appendix``: N = 200 synthetic agents, T = 40 (App. B.1.1), DP-FTS-DE with P = 2, q = 0.25, z = 1,
  S = 11 unless a figure changes it: Fig. 2b (S), Fig. 4 (DP-FTS with S = 8 against DP-FTS-DE with S = 11),
  Fig. 5 (DE without its weights or without local exploration), Fig. 6 (P), Fig. 12a (non-adaptive weights).
- ``heterogeneous``: Fig. 7, 50 synthetic agents mixing their own GP draw with a shared one (alpha = 0.7, 1).
- ``landmine-renyi``: Fig. 11, the landmine protocol with a fixed sample of round(N q) agents and the RDP
  accountant, at the nine (q, z) of Fig. 3a.
- ``har-standin`` and ``emnist-standin``: the activity recognition (Figs. 3b, 3e, 8, 9, 10, 12b) and EMNIST
  (Figs. 3c, 3f, 9, 10) experiments on STAND-IN data (engine.objectives.har_standin, emnist_standin), with the
  settings of App. B.2.1 (T = 60, M = 100, lengthscale 0.01, noise variance 1e-6, P = 4, S = 22).

Where the paper does not give a value (the S of Fig. 2b, the P of Fig. 6, the faster 1 - p_t of Fig. 7b, the
(q, z) of Fig. 8, which panel of Figs. 9 and 10 is which task) the choice is ours and the setting's label or the
claim's source says so; docs/paper-comparisons.md lists them.
"""

from __future__ import annotations

from engine.fbo.presets import FTS_REFERENCE, LANDMINE, SYNTHETIC
from engine.reproduce.report import Claim, Part, Setting

# Sec. 5.2 and App. B.2: the nine (q, z) of Fig. 3a-c and Fig. 11.
REAL_DP = [(0.35, z) for z in (1.0, 1.6, 2.0, 3.0, 4.0)] + [(q, 1.0) for q in (0.1, 0.15, 0.2, 0.25)]
DP_MAIN = dict(algorithm="dp-fts-de", P=2, q=0.25, z=1.0, S=11.0)


def _dp(q: float, z: float) -> str:
    return f"dp-fts-de q={q:g} z={z:g}"


# ------------------------------------------------------------------ synthetic, App. B.1 and Fig. 2b

SYNTHETIC_APPENDIX_SETTINGS = (
    Setting("ts", "TS", dict(algorithm="ts")),
    Setting("dp S=11", "DP-FTS-DE (P = 2, q = 0.25, z = 1, S = 11)", dict(DP_MAIN)),
    Setting("dp S=5", "DP-FTS-DE, S = 5 (Fig. 2b; S values ours)", dict(DP_MAIN, S=5.0)),
    Setting("dp S=30", "DP-FTS-DE, S = 30 (Fig. 2b; S values ours)", dict(DP_MAIN, S=30.0)),
    Setting("dp-fts S=8", "DP-FTS (no DE, q = 0.25, z = 1, S = 8)", dict(algorithm="dp-fts", q=0.25, z=1.0, S=8.0)),
    Setting("fts-de", "FTS-DE (P = 2)", dict(algorithm="fts-de", P=2)),
    Setting("fts-de equal", "FTS-DE with equal weights (Fig. 5)", dict(algorithm="fts-de", P=2, weights="equal")),
    Setting("fts-de global init", "FTS-DE, initial points from the whole domain (Fig. 5)",
            dict(algorithm="fts-de", P=2, local_exploration=False)),
    Setting("dp P=1", "DP-FTS-DE, P = 1 (Fig. 6)", dict(DP_MAIN, P=1)),
    Setting("dp P=3", "DP-FTS-DE, P = 3 (Fig. 6)", dict(DP_MAIN, P=3)),
    Setting("dp P=5", "DP-FTS-DE, P = 5 (Fig. 6)", dict(DP_MAIN, P=5)),
    Setting("dp fixed", "DP-FTS-DE, non-adaptive weights (Fig. 12a)", dict(DP_MAIN, weights="fixed")),
)

SYNTHETIC_APPENDIX_CLAIMS = (
    Claim("An overly small S hinders: S = 11 beats S = 5 (mean over iterations 1-40)",
          "Sec. 5.1, Fig. 2b: 'an overly small S may hinder the performance'", ("dp S=11",), "dp S=5"),
    Claim("An excessively large S is detrimental: S = 11 beats S = 30 (mean over iterations 1-40)",
          "Sec. 5.1, Fig. 2b: 'an excessively large S may also be detrimental'", ("dp S=11",), "dp S=30"),
    Claim("S = 11 clips about 0.8 % of the vectors", "Sec. 5.1, Fig. 2b: 'only a small percentage (0.8%)'",
          ("dp S=11",), "paper", kind="clipped", paper=0.8),
    Claim("DP-FTS-DE (S = 11) converges better than DP-FTS (S = 8) at the same privacy loss",
          "App. B.1.2, Fig. 4: 'DP-FTS-DE still yields a significantly better utility than DP-FTS'",
          ("dp S=11",), "dp-fts S=8"),
    Claim("DP-FTS with S = 8 clips about 0.31 % of the vectors", "App. B.1.2, Fig. 4 caption",
          ("dp-fts S=8",), "paper", kind="clipped", paper=0.31),
    Claim("DP-FTS-DE with S = 11 clips about 0.80 % of the vectors", "App. B.1.2, Fig. 4 caption",
          ("dp S=11",), "paper", kind="clipped", paper=0.80),
    Claim("FTS-DE beats FTS-DE with equal weights (mean over iterations 1-40)",
          "App. B.1.2, Fig. 5: 'significantly worse than our FTS-DE'", ("fts-de",), "fts-de equal"),
    Claim("FTS-DE beats FTS-DE without local exploration (mean over iterations 1-40)",
          "App. B.1.2, Fig. 5", ("fts-de",), "fts-de global init"),
    Claim("A smaller P may deteriorate: P = 2 beats P = 1 (mean over iterations 1-40)",
          "App. B.1.2, Fig. 6: 'a smaller value of P ... may deteriorate the performance'", ("dp S=11",), "dp P=1"),
    Claim("A larger P may also be worse: P = 2 beats P = 5 (mean over iterations 1-40)",
          "App. B.1.2, Fig. 6: 'a larger value of P may also result in a worse performance'",
          ("dp S=11",), "dp P=5"),
    Claim("Adaptive weights beat non-adaptive weights as t becomes large (iteration 40)",
          "App. B.2.5, Fig. 12a", ("dp S=11",), "dp fixed", 40),
    Claim("Non-adaptive weights still outperform standard TS (mean over iterations 1-40)",
          "App. B.2.5, Fig. 12a: 'still able to consistently outperform standard TS'", ("dp fixed",), "ts"),
)

# ------------------------------------------------------------------ heterogeneous agents, Fig. 7

_HET = dict(agents=50, P=2)
HETEROGENEOUS_SETTINGS = (
    Setting("ts a=0.7", "TS (alpha = 0.7)", dict(_HET, algorithm="ts", alpha=0.7)),
    Setting("fts-de a=0.7", "FTS-DE (alpha = 0.7)", dict(_HET, algorithm="fts-de", alpha=0.7)),
    Setting("ts a=1", "TS (alpha = 1)", dict(_HET, algorithm="ts", alpha=1.0)),
    Setting("fts-de a=1", "FTS-DE (alpha = 1, 1 - p_t = 1/sqrt(t))", dict(_HET, algorithm="fts-de", alpha=1.0)),
    Setting("fts-de a=1 fast", "FTS-DE (alpha = 1, 1 - p_t = 1/t; the faster schedule is ours)",
            dict(_HET, algorithm="fts-de", alpha=1.0, pt_schedule="linear")),
)
HETEROGENEOUS_CLAIMS = (
    Claim("With alpha = 0.7, FTS-DE still outperforms TS (mean over iterations 1-40)",
          "App. B.1.2, Fig. 7a", ("fts-de a=0.7",), "ts a=0.7"),
    Claim("With alpha = 1, FTS-DE (1 - p_t = 1/sqrt(t)) performs worse than TS (mean over iterations 1-40)",
          "App. B.1.2, Fig. 7b", ("ts a=1",), "fts-de a=1"),
    Claim("With alpha = 1, a faster-decaying 1 - p_t improves FTS-DE (mean over iterations 1-40)",
          "App. B.1.2, Fig. 7b: 'we can improve the performance of FTS-DE'", ("fts-de a=1 fast",), "fts-de a=1"),
    Claim("With alpha = 1 and the faster-decaying 1 - p_t, FTS-DE is comparable with TS (mean over iterations 1-40)",
          "App. B.1.2, Fig. 7b: 'comparable with standard TS'", ("fts-de a=1 fast",), "ts a=1", similar=True),
)

# ------------------------------------------------------------------ landmine with Renyi DP, Fig. 11

RENYI_BASE = dict(LANDMINE, accountant="rdp", sampling="fixed")
RENYI_SETTINGS = (Setting("ts", "TS", dict(algorithm="ts")),) + tuple(
    Setting(_dp(q, z), f"DP-FTS-DE, RDP, round(N q) agents (q = {q:g}, z = {z:g})",
            dict(algorithm="dp-fts-de", q=q, z=z)) for q, z in REAL_DP)
RENYI_CLAIMS = tuple(
    Claim(f"RDP with a fixed sample (q = {q:g}, z = {z:g}) gives a smaller privacy loss than the moments "
          "accountant of Fig. 3a", "App. B.2.4, Fig. 11: 'slightly better privacy losses (compared with Fig. 3a)'",
          (_dp(q, z),), "moments accountant, Poisson sampling", kind="epsilon",
          reference=(("accountant", "ma"), ("sampling", "poisson")),
          family="Renyi DP gives slightly better privacy losses than Fig. 3a", figure="Fig. 11")
    for q, z in REAL_DP)

# ------------------------------------------------------------------ the stand-in real-world tasks

def real_base(dataset: str) -> dict:
    """App. B.2.1 on another task: the landmine preset's settings (T = 60, M = 100, lengthscale 0.01, P = 4,
    S = 22, ...) on ``dataset``."""
    return dict(LANDMINE, dataset=dataset, split=None)


def _real_settings(extra: bool) -> tuple:
    rows = [Setting("ts", "TS", dict(algorithm="ts")),
            Setting("fts", "FTS (fts-de, P = 1)", dict(FTS_REFERENCE)),
            Setting("fts-de", "FTS-DE (P = 4)", dict(algorithm="fts-de"))]
    rows += [Setting(_dp(q, z), f"DP-FTS-DE (q = {q:g}, z = {z:g})", dict(algorithm="dp-fts-de", q=q, z=z))
             for q, z in REAL_DP]
    if extra:   # Fig. 8 and 12b (activity recognition only)
        rows += [Setting("dp-fts S=11", "DP-FTS (no DE, q = 0.35, z = 1, S = 11)",
                         dict(algorithm="dp-fts", q=0.35, z=1.0, S=11.0)),
                 Setting("dp fixed", "DP-FTS-DE, non-adaptive weights (q = 0.35, z = 1)",
                         dict(algorithm="dp-fts-de", q=0.35, z=1.0, weights="fixed"))]
    for algorithm, privacy in (("fts-de", {}), ("dp-fts-de", dict(q=0.35, z=1.0))):
        name = "FTS-DE" if algorithm == "fts-de" else "DP-FTS-DE (q = 0.35, z = 1)"
        for key, label, change in (("w1", "weights 1 (softmax, a = 9)", dict(weight_a=9.0)),
                                   ("w2", "weights 2 (a_t against 1, a = 1000)",
                                    dict(weights="proportional", weight_a=1000.0)),
                                   ("w3", "weights 3 (a_t^2 against 1, a = 40)",
                                    dict(weights="proportional-squared", weight_a=40.0))):
            rows.append(Setting(f"{algorithm} {key}", f"{name}, {label}", dict(algorithm=algorithm, **privacy,
                                                                                **change)))
        for P in (2, 3, 6):
            rows.append(Setting(f"{algorithm} P={P}", f"{name}, P = {P}", dict(algorithm=algorithm, **privacy, P=P)))
    return tuple(rows)


def _real_claims(task: str, panel: str, curve_panel: str, robustness_panel: str) -> tuple:
    main = _dp(0.35, 1.0)
    fig, curves = f"Fig. 3{panel}", f"Fig. 3{curve_panel}"
    claims = [Claim(f"DP-FTS-DE (q = {q:g}, z = {z:g}) outperforms standard TS after 60 iterations ({task})",
                    f"Sec. 5.2, {fig}: 'significantly outperforms standard TS in all settings'", (_dp(q, z),), "ts", 60,
                    family=f"DP-FTS-DE beats TS after 60 iterations in every setting ({task})") for q, z in REAL_DP]
    claims += [
        Claim(f"FTS-DE converges faster than TS ({task}, mean over iterations 1-60)", f"Sec. 5.2, {curves}",
              ("fts-de",), "ts"),
        Claim(f"DP-FTS-DE (q = 0.35, z = 1) converges faster than TS ({task}, mean over iterations 1-60)",
              f"Sec. 5.2, {curves}", (main,), "ts"),
        Claim(f"Larger z converges slower: z = 1 beats z = 2 at q = 0.35 ({task}, mean over iterations 1-60)",
              f"Sec. 5.2, {curves}", (main,), _dp(0.35, 2.0)),
        Claim(f"Smaller q converges slower: q = 0.35 beats q = 0.25 at z = 1 ({task}, mean over iterations 1-60)",
              f"Sec. 5.2, {curves}", (main,), _dp(0.25, 1.0)),
        Claim(f"Less privacy loss, worse utility: z = 1 beats z = 4 at q = 0.35 after 60 iterations ({task})",
              f"Sec. 5.2, {fig}", (main,), _dp(0.35, 4.0), 60),
        Claim(f"Less privacy loss, worse utility: q = 0.35 beats q = 0.1 at z = 1 after 60 iterations ({task})",
              f"Sec. 5.2, {fig}", (main,), _dp(0.1, 1.0), 60),
        Claim(f"FTS-DE outperforms FTS without DE after 60 iterations ({task})",
              f"Sec. 5.2, {fig}: 'in all experiments'", ("fts-de",), "fts", 60),
        Claim(f"Some settings of DP-FTS-DE outperform FTS after 60 iterations ({task})", f"Sec. 5.2, {fig}",
              tuple(_dp(q, z) for q, z in REAL_DP), "fts", 60),
    ]
    for algorithm in ("fts-de", "dp-fts-de"):
        for key in ("w1", "w2", "w3", "P=2", "P=3", "P=6"):
            figure = f"Fig. 9{robustness_panel}" if key.startswith("w") else f"Fig. 10{robustness_panel}"
            what = "weights" if key.startswith("w") else "number of sub-regions P"
            claims.append(Claim(f"{algorithm.upper()} with {key} still outperforms TS after 60 iterations ({task})",
                                f"App. B.2.3, {figure} (panel for {task} is our reading): robust to the {what}",
                                (f"{algorithm} {key}",), "ts", 60,
                                family=f"Robust to the {what}: every variant beats TS ({task})"))
    return tuple(claims)


HAR_SETTINGS = _real_settings(extra=True)
HAR_CLAIMS = _real_claims("activity stand-in", "b", "e", "a") + (
    Claim("DP-FTS-DE (S = 22) beats DP-FTS (S = 11) at the same privacy loss after 60 iterations",
          "App. B.2.2, Fig. 8 (q = 0.35, z = 1 is our choice)", (_dp(0.35, 1.0),), "dp-fts S=11", 60),
    Claim("DP-FTS-DE with S = 22 clips about 1.02 % of the vectors", "App. B.2.2, Fig. 8 caption",
          (_dp(0.35, 1.0),), "paper", kind="clipped", paper=1.02),
    Claim("DP-FTS with S = 11 clips about 1.09 % of the vectors", "App. B.2.2, Fig. 8 caption",
          ("dp-fts S=11",), "paper", kind="clipped", paper=1.09),
    Claim("Adaptive weights beat non-adaptive weights as t becomes large (iteration 60)",
          "App. B.2.5, Fig. 12b", (_dp(0.35, 1.0),), "dp fixed", 60),
    Claim("Non-adaptive weights still outperform standard TS (mean over iterations 1-60)",
          "App. B.2.5, Fig. 12b", ("dp fixed",), "ts"),
)
EMNIST_SETTINGS = _real_settings(extra=False)
EMNIST_CLAIMS = _real_claims("EMNIST stand-in", "c", "f", "b")

CHECKPOINTS_REAL = (0, 10, 30, 60)
APPENDIX_PARTS = {
    "synthetic-appendix": Part("synthetic-appendix",
                               "Synthetic GP functions: Fig. 2b and App. B.1 (Figs. 4, 5, 6, 12a)", "simple regret",
                               SYNTHETIC, SYNTHETIC_APPENDIX_SETTINGS, SYNTHETIC_APPENDIX_CLAIMS,
                               (0, 10, 30, 40), 5, "generated", draws="run"),
    "heterogeneous": Part("heterogeneous", "Heterogeneous synthetic agents (App. B.1.2, Fig. 7)", "simple regret",
                          SYNTHETIC, HETEROGENEOUS_SETTINGS, HETEROGENEOUS_CLAIMS, (0, 10, 30, 40), 5, "generated",
                          draws="run"),
    "landmine-renyi": Part("landmine-renyi",
                           "Landmine with Renyi DP and a fixed sample of round(N q) agents (App. B.2.4, Fig. 11)",
                           "1 - AUC", RENYI_BASE, RENYI_SETTINGS, RENYI_CLAIMS, CHECKPOINTS_REAL, 100, "identity"),
    "har-standin": Part("har-standin", "Activity recognition, STAND-IN data (Figs. 3b, 3e, 8, 9a, 10a, 12b)",
                        "validation error", real_base("har-standin"), HAR_SETTINGS, HAR_CLAIMS, CHECKPOINTS_REAL, 10,
                        "stand-in", draws="seed-set"),
    "emnist-standin": Part("emnist-standin", "EMNIST, STAND-IN data (Figs. 3c, 3f, 9b, 10b)", "validation error",
                           real_base("emnist-standin"), EMNIST_SETTINGS, EMNIST_CLAIMS, CHECKPOINTS_REAL, 10,
                           "stand-in", draws="seed-set"),
}
