"""The settings the advisor chooses among: every one meets the budget exactly.

A setting is a :class:`Knobs` (q, S, P and the 1 - p_t schedule); its noise multiplier z is not a knob but
follows from q: z is calibrated by the product's accountant (:data:`engine.privacy.DEFAULT_ACCOUNTANT`, RDP) so
that epsilon after the T releases equals the budget (:func:`calibrated_z`). The grid is the product of three
levels of each knob around the papers' own setting of the task (:func:`paper_knobs`): q in {0.1, the paper's,
1}, S in {half, the paper's, double}, P in {1, 2, 4} (at most N / 2) and 1 - p_t in {1/sqrt(t), 1/t, 1/t^2}.
A budget no q can meet (the noise it needs is above the accountant's range) is refused in one sentence that
names what to relax.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from engine.fbo.config import PT_SCHEDULE_LABELS, FboConfig
from engine.fbo.presets import LANDMINE, PRESETS, SYNTHETIC
from engine.privacy import DEFAULT_ACCOUNTANT, calibrate_z, epsilon
from engine.privacy.calibration import calibrate_steps, reachable_z
from engine.validation import ConfigError

SCHEDULES = ("sqrt", "linear", "square")
Q_LEVELS = (0.1, 1.0)                 # with the paper's q between them
P_LEVELS = (1, 2, 4)
S_FACTORS = (0.5, 1.0, 2.0)
SAMPLING = "poisson"
Z_REACH = reachable_z()               # the most noise a calibration can give (8109.1)
# Fields of the papers' presets that describe their accounting, not the task: the advisor's are the product's.
ACCOUNTING_FIELDS = ("accountant", "delta", "delta_rule")


@dataclass(frozen=True, order=True)
class Knobs:
    """One setting of DP-FTS-DE's knobs (z follows from q and the budget)."""

    q: float
    S: float
    P: int
    pt_schedule: str

    def label(self) -> str:
        return (f"q {self.q:g}, S {self.S:g}, P {self.P}, "
                f"{PT_SCHEDULE_LABELS[self.pt_schedule].replace(' = ', ' ')}")

    def fields(self) -> dict:
        return dict(q=float(self.q), S=float(self.S), P=int(self.P), pt_schedule=self.pt_schedule)


def is_real(dataset: str) -> bool:
    """A data set of hyperparameter-tuning tables (the papers' real tasks and their stand-ins)."""
    return dataset not in ("synthetic", "proxy")


def paper_knobs(dataset: str) -> Knobs:
    """The DP-FTS-DE paper's own setting for a task of this kind: its synthetic experiment's (q = 0.25, S = 11,
    P = 2, 1/sqrt(t)) or its real tasks' (q = 0.35, S = 22, P = 4, 1/t)."""
    if is_real(dataset):
        q = PRESETS["fig3a"]["base"]["q"]
        return Knobs(float(q), float(LANDMINE["S"]), int(LANDMINE["P"]), LANDMINE["pt_schedule"])
    base = PRESETS["fig2c"]["base"]
    return Knobs(float(base["q"]), float(SYNTHETIC["S"]), int(base["P"]), SYNTHETIC["pt_schedule"])


def base_fields(dataset: str, n_agents: int, iterations: int, delta: float, *, proxy=None) -> dict:
    """Every FboConfig field of the task's runs but the knobs and the seeds: the paper's preset of its kind
    (synthetic or real), with N, T and the product's accounting at ``delta``; a proxy sets its lengthscale and
    noise (the shared features' settings of a deployment)."""
    preset = LANDMINE if is_real(dataset) else SYNTHETIC
    fields = {name: value for name, value in preset.items() if name not in ACCOUNTING_FIELDS}
    fields.update(dataset="synthetic" if dataset == "proxy" else dataset, agents=int(n_agents),
                  iterations=int(iterations), accountant=DEFAULT_ACCOUNTANT, delta=float(delta))
    if is_real(dataset) and dataset != "landmine":
        fields["split"] = None
    if proxy is not None:
        fields.update(lengthscale=float(proxy.lengthscale), noise_var=float(proxy.noise_var))
    return fields


