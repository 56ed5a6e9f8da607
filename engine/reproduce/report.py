"""Running a paper's settings over many seeded runs and judging its claims with standard errors over runs.

A *setting* is a set of :class:`engine.fbo.FboConfig` overrides. Every setting
runs the same seeds, so run r of one setting and run r of another share the
objective, the shared random features and (when their sub-regions agree) the
initial points: comparisons are paired by run. A *claim* says that one setting
beats another (lower metric) at an iteration or over the whole curve, or that
two perform alike (``similar``, an equivalence test against a margin stated
with the claim); the mean paired difference over runs and its standard error
are its numbers, and :func:`engine.reproduce.claims.decide` (the one decision
rule: false discovery rate over the paper's claims, a replication seed set,
power) turns them into ``holds``, ``reversed`` (``differs``), ``not
significant`` or ``inconsistent``.

Everything is plain data (``to_json``), so the CLI prints it and a page can draw it.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

from engine.fbo.records import standard_error
from engine.reproduce.claims import check_kind, decide, deciding
from engine.reproduce.margins import margin_numbers
from engine.reproduce.claims import Z_THRESHOLD  # noqa: F401  (the single comparison's level, for callers)
from engine.reproduce.runs import (RUNS_PER_BLOCK, block_key, block_plan, block_progress, outcome, run_blocks,
                                   setting_config)
from engine.reproduce.runs import block_seeds  # noqa: F401  (re-exported for the command line's pricing)
from engine.reproduce.sizes import size_verdict
from engine.validation import check_int

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Setting:
    """One line of a paper figure: ``overrides`` of the part's base configuration."""

    key: str
    label: str
    overrides: dict


