"""The engine's public Python API: ``import dpbo`` (installed) or ``from engine import api``.

Everything a researcher calls is named in :data:`__all__`; every other module
of ``engine`` is private by convention (it may change between versions).
The run functions return the same result objects whose ``to_json()`` the
command line (``dpbo <tool>``) prints, so a notebook and a shell agree.

Units: privacy loss ``epsilon`` and ``delta`` are the (epsilon, delta) of
differential privacy (epsilon in nats, delta a probability); ``q`` is a
probability, ``z`` the noise standard deviation in units of the clipping
bound, iterations and releases are counts. Arrays are NumPy arrays.

Every call is priced before it starts, as the command line prices it
(:func:`price`), and refused above its ``limits`` (by default the memory free
on this machine) with one sentence. Bad input raises :class:`ConfigError` with
one sentence and the field it is about, raised from the call you made (no
frames of the engine below it); your objective's own exceptions pass through
as they are. A run stopped early (a callback, Ctrl-C, the time limit) returns
what it finished. docs/api.md is this package's reference (tests/test_api.py
checks it).
"""

from __future__ import annotations

from engine.advise import Advice, AdviceRequest, HypeAdvice
from engine.api.accounting import calibrate_z, default_delta, epsilon, epsilon_curve
from engine.api.advise import advise
from engine.api.common import PrivacyWarning
from engine.api.fbo import iterate_fbo, run_fbo
from engine.api.tools import figure_verdicts, price, reproduce, run_audit, run_hype, run_pogpucb
from engine.audit import AuditResult, OneRunAudit, OneRunResult, ServerAudit, VoteAudit
from engine.executor import Executor
from engine.fbo.config import FboConfig
from engine.fbo.records import BestPoint, FboResult
from engine.fbo.steps import FboRun, FboStep
from engine.hype import HypeConfig, HypeResult
from engine.limits import Cost
from engine.limits.machine import Limits
from engine.pogpucb import PoConfig
from engine.pogpucb.runner import PoResult
from engine.validation import ConfigError

__all__ = [
    # configurations and errors
    "FboConfig", "HypeConfig", "PoConfig", "ServerAudit", "VoteAudit", "OneRunAudit", "ConfigError", "PrivacyWarning",
    # runs and their results
    "run_fbo", "iterate_fbo", "FboRun", "FboStep", "FboResult", "BestPoint", "run_hype", "HypeResult",
    "run_pogpucb", "PoResult", "run_audit", "AuditResult", "OneRunResult",
    # prices, limits and where the work runs
    "price", "Cost", "Limits", "Executor",
    # privacy accounting
    "epsilon", "epsilon_curve", "calibrate_z", "default_delta",
    # the papers' reproductions
    "reproduce", "figure_verdicts",
    # the settings advisor
    "advise", "AdviceRequest", "Advice", "HypeAdvice",
]
