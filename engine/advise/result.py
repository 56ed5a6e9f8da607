"""What the advisor answers: the recommended setting, the settings tied with it, the references, the
sensitivity table and the deployment, built from the search's state at any moment (a stopped search too).

Utilities are in the task's metric (``metric_label``; lower is better unless the label says higher); a
standard error is over independent runs. "Tied" means a paired test over the runs two settings share (common
random numbers) cannot tell them apart: two-sided, at :data:`engine.reproduce.claims.ALPHA`, Student's t.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import t as student

from engine.advise import deploy
from engine.advise.evaluate import SELECTION, SENSITIVITY, VALIDATION
from engine.advise.search import Evaluation, Search
from engine.advise.space import Knobs, deployment, spent
from engine.fbo.config import FboConfig
from engine.reproduce.claims import ALPHA, p_two_sided
from engine.validation import ConfigError


def paired(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float, int]:
    """(mean of a - b, its standard error, two-sided p, runs) over the runs both have (p = 1 below two runs)."""
    n = min(len(a), len(b))
    if n == 0:
        return math.nan, math.nan, 1.0, 0
    diff = np.asarray(a[:n], float) - np.asarray(b[:n], float)
    mean = float(diff.mean())
    if n < 2:
        return mean, math.nan, 1.0, n
    se = float(diff.std(ddof=1) / math.sqrt(n))
    z = mean / se if se > 0 else (math.copysign(math.inf, mean) if mean else None)
    return mean, se, p_two_sided(z, n), n


def summary(values: np.ndarray) -> tuple[float, float]:
    """(mean, standard error) of independent runs (NaN s.e. below two)."""
    values = np.asarray(values, float)
    if not len(values):
        return math.nan, math.nan
    se = float(values.std(ddof=1) / math.sqrt(len(values))) if len(values) > 1 else math.nan
    return float(values.mean()), se


@dataclass
class Row:
    """One setting in a table: its knobs (None for a reference), z, utility and its comparison with the pick."""

    name: str
    knobs: Knobs | None
    z: float | None
    utility: float
    stderr: float
    runs: int
    difference: float | None = None      # utility - the pick's, over the runs both have
    difference_stderr: float | None = None
    p: float | None = None

    @property
    def interval(self) -> tuple[float, float]:
        """The utility's 95 % interval: Student's t with runs - 1 degrees of freedom times the standard error."""
        if self.runs < 2 or not math.isfinite(self.stderr):
            return math.nan, math.nan
        half = float(student.ppf(0.975, self.runs - 1)) * self.stderr
        return self.utility - half, self.utility + half

    def to_json(self) -> dict:
        out = {"setting": self.name, "utility": self.utility, "stderr": self.stderr, "runs": self.runs,
               "interval": list(self.interval)}
        if self.knobs is not None:
            out.update(self.knobs.fields(), z=self.z)
        if self.difference is not None:
            out.update(difference=self.difference, difference_stderr=self.difference_stderr, p=self.p)
        return out


@dataclass
class Advice:
    """The advisor's answer so far (``complete`` once every round ran; ``stopped`` says why it ended early)."""

    request: object
    task: str
    metric_label: str
    n_agents: int
    iterations: int
    epsilon: float
    delta: float
    stage: str
    recommended: Row | None = None
    epsilon_spent: float | None = None
    predicted_from: str = ""             # "validation" (fresh seeds) or "selection" (the search's own runs)
    tied: list[Row] = field(default_factory=list)
    references: dict[str, Row] = field(default_factory=dict)
    sensitivity: list[dict] = field(default_factory=list)
    sensitivity_note: str = ""
    curves: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    deployment: FboConfig | None = None
    search: dict = field(default_factory=dict)
    stopped: str | None = None
    scale: float = 1.0                   # -1: the metric is higher-is-better (losses are its negative)
    dim: int = 1                         # the task's dimension (the Flower app's)

    @property
    def complete(self) -> bool:
        return self.stage == "done" and self.stopped is None

    # ---------------------------------------------------------------- one click to deploy
    @property
    def command_line(self) -> str | None:
        """``python -m engine fbo ...`` that runs the recommendation (None before there is one)."""
        from engine.cli.fbo import command_line

        return None if self.deployment is None else command_line(self.deployment)

    def config_text(self) -> str:
        """The recommendation's configuration file (JSON; ``python -m engine fbo --config FILE`` runs it)."""
        return deploy.config_text(self._deployment())

    def export_flower(self, out: str, insecure: bool = False) -> list[str]:
        """Write the recommendation as a Flower app into folder ``out`` (secured unless ``insecure``)."""
        return deploy.export_app("fbo", deploy.flower_config(self._deployment()), out, insecure=insecure,
                                 dim=self.dim)

    def flower_zip(self) -> bytes:
        """The recommendation's Flower app as a zip archive."""
        return deploy.app_zip("fbo", deploy.flower_config(self._deployment()), dim=self.dim)

    def _deployment(self) -> FboConfig:
        if self.deployment is None:
            raise ConfigError("The search stopped before it had a recommendation to deploy: run it longer.",
                              "effort")
        return self.deployment

    def summary(self) -> list[str]:
        """What the references say, in sentences: what the budget costs and whether the federation pays."""
        out = []
        ts, clear = self.references.get("ts"), self.references.get("fts-de")
        better = "lower" if self.scale > 0 else "higher"
        if ts is not None:
            gap = f"{abs(ts.difference):.3g} ± {ts.difference_stderr:.2g}"
            pick_worse = (ts.difference < 0) == (self.scale > 0)
            if ts.p >= ALPHA:
                out.append(f"At this budget the pick cannot be told apart from every agent alone (TS): the pick "
                           f"minus TS is {-ts.difference:+.3g} ± {ts.difference_stderr:.2g} in {self.metric_label}.")
            elif pick_worse:
                out.append(f"At epsilon = {self.epsilon:g} the private federation does worse than every agent "
                           f"alone (TS) by {gap}: raise epsilon or lower T, or let each agent run TS.")
            else:
                out.append(f"The federation pays at this budget: the pick's {self.metric_label} is {gap} {better} "
                           "than every agent alone (TS).")
        if clear is not None:
            if clear.p >= ALPHA:
                out.append("Privacy costs nothing measurable here: the pick cannot be told apart from FTS-DE "
                           "without privacy.")
            else:
                out.append(f"Privacy costs {abs(clear.difference):.3g} ± {clear.difference_stderr:.2g} in "
                           f"{self.metric_label} against FTS-DE without it.")
        return out

    def to_json(self) -> dict:
        rec = self.recommended
        return {"algorithm": "dp-fts-de", "task": self.task, "metric": self.metric_label, "agents": self.n_agents,
                "iterations": self.iterations, "epsilon": self.epsilon, "delta": self.delta,
                "accountant": "rdp", "stage": self.stage, "complete": self.complete, "stopped": self.stopped,
                "recommended": None if rec is None else dict(rec.to_json(), epsilon=self.epsilon_spent,
                                                             predicted_from=self.predicted_from),
                "tied": [row.to_json() for row in self.tied],
                "references": {name: row.to_json() for name, row in self.references.items()},
                "summary": self.summary(),
                "sensitivity": self.sensitivity, "sensitivity_note": self.sensitivity_note,
                "search": self.search,
                "deploy": None if self.deployment is None else deploy_json(self.deployment)}


