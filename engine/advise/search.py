"""The advisor's search: successive halving over the settings that meet the budget, on common random numbers.

docs/advisor.md says why this method. The rounds (``e`` is the request's effort):

1. **Screen**: every setting of the grid (:func:`engine.advise.space.grid`, a full factorial of three levels of
   q, S, P and 1 - p_t) runs ``e`` times on the same seeds. Each setting's loss is predicted by the fitted main
   effects (the grand mean plus, for each knob, the mean of the settings at its level minus the grand mean:
   the least-squares additive model of a balanced factorial), which pools 27 runs into each level's estimate
   where a setting's own mean has ``e``.
2. **Narrow**: the 9 settings with the lowest predicted loss run up to ``4 e`` runs each; they are ranked by
   their own mean over those common seeds.
3. **Final**: the best 3 run up to ``12 e``; the lowest mean is the pick.
   With a proxy or the synthetic task the same job runs the **sensitivity** rows: the finalists and TS on a
   smoother, a rougher and a more heterogeneous proxy, ``3 e`` runs each.
4. **Validation**: the pick runs ``24 e`` times on seeds the search never saw (its predicted utility), FTS-DE
   (no privacy, the pick's P and 1 - p_t) and TS (no collaboration) ``12 e`` times on the first of them (paired).

Every request's seeds derive from its ``seed`` and what it asks (:func:`engine.advise.evaluate.request_base`).

Every round is one job of the executor (:func:`engine.executor.current`: local worker processes or a Dask
cluster); the generator yields the advice so far after every finished task, so a page draws it as it grows and
a stopped search keeps what it found.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from engine.advise import evaluate
from engine.advise.evaluate import SELECTION, SENSITIVITY, VALIDATION, Task, chunks, run_seeds
from engine.advise.space import Knobs, grid, noise_levels
from engine.executor import Executor, current

NARROW, FINAL = 9, 3               # settings kept after the screen and after narrowing
NARROW_RUNS, FINAL_RUNS, SENSITIVITY_RUNS = 4, 12, 3      # runs per setting, times the effort
PICK_RUNS, VALIDATION_RUNS = 24, 12        # fresh runs of the pick, and of each reference (paired on the first)
STAGES = ("calibration", "screen", "narrow", "final", "validation", "done")


@dataclass
class Evaluation:
    """One setting's runs so far: its loss curves by stream and seed index."""

    key: str
    fields: dict                      # the FboConfig fields of its runs (knobs, z or a reference's algorithm)
    knobs: Knobs | None = None
    z: float | None = None
    curves: dict = field(default_factory=dict)      # {stream: {index: curve (T + 1,)}}

    def add(self, stream: int, indices, curves: np.ndarray) -> None:
        runs = self.curves.setdefault(stream, {})
        for index, curve in zip(indices, curves):
            runs[int(index)] = np.asarray(curve, dtype=float)

    def count(self, stream: int) -> int:
        """Runs done on ``stream`` from index 0 without a gap (the ones a paired comparison can use)."""
        runs = self.curves.get(stream, {})
        n = 0
        while n in runs:
            n += 1
        return n

    def losses(self, stream: int, n: int | None = None) -> np.ndarray:
        """The final losses of the first ``n`` (default: all contiguous) runs of ``stream``."""
        n = self.count(stream) if n is None else n
        return np.array([self.curves[stream][i][-1] for i in range(n)], dtype=float)

    def curve_matrix(self, stream: int) -> np.ndarray:
        n = self.count(stream)
        return np.stack([self.curves[stream][i] for i in range(n)]) if n else np.empty((0, 0))


@dataclass
class Plan:
    """How many runs each round makes (known before the first: the price and the progress bar read it)."""

    candidates: int
    effort: int
    rows: int                         # sensitivity rows (0: none)

    @property
    def narrow(self) -> int:
        return min(NARROW, self.candidates)

    @property
    def final(self) -> int:
        return min(FINAL, self.narrow)

    def runs(self) -> dict[str, int]:
        e = self.effort
        return {"screen": self.candidates * e, "narrow": self.narrow * (NARROW_RUNS - 1) * e,
                "final": self.final * (FINAL_RUNS - NARROW_RUNS) * e,
                "validation": (PICK_RUNS + 2 * VALIDATION_RUNS) * e,
                "sensitivity": self.rows * (self.final + 1) * SENSITIVITY_RUNS * e}

    @property
    def total_runs(self) -> int:
        return sum(self.runs().values())

    def tasks(self) -> int:
        """Executor tasks over the whole search (each at most :data:`evaluate.CHUNK` runs of one setting)."""
        e, c = self.effort, evaluate.CHUNK
        per = [(self.candidates, e), (self.narrow, (NARROW_RUNS - 1) * e),
               (self.final, (FINAL_RUNS - NARROW_RUNS) * e), (1, PICK_RUNS * e), (2, VALIDATION_RUNS * e),
               (self.rows * (self.final + 1), SENSITIVITY_RUNS * e)]
        return sum(settings * math.ceil(runs / c) for settings, runs in per if runs)


def main_effects(evaluations: list[Evaluation], n: int) -> dict[str, float]:
    """Each setting's predicted loss from the fitted main effects of a full factorial (key -> loss), each
    setting's own loss the mean of its first ``n`` selection runs."""
    own = {e.key: float(e.losses(SELECTION, n).mean()) for e in evaluations}
    grand = float(np.mean(list(own.values())))
    effect = {}
    for name in ("q", "S", "P", "pt_schedule"):
        groups: dict = {}
        for e in evaluations:
            groups.setdefault(getattr(e.knobs, name), []).append(own[e.key])
        effect[name] = {level: float(np.mean(values)) - grand for level, values in groups.items()}
    return {e.key: grand + sum(effect[name][getattr(e.knobs, name)] for name in effect) for e in evaluations}


