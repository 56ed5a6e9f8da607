"""The privacy losses the DP-FTS-DE paper prints, to set beside the accountants' own.

Fig. 2c and 2d of the paper (synthetic functions, App. B.1): N = 200 agents,
delta = 200^-1.1 (:func:`engine.privacy.default_delta`), T = 40 releases,
the moments accountant. Every page, command and help text that quotes these
numbers reads them from :data:`FIG2_EPSILON`.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER_AGENTS = 200
PAPER_STEPS = 40


@dataclass(frozen=True)
class PaperEpsilon:
    """One setting of the paper's Fig. 2 and the epsilon the paper prints for it."""

    q: float          # sampling probability of an agent per release
    z: float          # noise multiplier
    epsilon: float    # as printed in the paper (moments accountant)


FIG2_EPSILON = (
    PaperEpsilon(q=0.15, z=1.0, epsilon=5.93),
    PaperEpsilon(q=0.25, z=1.0, epsilon=9.91),
    PaperEpsilon(q=0.5, z=1.0, epsilon=20.12),
    PaperEpsilon(q=0.25, z=1.2, epsilon=7.39),
    PaperEpsilon(q=0.25, z=1.5, epsilon=5.22),
)


def paper_epsilons() -> str:
    """The printed values in the paper's order: ``"5.93, 9.91, 20.12, 7.39, 5.22"``."""
    return ", ".join(f"{row.epsilon:g}" for row in FIG2_EPSILON)