def deploy_json(config: FboConfig) -> dict:
    """The deployment as the command line's JSON shows it: the configuration ``fbo --config`` reads and the
    command line that runs it."""
    from engine.cli.fbo import command_line

    return {"config": config.to_dict(), "command_line": command_line(config)}


def _row(evaluation: Evaluation, stream: int, scale: float, against: np.ndarray | None = None) -> Row:
    losses = evaluation.losses(stream)
    mean, se = summary(losses)
    row = Row(evaluation.key, evaluation.knobs, evaluation.z, scale * mean, se, len(losses))
    if against is not None:
        d, d_se, p, _ = paired(losses, against)
        row.difference, row.difference_stderr, row.p = scale * d, d_se, p
    return row


def advice_of(search: Search, *, task: str, metric_label: str, scale: float = 1.0,
              stopped: str | None = None) -> Advice:
    """The :class:`Advice` of ``search`` as it stands."""
    request = search.request
    out = Advice(request=request, task=task, metric_label=metric_label, n_agents=search.N, iterations=search.T,
                 epsilon=float(request.epsilon), delta=search.delta, stage=search.stage, stopped=stopped,
                 scale=scale, dim=int(getattr(search, "dim", 1)))
    out.search = search_json(search)
    leader = leading(search)
    if leader is None:
        return out
    best = search.evaluations[leader]
    validated = best.count(VALIDATION) >= 2
    stream = VALIDATION if validated else SELECTION
    out.recommended = _row(best, stream, scale)
    out.predicted_from = "validation" if validated else "selection"
    out.epsilon_spent = spent(best.knobs.q, best.z, search.T, search.delta, search.N)
    out.deployment = deployment(search.task.base, best.knobs, best.z, request.epsilon)
    chosen = best.losses(SELECTION)
    for key in search.finalists or search.narrowed:
        if key == leader:
            continue
        row = _row(search.evaluations[key], SELECTION, scale, against=chosen)
        if row.p is not None and row.p >= ALPHA:
            out.tied.append(row)
    out.tied.sort(key=lambda r: scale * r.utility)
    if validated:
        for name in ("fts-de", "ts"):
            if search.evaluations.get(name) is not None and search.evaluations[name].count(VALIDATION):
                out.references[name] = _row(search.evaluations[name], VALIDATION, scale,
                                            against=best.losses(VALIDATION))
        for name in (leader, "fts-de", "ts"):
            matrix = search.evaluations[name].curve_matrix(VALIDATION) if name in search.evaluations else None
            if matrix is not None and len(matrix):
                se = matrix.std(axis=0, ddof=1) / math.sqrt(len(matrix)) if len(matrix) > 1 else matrix[0] * np.nan
                out.curves["recommended" if name == leader else name] = (scale * matrix.mean(axis=0), se)
    out.sensitivity = sensitivity_rows(search, scale)
    if not search.rows:
        out.sensitivity_note = ("No sensitivity table: it was not asked for." if not request.sensitivity else
                                "No sensitivity table: this task's data (or your own function) fixes its smoothness "
                                "and how different the agents are; describe a proxy to see how the advice moves.")
    return out


