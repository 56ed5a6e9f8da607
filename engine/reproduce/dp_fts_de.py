"""Reproducing the DP-FTS-DE paper: its landmine protocol (Sec. 5.2, Fig. 3a and 3d) and its
synthetic Fig. 2a, 2c and 2d, with every claim judged over runs.

Landmine: 29 agents, T = 60, the authors' split and settings (``engine.fbo.presets.LANDMINE``),
100 runs per setting in the paper. Lines: TS, the paper's "FTS" (the DP-FTS-DE code with P = 1
and no privacy, ``fts-de`` with P = 1), FTS-DE (P = 4) and DP-FTS-DE at the nine (q, z) of
Fig. 3a. Synthetic: N = 200, T = 40, 5 runs per line in the paper; TS, FTS (P = 1), FTS-DE with
P = 2 and 3 (Fig. 2a), DP-FTS-DE with q = 0.15, 0.25, 0.5 at z = 1 (Fig. 2c) and z = 1, 1.2, 1.5 at
q = 0.25 (Fig. 2d).

The claims are the paper's sentences about these figures, in our words, with where they are.
The other figures (Fig. 2b, App. B: Figs. 4-12) are the parts of
:mod:`engine.reproduce.dp_fts_de_appendix`; ``PART_SPECS`` holds them all.
"""

from __future__ import annotations

from engine.fbo.presets import FTS_REFERENCE, LANDMINE, SYNTHETIC
from engine.reproduce.dp_fts_de_appendix import APPENDIX_PARTS
from engine.reproduce.report import Claim, Part, PartResult, Setting, run_parts
from engine.validation import check_choice, check_int

CORE_PARTS = ("landmine", "synthetic")     # the default of the command line
LANDMINE_RUNS = 100        # Fig. 3 caption: "averaged over 100 (a, d) ... random initializations"
SYNTHETIC_RUNS = 5         # Fig. 2 caption: "each further averaged over 5 runs"
# The runs per setting of the stored synthetic parts (data/reproduction/provenance.json: `--synthetic-runs 100`): at
# the paper's 5 none of their claims is decisive. `reproduce all` runs them at this count unless told otherwise.
STORED_SYNTHETIC_RUNS = 100

# Fig. 3a: z = 1, 1.6, 2, 3, 4 at q = 0.35 and q = 0.1, 0.15, 0.2, 0.25, 0.35 at z = 1 (Sec. 5.2).
FIG3A_DP = [(0.35, z) for z in (1.0, 1.6, 2.0, 3.0, 4.0)] + [(q, 1.0) for q in (0.1, 0.15, 0.2, 0.25)]


def _dp_key(q: float, z: float) -> str:
    return f"dp-fts-de q={q:g} z={z:g}"


LANDMINE_SETTINGS = [
    Setting("ts", "TS", dict(algorithm="ts")),
    Setting("fts", "FTS (fts-de, P = 1)", dict(FTS_REFERENCE)),
    Setting("fts-de", "FTS-DE (P = 4)", dict(algorithm="fts-de")),
] + [Setting(_dp_key(q, z), f"DP-FTS-DE (q = {q:g}, z = {z:g})", dict(algorithm="dp-fts-de", q=q, z=z))
     for q, z in FIG3A_DP]