class Search:
    """The advisor's state for one request: the settings, their runs, the round it is in.

    ``task`` says what the runs optimise (:class:`engine.advise.evaluate.Task`); ``rows`` are the sensitivity
    rows as (label, Task) pairs (empty: none). :meth:`steps` computes the rounds.
    """

    def __init__(self, request, task: Task, rows: list[tuple[str, Task]], dataset: str):
        self.request, self.task, self.rows = request, task, rows
        self.seed = evaluate.request_base(request.seed, task, request.epsilon)
        self.effort = int(request.effort)
        base = task.base
        self.N, self.T, self.delta = int(base["agents"]), int(base["iterations"]), float(base["delta"])
        self.settings = grid(dataset, self.N)
        self.plan = Plan(len(self.settings), self.effort, len(rows))
        self.z: dict[float, float] = {}
        self.evaluations: dict[str, Evaluation] = {}
        self.stage = STAGES[0]
        self.tasks_done = 0
        self.predicted: dict[str, float] = {}
        self.narrowed: list[str] = []
        self.finalists: list[str] = []
        self.pick: str | None = None
        self.sensitivity: dict[str, dict[str, Evaluation]] = {}
        self.metric_label = "simple regret"

    # ---------------------------------------------------------------- the rounds
    def steps(self, executor: Executor | None = None) -> Iterator["Search"]:
        """Compute every round, yielding this search after the calibration and after every finished task."""
        executor = executor or current()
        qs = sorted({k.q for k in self.settings})
        self.z = noise_levels(self.request.epsilon, qs, self.T, self.delta, self.N)
        self.settings = [k for k in self.settings if k.q in self.z]
        self.plan = Plan(len(self.settings), self.effort, len(self.rows))
        for knobs in self.settings:
            key = knobs.label()
            self.evaluations[key] = Evaluation(key, dict(knobs.fields(), z=self.z[knobs.q]), knobs, self.z[knobs.q])
        self.stage = "screen"
        yield self
        e = self.effort
        yield from self._round(executor, [(key, e) for key in self.evaluations], SELECTION)
        self.predicted = main_effects(list(self.evaluations.values()), e)
        self.narrowed = sorted(self.predicted, key=self.predicted.get)[:self.plan.narrow]
        self.stage = "narrow"
        yield from self._round(executor, [(key, NARROW_RUNS * e) for key in self.narrowed], SELECTION)
        self.finalists = self._ranked(self.narrowed, NARROW_RUNS * e)[:self.plan.final]
        self.stage = "final"
        rows = self._sensitivity_jobs()          # the finalists are known: their sensitivity runs join this job
        yield from self._round(executor, [(key, FINAL_RUNS * e) for key in self.finalists], SELECTION, extra=rows)
        self.pick = self._ranked(self.finalists, FINAL_RUNS * e)[0]
        self.stage = "validation"
        pick = self.evaluations[self.pick]
        self.evaluations["fts-de"] = Evaluation("fts-de", dict(algorithm="fts-de", P=pick.knobs.P,
                                                               pt_schedule=pick.knobs.pt_schedule))
        yield from self._round(executor, [(self.pick, PICK_RUNS * e), ("fts-de", VALIDATION_RUNS * e),
                                          ("ts", VALIDATION_RUNS * e)], VALIDATION)
        self.stage = "done"
        yield self

    def _ranked(self, keys: list[str], n: int) -> list[str]:
        return sorted(keys, key=lambda k: float(self.evaluations[k].losses(SELECTION, n).mean()))

    def _round(self, executor: Executor, targets: list[tuple[str, int]], stream: int, extra=()) -> Iterator["Search"]:
        """Bring every setting of ``targets`` (key, runs) to that many runs of ``stream`` (one job of the executor,
        with the ``extra`` jobs of the sensitivity rows)."""
        jobs = []
        for key, upto in targets:
            evaluation = self.evaluations[key]
            have = evaluation.count(stream)
            for part in chunks(range(have, upto)):
                jobs.append(((stream, key, part), (self.task, evaluation.fields, self.seed, stream, part)))
        yield from self._run(executor, jobs + list(extra))

    def _sensitivity_jobs(self) -> list:
        """The references' evaluations (FTS-DE with the leader's P and 1 - p_t is fixed at validation), and the
        finalists' and TS's runs on every sensitivity row."""
        self.evaluations.setdefault("ts", Evaluation("ts", dict(algorithm="ts")))
        jobs = []
        for label, task in self.rows:
            row = self.sensitivity.setdefault(label, {})
            for key in self.finalists + ["ts"]:
                source = self.evaluations[key]
                row[key] = Evaluation(key, source.fields, source.knobs, source.z)
                for part in chunks(range(SENSITIVITY_RUNS * self.effort)):
                    jobs.append(((SENSITIVITY, label, key, part), (task, row[key].fields, self.seed, SENSITIVITY,
                                                                    part)))
        return jobs

    def _target(self, key) -> Evaluation:
        if key[0] == SENSITIVITY:
            return self.sensitivity[key[1]][key[2]]
        return self.evaluations[key[1]]

    def _run(self, executor: Executor, jobs) -> Iterator["Search"]:
        if not jobs:
            return
        for key, (curves, metric) in executor.results(run_seeds, jobs, label="advise"):
            self.metric_label = metric
            self._target(key).add(key[0], key[-1], curves)
            self.tasks_done += 1
            yield self