def leading(search: Search) -> str | None:
    """The setting the search would recommend now: the pick, else the best of the deepest round so far."""
    if search.pick is not None:
        return search.pick
    for keys in (search.finalists, search.narrowed):
        if keys:
            n = min(search.evaluations[k].count(SELECTION) for k in keys)
            if n:
                return min(keys, key=lambda k: float(search.evaluations[k].losses(SELECTION, n).mean()))
    done = [e for e in search.evaluations.values() if e.knobs is not None and e.count(SELECTION)]
    if not done:
        return None
    n = min(e.count(SELECTION) for e in done)
    return min(done, key=lambda e: float(e.losses(SELECTION, n).mean())).key


def sensitivity_rows(search: Search, scale: float) -> list[dict]:
    """One row per changed proxy: the best finalist there, and what keeping the pick costs there (paired)."""
    rows = []
    for label, evaluations in search.sensitivity.items():
        done = {k: e for k, e in evaluations.items() if e.count(SENSITIVITY) >= 2}
        if search.pick not in done:
            continue
        pick = done[search.pick].losses(SENSITIVITY)
        settings = {k: e for k, e in done.items() if e.knobs is not None}
        best_key = min(settings, key=lambda k: float(settings[k].losses(SENSITIVITY, len(pick)).mean()))
        loss, loss_se, p, n = paired(pick, settings[best_key].losses(SENSITIVITY))
        row = {"change": label, "best": settings[best_key].knobs.fields(), "best_label": best_key,
               "best_utility": scale * summary(settings[best_key].losses(SENSITIVITY))[0],
               "pick_utility": scale * summary(pick)[0], "pick_stderr": summary(pick)[1],
               "cost_of_keeping_pick": scale * loss, "cost_stderr": loss_se, "runs": n,
               "changes": bool(best_key != search.pick and p < ALPHA)}
        if "ts" in done:
            d, d_se, p_ts, _ = paired(pick, done["ts"].losses(SENSITIVITY))
            row.update(ts_utility=scale * summary(done["ts"].losses(SENSITIVITY))[0], pick_minus_ts=scale * d,
                       pick_minus_ts_stderr=d_se, federation_helps=bool(d < 0 and p_ts < ALPHA))
        rows.append(row)
    return rows


def search_json(search: Search) -> dict:
    """How the search went: its method, its rounds, its runs done and planned."""
    done = sum(len(runs) for e in search.evaluations.values() for runs in e.curves.values())
    done += sum(len(runs) for row in search.sensitivity.values() for e in row.values() for runs in e.curves.values())
    return {"method": "successive halving on common random numbers, screened by fitted main effects",
            "candidates": len(search.settings), "narrowed": len(search.narrowed), "finalists": len(search.finalists),
            "runs_done": done, "runs_planned": search.plan.total_runs, "runs_per_round": search.plan.runs(),
            "tasks_done": search.tasks_done, "tasks_planned": search.plan.tasks(), "effort": search.effort,
            "seed": search.seed, "noise": {f"{q:g}": z for q, z in search.z.items()}}