_MAIN = _dp_key(0.35, 1.0)
LANDMINE_CLAIMS = [
    Claim(f"DP-FTS-DE (q = {q:g}, z = {z:g}) outperforms standard TS after 60 iterations",
          "Sec. 5.2, Fig. 3a: 'significantly outperforms standard TS in all settings'", (_dp_key(q, z),), "ts", 60,
          family="DP-FTS-DE beats TS after 60 iterations in every setting")
    for q, z in FIG3A_DP
] + [
    Claim("FTS-DE converges faster than TS (mean 1 - AUC over iterations 1-60)", "Sec. 5.2, Fig. 3d",
          ("fts-de",), "ts"),
    Claim("DP-FTS-DE (q = 0.35, z = 1) converges faster than TS (mean over iterations 1-60)", "Sec. 5.2, Fig. 3d",
          (_MAIN,), "ts"),
    Claim("Larger z converges slower: z = 1 beats z = 2 at q = 0.35 (mean over iterations 1-60)",
          "Sec. 5.2, Fig. 3d: 'larger z or smaller q in general leads to a slower convergence'",
          (_MAIN,), _dp_key(0.35, 2.0)),
    Claim("Smaller q converges slower: q = 0.35 beats q = 0.25 at z = 1 (mean over iterations 1-60)",
          "Sec. 5.2, Fig. 3d", (_MAIN,), _dp_key(0.25, 1.0)),
    Claim("Less privacy loss, worse utility: z = 1 beats z = 4 at q = 0.35 after 60 iterations",
          "Sec. 5.2, Fig. 3a: 'a smaller privacy loss generally results in a worse utility'",
          (_MAIN,), _dp_key(0.35, 4.0), 60),
    Claim("Less privacy loss, worse utility: q = 0.35 beats q = 0.1 at z = 1 after 60 iterations",
          "Sec. 5.2, Fig. 3a", (_MAIN,), _dp_key(0.1, 1.0), 60),
    Claim("FTS-DE outperforms FTS without DE after 60 iterations",
          "Sec. 5.2, Fig. 3a: 'FTS-DE (and some settings of DP-FTS-DE) outperforms FTS without DE'",
          ("fts-de",), "fts", 60),
    Claim("Some settings of DP-FTS-DE outperform FTS after 60 iterations", "Sec. 5.2, Fig. 3a",
          tuple(_dp_key(q, z) for q, z in FIG3A_DP), "fts", 60),
]

SYNTHETIC_SETTINGS = [
    Setting("ts", "TS", dict(algorithm="ts")),
    Setting("fts", "FTS (fts-de, P = 1)", dict(FTS_REFERENCE)),
    Setting("fts-de P=2", "FTS-DE (P = 2)", dict(algorithm="fts-de", P=2)),
    Setting("fts-de P=3", "FTS-DE (P = 3)", dict(algorithm="fts-de", P=3)),
] + [Setting(f"dp-fts-de q={q:g}", f"DP-FTS-DE (q = {q:g}, z = 1, P = 2)",
             dict(algorithm="dp-fts-de", P=2, q=q, z=1.0)) for q in (0.15, 0.25, 0.5)
] + [Setting(f"dp-fts-de q=0.25 z={z:g}", f"DP-FTS-DE (q = 0.25, z = {z:g}, P = 2)",
             dict(algorithm="dp-fts-de", P=2, q=0.25, z=z)) for z in (1.2, 1.5)]

SYNTHETIC_CLAIMS = [
    Claim("FTS converges faster than standard TS (mean simple regret over iterations 1-40)",
          "Sec. 5.1, Fig. 2a", ("fts",), "ts"),
    Claim("FTS-DE (P = 2) further improves the performance of FTS considerably", "Sec. 5.1, Fig. 2a",
          ("fts-de P=2",), "fts"),
    Claim("A larger number of sub-regions brings more benefit: P = 3 beats P = 2", "Sec. 5.1, Fig. 2a",
          ("fts-de P=3",), "fts-de P=2"),
    Claim("Larger q, better utility: q = 0.25 beats q = 0.15", "Sec. 5.1, Fig. 2c",
          ("dp-fts-de q=0.25",), "dp-fts-de q=0.15"),
    Claim("Larger q, better utility: q = 0.5 beats q = 0.25", "Sec. 5.1, Fig. 2c",
          ("dp-fts-de q=0.5",), "dp-fts-de q=0.25"),
    Claim("Smaller z, better utility: z = 1 beats z = 1.2 (q = 0.25)", "Sec. 5.1, Fig. 2d",
          ("dp-fts-de q=0.25",), "dp-fts-de q=0.25 z=1.2"),
    Claim("Smaller z, better utility: z = 1.2 beats z = 1.5 (q = 0.25)", "Sec. 5.1, Fig. 2d",
          ("dp-fts-de q=0.25 z=1.2",), "dp-fts-de q=0.25 z=1.5"),
]