@dataclass
class SettingResult:
    """A setting run over R seeded runs: per-run curves (mean over agents), their mean and s.e. over runs."""

    setting: Setting
    run_curves: np.ndarray          # (R, T + 1)
    epsilon: float | None           # privacy loss after T releases (None without DP)
    delta: float | None
    seconds: float                  # engine time, summed over the blocks
    clipped: float | None = None    # percent of the selected vectors clipped, over iterations and runs
    draws: np.ndarray | None = None  # (R,) the objective draw (seed) of every run; None: one objective for all

    @property
    def curve(self) -> np.ndarray:
        return self.run_curves.mean(axis=0)

    @property
    def curve_stderr(self) -> np.ndarray:
        return np.array([standard_error(col) for col in self.run_curves.T])

    def at(self, when) -> np.ndarray:
        """Per-run values at iteration ``when`` (int) or averaged over iterations 1..T (``"curve"``)."""
        if when == "curve":
            return self.run_curves[:, 1:].mean(axis=1)
        return self.run_curves[:, int(when)]

    def to_json(self, checkpoints: Sequence[int]) -> dict:
        return {"key": self.setting.key, "label": self.setting.label, "overrides": dict(self.setting.overrides),
                "runs": int(self.run_curves.shape[0]), "epsilon": self.epsilon, "delta": self.delta,
                **({"objective_draws": int(len(set(self.draws.tolist())))} if self.draws is not None else {}),
                "clipped_percent": self.clipped,
                "curve": self.curve.tolist(), "curve_stderr": self.curve_stderr.tolist(),
                "checkpoints": {str(t): {"mean": float(self.curve[t]), "stderr": float(self.curve_stderr[t])}
                                for t in checkpoints if t < self.run_curves.shape[1]},
                "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class Claim:
    """A claim of the paper: setting ``better`` has a lower metric than ``worse`` ``at`` an iteration.

    ``at`` is an iteration or ``"curve"`` (the mean over iterations 1..T, for
    "converges faster"). With several ``better`` keys the claim is that at least
    one of them beats ``worse`` (``any_of``). ``family`` names the paper's sentence
    when one sentence makes several claims (one per setting), so a summary can
    count them together.
    """

    text: str
    source: str
    better: tuple
    worse: str
    at: object = "curve"
    family: str = ""
    # A claim that two settings perform alike (e.g. "M barely matters"): an equivalence test (TOST) of the
    # paired difference against the margin registered for it from the paper (engine.reproduce.margins, fixed
    # before the runs); "differs" when the difference is beyond the margin; not tested without one.
    similar: bool = False
    # "metric": the ordering above, judged over runs. "clipped": a size, the percent of vectors the
    # setting ``better[0]`` clips against the paper's ``paper`` (``worse`` is "paper"). "epsilon": the
    # privacy loss of ``better[0]`` is below that of the same setting with ``reference`` overrides
    # (computed by the accountant, no runs).
    kind: str = "metric"
    paper: float | None = None
    reference: tuple = ()
    figure: str = ""            # the figure the summary counts it under, when its source names several
    by_construction: bool = False

    @property
    def any_of(self) -> bool:
        return len(self.better) > 1

    @property
    def figures(self) -> tuple[str, ...]:
        """The figures the claim is about, as preset names ("fig3a"), read from its source."""
        return tuple(f"fig{number}{panel}" for number, panel in re.findall(r"Fig\. (\d+)([a-z]?)", self.source))


@dataclass(frozen=True)
class Part:
    """One experiment of a paper: its base configuration, the settings (lines) and the claims about them."""

    name: str
    title: str
    metric_label: str
    base: dict
    settings: tuple
    claims: tuple
    checkpoints: tuple
    paper_runs: int             # runs per setting in the paper
    data_kind: str = "paper"    # engine.reproduce.claims.DATA_KINDS
    draws: str = "fixed"        # engine.reproduce.runs.DRAWS: where each run's objective comes from
    per_draw: int = 1           # runs per objective draw when ``draws`` is "run"

    @property
    def figures(self) -> tuple[str, ...]:
        """The paper's figures the claims are about, in the claims' order ("fig3a", "fig3d")."""
        return tuple(dict.fromkeys(f for claim in self.claims for f in claim.figures))

    def settings_of(self, figure: str) -> tuple[str, ...]:
        """Keys of the settings the claims about ``figure`` compare, in the part's order."""
        keys = {key for claim in self.claims if figure in claim.figures for key in (*claim.better, claim.worse)}
        return tuple(s.key for s in self.settings if s.key in keys)


@dataclass
class Verdict:
    """A claim and what our runs say about it."""

    claim: Claim
    holds: bool
    verdict: str                    # engine.reproduce.claims.VERDICTS, or "differs"
    numbers: dict = field(default_factory=dict)
    data_kind: str = "paper"
    decision: dict = field(default_factory=dict)    # test, discovery, replication, why (claims.decide)

    def to_json(self) -> dict:
        out = {"claim": self.claim.text, "source": self.claim.source}
        if self.claim.figure:
            out["figure"] = self.claim.figure
        out.update({"data_kind": self.data_kind, "by_construction": self.claim.by_construction,
                    "holds": self.holds, "verdict": self.verdict, "numbers": self.numbers, **self.decision})
        return out


def by_draw(diff: np.ndarray, draws) -> tuple[np.ndarray, str]:
    """The per-unit numbers a test counts: ``diff`` per run, or its mean per objective draw when runs share one
    (runs nested in a function are not independent: the test is over functions), and the unit's name."""
    if draws is None:
        return diff, "run"
    draws = np.asarray(draws)[:len(diff)]
    labels, index = np.unique(draws, return_inverse=True)
    if len(labels) == len(diff):
        return diff, "objective draw"
    return np.bincount(index, weights=diff) / np.bincount(index), "objective draw"


def compare(better: SettingResult, worse: SettingResult, at) -> dict:
    """Paired comparison over runs: mean of (worse - better) per run and its standard error, over objective draws
    when the runs share them (``units``: how many numbers the test counts)."""
    a, b = better.at(at), worse.at(at)
    runs = min(len(a), len(b))
    diff, unit = by_draw(b[:runs] - a[:runs], better.draws)
    se = standard_error(diff)
    mean = float(diff.mean())
    if np.isfinite(se) and se > 0:
        z = mean / se
    else:   # identical runs (or a constant difference): the sign decides, nothing is uncertain
        z = None if mean == 0 or not np.isfinite(se) else float(np.copysign(np.inf, mean))
    return {"better": better.setting.key, "worse": worse.setting.key, "at": at, "runs": int(runs),
            "units": int(len(diff)), "unit": unit, "better_mean": float(a.mean()), "worse_mean": float(b.mean()),
            "difference": mean, "stderr": se, "z": z, "paired": True}


def deciding_comparison(numbers: dict) -> dict:
    """The comparison a claim's verdict rests on: the claim's own, or the best of an any-of claim's."""
    return deciding(numbers)


def judge(claims: Sequence[Claim], results: dict[str, SettingResult], base: dict | None = None,
          data_kind: str = "paper") -> list[Verdict]:
    """One :class:`Verdict` per claim whose settings all ran (positive ``difference``: the claimed winner is
    better), decided together by :func:`engine.reproduce.claims.decide` (discovery only: the caller adds a
    replication and decides again over the paper). ``base``: the part's base configuration (for claims about
    epsilon)."""
    check_kind(data_kind)
    out = []
    for claim in claims:
        if claim.kind != "metric":
            result = results.get(claim.better[0])
            if result is not None and (claim.kind == "clipped" or base is not None):
                config = setting_config(base, result.setting, 0, 2) if claim.kind == "epsilon" else None
                out.append(Verdict(claim, *size_verdict(claim, result, config), data_kind=data_kind))
            continue
        if not set(claim.better) | {claim.worse} <= set(results):
            continue
        comparisons = [compare(results[key], results[claim.worse], claim.at) for key in claim.better]
        if claim.any_of:
            numbers = {"comparisons": comparisons}
        else:
            numbers = comparisons[0]
            if claim.similar:
                numbers.update(margin_numbers(claim.text))
        out.append(Verdict(claim, False, "not significant", numbers, data_kind=data_kind))
    redecide(out)
    return out


def redecide(verdicts: Sequence[Verdict]) -> None:
    """Decide ``verdicts`` together (one paper's, or one part's) and write the verdicts back."""
    dicts = [v.to_json() for v in verdicts]
    decide(dicts)
    for verdict, data in zip(verdicts, dicts):
        verdict.verdict, verdict.holds = data["verdict"], data["holds"]
        verdict.decision = {key: data[key] for key in ("test", "discovery", "replication", "why", "reading", "power")
                            if key in data}


# ---------------------------------------------------------------------- running settings

def _setting_results(settings: Sequence[Setting], keys: Mapping[str, list], outcomes: Mapping,
                     draws: Sequence | None = None) -> dict:
    """{setting key: SettingResult} from the outcomes of each setting's blocks (``keys[setting.key]``, in order);
    ``draws``: the objective draw of every run (None: one objective)."""
    results = {}
    for s in settings:
        parts = [outcomes[key] for key in keys[s.key]]
        clips = [p[4] for p in parts if p[4] is not None]
        results[s.key] = SettingResult(s, np.concatenate([p[0] for p in parts]), parts[0][1], parts[0][2],
                                       float(sum(p[3] for p in parts)),
                                       float(np.average(clips, weights=[len(p[0]) for p in parts if p[4] is not None]))
                                       if clips else None, None if draws is None else np.asarray(draws))
    return results


def plan_draws(plan) -> list | None:
    """The objective draw of every run of a :func:`engine.reproduce.runs.block_plan` (None: one objective for every
    run, as on fixed data or one stand-in instance per seed set: the runs are then the test's units)."""
    if len({objective for _, _, objective in plan}) <= 1:
        return None
    return [objective for _, size, objective in plan for _ in range(size)]


def _block_keys(base: dict, settings: Sequence[Setting], runs: int, seed: int, draws: str = "fixed",
                per_draw: int = 1) -> tuple[dict, list, list | None]:
    """({setting key: its blocks' keys}, every block's FboConfig, every run's objective draw) for ``runs`` runs
    of every setting."""
    keys, configs = {}, []
    plan = block_plan(seed, runs, draws, per_draw)
    for s in settings:
        keys[s.key] = []
        for block_seed, size, objective in plan:
            config = setting_config(base, s, block_seed, size, objective)
            keys[s.key].append(block_key(config))
            configs.append(config)
    return keys, configs, plan_draws(plan)


def run_settings(base: dict, settings: Sequence[Setting], *, runs: int, seed: int = 0, jobs: int | None = None,
                 progress: Progress | None = None, cache: dict | None = None, draws: str = "fixed",
                 per_draw: int = 1) -> dict[str, SettingResult]:
    """Every setting over ``runs`` runs (in blocks with shared seeds), ``jobs`` worker processes.

    Settings whose blocks are the same runs (:func:`engine.reproduce.runs.block_key`) share them, and
    blocks already in ``cache`` (outcomes by key, filled as blocks finish) are not run again.
    ``progress(done, total)`` counts the distinct blocks.
    """
    keys, configs, run_draws = _block_keys(base, settings, runs, seed, draws, per_draw)
    cache = {} if cache is None else cache
    report = (lambda name, done, total: progress(done, total)) if progress else None
    done, _ = block_progress({"": {k for ks in keys.values() for k in ks}}, cache, report)
    return _setting_results(settings, keys, run_blocks(configs, jobs=jobs, cache=cache, done=done), run_draws)


@dataclass
class PartResult:
    """One experiment of a reproduction (e.g. the landmine Fig. 3), ready to print or draw."""

    name: str
    title: str
    metric_label: str
    checkpoints: tuple
    results: dict
    verdicts: list
    seconds: float

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "metric": self.metric_label,
                "checkpoints": list(self.checkpoints),
                "runs": int(next(iter(self.results.values())).run_curves.shape[0]) if self.results else 0,
                "settings": [r.to_json(self.checkpoints) for r in self.results.values()],
                "claims": [v.to_json() for v in self.verdicts], "seconds": round(self.seconds, 2)}


