"""Engine calls that are pure and worth keeping across reruns and sessions.

``st.cache_data`` keeps values (copied for each caller): privacy accounting,
calibration, privacy audits, run plans, DP-HYPE's score tables and noise. ``st.cache_resource``
keeps objects every session may share because they are immutable: the
objectives and PO-GP-UCB's tasks. The engine functions themselves stay free
of Streamlit.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from engine.audit import AuditResult, run_audit
from engine.fbo.config import FboConfig
from engine.fbo.plan import RunPlan, lines_cost, make_plan
from engine.hype import HypeConfig
from engine.hype.calibration import NoiseSummary, noise_summary
from engine.hype.scores import score_table
from engine.hype.sweeps import evaluate_grid
from engine.limits import Cost
from engine.objectives import build_objective
from engine.pogpucb import build_task
from engine.privacy import calibrate_q, calibrate_steps, calibrate_z, epsilon, epsilon_curve

# ---------------------------------------------------------------- privacy accounting


@st.cache_data(show_spinner=False, max_entries=2048)
def cached_epsilon(q: float, z: float, steps: int, delta: float, accountant: str,
                   sampling: str = "poisson", n_agents: int | None = None) -> float:
    return epsilon(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_epsilon_curve(q: float, z: float, steps: int, delta: float, accountant: str,
                         sampling: str = "poisson", n_agents: int | None = None) -> np.ndarray:
    return epsilon_curve(q, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_calibrate_z(target: float, q: float, steps: int, delta: float, accountant: str,
                       sampling: str = "poisson", n_agents: int | None = None) -> float:
    return calibrate_z(target, q, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_calibrate_q(target: float, z: float, steps: int, delta: float, accountant: str,
                       sampling: str = "poisson", n_agents: int | None = None) -> float:
    return calibrate_q(target, z, steps, delta, accountant, sampling=sampling, n_agents=n_agents)


@st.cache_data(show_spinner=False, max_entries=512)
def cached_calibrate_steps(target: float, q: float, z: float, delta: float, accountant: str,
                           sampling: str = "poisson", n_agents: int | None = None) -> int:
    return calibrate_steps(target, q, z, delta, accountant, sampling=sampling, n_agents=n_agents)


# ---------------------------------------------------------------- privacy audit


@st.cache_data(show_spinner=False, max_entries=32)
def cached_audit(config, _progress=None, _cancel=None) -> AuditResult:
    """An audit per configuration (ServerAudit or VoteAudit): computed once, then shared.

    Only small audits come here (:func:`ui.audit.panel.audit_line`: at most
    200,000 trials; a result keeps counts on its grids, a few kB). ``_progress`` and ``_cancel``
    are passed to :func:`engine.audit.run_audit` and are not part of the key;
    a cancelled audit raises and is not kept.
    """
    return run_audit(config, progress=_progress, cancel=_cancel)


# ---------------------------------------------------------------- federated BO


@st.cache_data(show_spinner=False, max_entries=512)
def cached_plan(config: FboConfig) -> RunPlan:
    """The run plan of ``config`` before its objective exists (privacy, budget, cost)."""
    return make_plan(config)


# A minute: a real task's table built meanwhile stops being charged (until then the estimate only errs high).
@st.cache_data(show_spinner=False, max_entries=512, ttl=60)
def cached_lines_cost(configs: tuple[FboConfig, ...], objectives_built: bool = False) -> Cost:
    """What running ``configs`` together costs (checked before their plans are made)."""
    return lines_cost(configs, objectives_built=objectives_built)


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_objective(dataset: str, agents: int | None, alpha: float | None, seed: int, domain: str = "table"):
    """Objectives are immutable, so every line and session can share one."""
    return build_objective(dataset, n_agents=agents, alpha=alpha, seed=seed, domain=domain)


# ---------------------------------------------------------------- DP-HYPE


@st.cache_data(show_spinner=False, max_entries=16)
def cached_table(dataset: str, clients: int, alpha, seed: int) -> dict:
    """Client x candidate score tables: trained once (disk cache, DPBO_CACHE_DIR), then kept in memory."""
    return score_table(dataset, clients, alpha, seed)


@st.cache_data(show_spinner=False, max_entries=256)
def cached_noise(config: HypeConfig) -> NoiseSummary:
    return noise_summary(config)


@st.cache_data(show_spinner=False, max_entries=32)
def cached_grid(fields: dict, ks: tuple, epsilons: tuple, sigma_losses: tuple | None = None):
    return evaluate_grid(HypeConfig(**fields), ks, epsilons=epsilons, sigma_losses=sigma_losses,
                         load_table=cached_table)


# ---------------------------------------------------------------- PO-GP-UCB


@st.cache_resource(show_spinner=False, max_entries=8)
def cached_task(dataset: str, task_seed: int = 0):
    return build_task(dataset, task_seed)
