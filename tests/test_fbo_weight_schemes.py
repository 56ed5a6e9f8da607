"""Fig. 9's "weights 2" and "weights 3" (DP-FTS-DE paper, App. B.2.3) against weight vectors worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fbo import FboConfig, run_fbo
from engine.fbo.weights import proportional_level, subregion_weights

ASSIGNMENT = np.array([0, 1, 0, 1, 2])     # five agents, three sub-regions


def test_weights_2_own_explorers_weigh_a_the_others_one():
    phi = subregion_weights(ASSIGNMENT, 3, 1, a=1000.0, schedule="real", mode="proportional")
    assert np.allclose(phi[0], [1000 / 2003, 1 / 2003, 1000 / 2003, 1 / 2003, 1 / 2003])
    assert np.allclose(phi[1], [1 / 2003, 1000 / 2003, 1 / 2003, 1000 / 2003, 1 / 2003])
    assert np.allclose(phi[2], [1 / 1004, 1 / 1004, 1 / 1004, 1 / 1004, 1000 / 1004])


def test_weights_3_own_explorers_weigh_a_squared():
    phi = subregion_weights(ASSIGNMENT, 3, 1, a=40.0, schedule="real", mode="proportional-squared")
    assert np.allclose(phi[2], [1 / 1604, 1 / 1604, 1 / 1604, 1 / 1604, 1600 / 1604])
    assert np.allclose(phi[0], [1600 / 3203, 1 / 3203, 1600 / 3203, 1 / 3203, 1 / 3203])


def test_a_decays_linearly_to_one_on_the_real_schedule():
    # Held at a for the first 10 iterations, then np.linspace(a, 1, 30) over t = 11..40, then 1.
    levels = [proportional_level(t, 1000.0, "real") for t in (1, 10, 11, 12, 40, 41)]
    assert levels == pytest.approx([1000, 1000, 1000, 1000 - 999 / 29, 1, 1])
    a_12 = 40 - 39 / 29
    phi = subregion_weights(ASSIGNMENT, 3, 12, a=40.0, schedule="real", mode="proportional-squared")
    assert phi[2, 4] == pytest.approx(a_12 ** 2 / (a_12 ** 2 + 4))
    assert np.allclose(subregion_weights(ASSIGNMENT, 3, 40, a=1000.0, schedule="real", mode="proportional"), 0.2)


def test_a_run_uses_the_new_schemes():
    # Early on the new schemes favour the own explorers as the softmax does, unlike equal weights.
    base = dict(algorithm="fts-de", agents=8, iterations=12, runs=2, P=2, weight_schedule="synthetic")
    equal, *curves = [run_fbo(FboConfig(**base, weights=mode, weight_a=a)).curve for mode, a in
                      (("equal", 15.0), ("proportional", 1000.0), ("proportional-squared", 40.0))]
    for curve in curves:
        assert np.all(np.isfinite(curve)) and not np.allclose(curve, equal)