def run_part(part: Part, *, runs: int, seed: int = 0, jobs: int | None = None,
             progress: Progress | None = None) -> PartResult:
    """Every setting of ``part`` over ``runs`` runs, and its claims judged."""
    started = time.perf_counter()
    results = run_settings(part.base, part.settings, runs=runs, seed=seed, jobs=jobs, progress=progress,
                           draws=part.draws, per_draw=part.per_draw)
    return PartResult(part.name, part.title, part.metric_label, tuple(part.checkpoints), results,
                      judge(part.claims, results, part.base, part.data_kind), time.perf_counter() - started)


def run_parts(requests: Sequence[tuple[Part, int]], *, seed: int = 0, jobs: int | None = None,
              progress: Callable[[str, int, int], None] | None = None, cache: dict | None = None
              ) -> dict[str, PartResult]:
    """Every ``(part, runs)`` of ``requests`` as :func:`run_part` gives it, all blocks on one set of workers.

    A block two parts share (the same runs, :func:`engine.reproduce.runs.block_key`) runs once and both
    parts use it; so do blocks already in ``cache``. ``progress(part name, done, total)`` counts each part's
    distinct blocks. A part's ``seconds`` is the wall time until its last block finished.
    """
    started = time.perf_counter()
    cache = {} if cache is None else cache
    plans = {part.name: (part, _block_keys(part.base, part.settings, runs, seed, part.draws, part.per_draw))
             for part, runs in requests}
    needs = {name: {k for ks in keys.values() for k in ks} for name, (_, (keys, _, _)) in plans.items()}
    report, left = block_progress(needs, cache, progress)
    finished = {name: time.perf_counter() - started for name, keys in left.items() if not keys}

    def done(key) -> None:
        report(key)
        for name, keys in left.items():
            if not keys and name not in finished:
                finished[name] = time.perf_counter() - started

    outcomes = run_blocks([c for _, (_, configs, _) in plans.values() for c in configs], jobs=jobs, cache=cache,
                          done=done)
    out = {}
    for name, (part, (keys, _, run_draws)) in plans.items():
        results = _setting_results(part.settings, keys, outcomes, run_draws)
        out[name] = PartResult(part.name, part.title, part.metric_label, tuple(part.checkpoints), results,
                               judge(part.claims, results, part.base, part.data_kind), finished.get(name, 0.0))
    return out


