"""Claims about sizes rather than orderings: the percent of vectors a setting clips against the paper's number,
and a privacy loss against the same setting under another accountant (computed, no runs).

:func:`size_verdict` returns ``(holds, verdict, numbers)`` with the keys every verdict's numbers carry
(``better_mean`` ours, ``worse_mean`` the paper's or the reference, ``difference``), so tables and pages read
them as they read an ordering.
"""

from __future__ import annotations

import numpy as np

SIZE_FACTOR = 1.5   # a percentage claim holds when ours is within this factor of the paper's number


def size_verdict(claim, result, config=None) -> tuple[bool, str, dict]:
    """The verdict of a ``clipped`` or ``epsilon`` claim about ``result`` (a SettingResult); ``config``: the
    setting's FboConfig (for ``epsilon``)."""
    if claim.kind == "clipped":
        ours = result.clipped
        ratio = ours / claim.paper if ours is not None and claim.paper else None
        holds = ratio is not None and 1 / SIZE_FACTOR <= ratio <= SIZE_FACTOR
        numbers = {"better": claim.better[0], "worse": "paper", "at": "clipped percent",
                   "runs": int(result.run_curves.shape[0]), "better_mean": ours, "worse_mean": claim.paper,
                   "difference": (ours or 0.0) - claim.paper, "stderr": 0.0, "z": None, "paired": False,
                   "ratio": ratio}
        return holds, "holds" if holds else "differs", numbers
    from engine.fbo.plan import resolve_agents
    from engine.privacy import default_delta, epsilon

    reference_config = config.replace(**dict(claim.reference))
    agents = resolve_agents(reference_config)
    delta = reference_config.delta or default_delta(agents, reference_config.delta_rule)
    reference = epsilon(reference_config.q, reference_config.z, reference_config.iterations, delta,
                        reference_config.accountant, sampling=reference_config.sampling, n_agents=agents)
    ours = float(result.epsilon)
    difference = reference - ours
    z = float(np.copysign(np.inf, difference)) if difference else None
    numbers = {"better": claim.better[0], "worse": claim.worse, "at": "epsilon", "runs": 0, "better_mean": ours,
               "worse_mean": reference, "difference": difference, "stderr": 0.0, "z": z, "paired": False}
    return difference > 0, "holds" if difference > 0 else "reversed", numbers