def levels(dataset: str, n_agents: int) -> dict[str, tuple]:
    """Each knob's levels for N agents: q at least 1/N (one agent a round on average), P at most N / 2."""
    paper = paper_knobs(dataset)
    qs = sorted({q for q in (Q_LEVELS[0], paper.q, Q_LEVELS[1]) if q * n_agents >= 1.0})
    Ps = sorted({P for P in P_LEVELS if 2 * P <= n_agents} | ({paper.P} if 2 * paper.P <= n_agents else set()))
    return {"q": tuple(qs) or (1.0,), "S": tuple(paper.S * f for f in S_FACTORS), "P": tuple(Ps) or (1,),
            "pt_schedule": SCHEDULES}


def grid(dataset: str, n_agents: int) -> list[Knobs]:
    """Every setting of the levels' product (a full factorial, so each level's mean is a fair main effect)."""
    lv = levels(dataset, n_agents)
    return [Knobs(q, S, P, pt) for q, S, P, pt in itertools.product(lv["q"], lv["S"], lv["P"], lv["pt_schedule"])]


def calibrated_z(budget: float, q: float, iterations: int, delta: float, n_agents: int) -> float:
    """The noise multiplier that spends exactly ``budget`` after T releases at sampling rate q (the product's
    accountant; the run plan's calibration, so a deployment with ``calibrate_z`` gets the same z)."""
    return calibrate_z(budget, q, iterations, delta, DEFAULT_ACCOUNTANT, sampling=SAMPLING, n_agents=n_agents)


def spent(q: float, z: float, iterations: int, delta: float, n_agents: int) -> float:
    """Epsilon after T releases of the setting (the product's accountant)."""
    return epsilon(q, z, iterations, delta, DEFAULT_ACCOUNTANT, sampling=SAMPLING, n_agents=n_agents)


def noise_levels(budget: float, qs, iterations: int, delta: float, n_agents: int) -> dict[float, float]:
    """z for every q that can meet the budget; ConfigError naming what to relax when none can."""
    out = {}
    for q in qs:
        try:
            out[q] = calibrated_z(budget, q, iterations, delta, n_agents)
        except ConfigError:
            continue            # this q needs more noise than the accountant's range: leave it out
    if not out:
        raise ConfigError(infeasible(budget, min(qs), iterations, delta, n_agents), "epsilon")
    return out


def infeasible(budget: float, q: float, iterations: int, delta: float, n_agents: int) -> str:
    """The sentence for a budget no setting meets: the smallest epsilon reachable over T releases at the most
    noise the calibration reaches, and the most releases that fit the budget there."""
    floor = spent(q, Z_REACH, iterations, delta, n_agents)
    try:
        most = calibrate_steps(budget, q, Z_REACH, delta, DEFAULT_ACCOUNTANT, sampling=SAMPLING, n_agents=n_agents)
    except ConfigError:
        most = 0
    fewer = (f", or lower T to at most {most} iterations" if most >= 1 else
             f" (no number of iterations fits epsilon = {budget:g})")
    return (f"No setting meets epsilon = {budget:g} at delta = {delta:g} over T = {iterations} iterations: even q = "
            f"{q:g} needs a noise multiplier z above {Z_REACH:,.0f}; relax epsilon to at least {floor * 1.01:.3g}"
            f"{fewer}.")


def run_config(base: dict, knobs: Knobs | None, z: float | None, *, algorithm: str = "dp-fts-de",
               objective_seed: int = 0, seed: int = 0, **changes) -> FboConfig:
    """The FboConfig of one run: the task's fields, the knobs (``None``: a reference's own), z and the seeds."""
    fields = dict(base, algorithm=algorithm, runs=1, objective_seed=int(objective_seed), seed=int(seed))
    if knobs is not None:
        fields.update(knobs.fields())
    if z is not None:
        fields["z"] = float(z)
    fields.update(changes)
    return FboConfig(**fields)


def deployment(base: dict, knobs: Knobs, z: float, budget: float) -> FboConfig:
    """The configuration a team deploys: the knobs, z, and the budget with z calibrated to it (the run plan,
    the command line and the Flower app recompute the same z: :func:`calibrated_z`)."""
    return run_config(base, knobs, z, budget=float(budget), calibrate_z=True)