# ---------------------------------------------------------------------- a small run, one line per setting

def small_run_configs(part: Part, runs: int, seed: int = 0) -> list:
    """(setting, FboConfig) of every setting for a run of at most ``RUNS_PER_BLOCK`` runs (one block each).

    On a part with fixed data these are the configurations :func:`run_part` runs with the same ``runs`` and
    ``seed``, so a page can step them one iteration at a time (a Simulation per setting) and get the command
    line's numbers. A part that draws its objective per run (generated functions) runs here on one draw, the
    seed set's (a demonstration: its runs then share one function).
    """
    runs = check_int("runs", runs, 2, RUNS_PER_BLOCK, name="runs per setting")
    [(block_seed, size, objective)] = block_plan(seed, runs, "fixed" if part.draws == "fixed" else "seed-set")
    return [(setting, setting_config(part.base, setting, block_seed, size, objective)) for setting in part.settings]


def part_from_results(part: Part, results: Mapping[str, object], seconds: float = 0.0) -> PartResult:
    """A :class:`PartResult` from finished FboResults by setting key (judging the claims whose settings ran)."""
    by_key = {s.key: s for s in part.settings}
    settings = {key: SettingResult(by_key[key], *outcome(result)) for key, result in results.items()}
    return PartResult(part.name, part.title, part.metric_label, tuple(part.checkpoints), settings,
                      judge(part.claims, settings, part.base, part.data_kind), seconds)