_CORE_SPECS = {
    "landmine": Part("landmine", "Landmine detection (Sec. 5.2, Fig. 3a and 3d)", "1 - AUC", LANDMINE,
                     tuple(LANDMINE_SETTINGS), tuple(LANDMINE_CLAIMS), (0, 10, 30, 60), LANDMINE_RUNS, "paper"),
    "synthetic": Part("synthetic", "Synthetic GP functions (Sec. 5.1, Fig. 2a, 2c and 2d)", "simple regret",
                      SYNTHETIC, tuple(SYNTHETIC_SETTINGS), tuple(SYNTHETIC_CLAIMS), (0, 10, 30, 40), SYNTHETIC_RUNS,
                      "generated", draws="run"),
}


PART_SPECS = {**_CORE_SPECS, **APPENDIX_PARTS}
PARTS = tuple(PART_SPECS)
SYNTHETIC_PARTS = ("synthetic", "synthetic-appendix", "heterogeneous")


def parse_parts(text: str) -> tuple[str, ...]:
    """The parts a comma-separated list names ("all": every part), each checked."""
    names = tuple(p.strip() for p in str(text).split(",") if p.strip())
    if names == ("all",):
        return PARTS
    for name in names:
        check_choice("reproduction part", name, PARTS)
    return names


def part_runs(name: str, runs: int | None = None, synthetic_runs: int | None = None) -> int:
    """Runs per setting of part ``name``: ``synthetic_runs`` for the synthetic parts when given, else ``runs``
    when given, else the part's own count (the paper's; 5 for the synthetic parts as the paper ran)."""
    if name in SYNTHETIC_PARTS and synthetic_runs is not None:
        return synthetic_runs
    if runs is not None:
        return runs
    return SYNTHETIC_RUNS if name in SYNTHETIC_PARTS else PART_SPECS[name].paper_runs


def reproduce(parts=CORE_PARTS, *, runs: int | None = None, synthetic_runs: int | None = None,
              seed: int = 0, jobs: int | None = None, progress=None) -> dict[str, PartResult]:
    """Run the paper's protocol and judge its claims.

    Parameters
    ----------
    parts : iterable of part names (:data:`PARTS`)
    runs, synthetic_runs : int or None
        Runs per setting (at least 2: standard errors are over runs); ``runs`` for every part,
        ``synthetic_runs`` for the synthetic ones; None: the part's own count (:func:`part_runs`).
    seed : int
        Seeds every block of runs; all settings share them (paired comparisons).
    jobs : int, optional
        Worker processes (default: all cores).
    progress : callable, optional
        ``progress(part, done, total)`` in blocks of runs (the part's distinct blocks; a block two
        parts share counts for both).

    Returns
    -------
    ``{part name: PartResult}``; ``PartResult.to_json()`` is plain data (curves with
    standard errors over runs per setting, and the claim verdicts).
    """
    parts = tuple(parts)
    for part in parts:
        check_choice("reproduction part", part, PARTS)
    if runs is not None:
        check_int("runs", runs, 2, 10_000)
    if synthetic_runs is not None:
        check_int("synthetic runs", synthetic_runs, 2, 10_000)
    # One set of workers for every part; a block of runs two parts share (e.g. TS on landmine for Fig. 3a and
    # Fig. 11) runs once.
    requests = [(PART_SPECS[part], part_runs(part, runs, synthetic_runs)) for part in dict.fromkeys(parts)]
    return run_parts(requests, seed=seed, jobs=jobs, progress=progress)
