"""Empirical privacy audit: attack the engine's own mechanism code and bound the epsilon it really has.

``engine.privacy`` says what epsilon a mechanism claims; this package plays a
distinguishing game on neighbouring inputs against the same functions the
simulations call (:func:`engine.fbo.server.aggregate_batch`, DP-HYPE's noisy
vote sum) and turns the attack's true- and false-positive rates into a
one-sided lower confidence bound on the epsilon an attacker can prove.
Neither package re-implements the mechanism.

    from engine.audit import ServerAudit, run_audit
    result = run_audit(ServerAudit(q=0.25, z=1.0, trials=1_000_000))
    result.epsilon_claimed, result.epsilon_lower, result.violation

A whole T-release run audited once, with canaries (Steinke, Nasr and Jagielski 2023):

    from engine.audit import OneRunAudit, run_one_run
    run_one_run(OneRunAudit(q=0.25, z=1.0, steps=40, canaries=10_000)).epsilon_lower
"""

from engine.audit.config import MECHANISM_LABELS, MECHANISMS, OneRunAudit, ServerAudit, VoteAudit
from engine.audit.game import AuditCancelled
from engine.audit.one_run_server import OneRunResult, run_one_run
from engine.audit.result import AuditResult
from engine.audit.run import run_audit
from engine.audit.stats import CONFIDENCE, max_tpr
from engine.limits.audit import AuditCost, audit_cost, estimate, one_run_cost

__all__ = ["AuditCancelled", "AuditCost", "AuditResult", "CONFIDENCE", "MECHANISMS", "MECHANISM_LABELS",
           "OneRunAudit", "OneRunResult", "ServerAudit", "VoteAudit", "audit_cost", "estimate", "max_tpr",
           "one_run_cost", "run_audit", "run_one_run"]
