"""The curator of PO-GP-UCB (Algorithm 1): omega, the branch, the release, distance preservation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.pogpucb import build_task
from engine.pogpucb.curator import (
    BRANCH_LIFT,
    BRANCH_PRESERVE,
    centre,
    lift_singular_values,
    max_admissible_r,
    omega,
    release,
    sigma_min,
)
from engine.pogpucb.distortion import all_pair_ratios, lemma1_min_r, lemma1_nu, theorem2_band
from engine.pogpucb.presets import TABLE_PRESETS
from engine.pogpucb.tasks import MAX_NORM, normalise_inputs, unit_grid
from engine.validation import ConfigError


@pytest.fixture(scope="module")
def synthetic_X():
    return build_task("synthetic").X


def test_omega_matches_line_5_by_hand():
    # 16 sqrt(10 log(2e5)) log(1.6e7) / exp(1.1), each factor computed separately.
    by_hand = 16 * math.sqrt(10 * math.log(2 / 1e-5)) * math.log(16 * 10 / 1e-5) / math.exp(1.1)
    assert omega(10, math.exp(1.1), 1e-5) == pytest.approx(by_hand, rel=1e-12)
    assert omega(np.array([10, 20]), 1.0, 1e-5)[1] > omega(10, 1.0, 1e-5)  # grows with r


def test_synthetic_inputs_are_centred_with_max_norm_25(synthetic_X):
    assert synthetic_X.shape == (10_000, 2)
    assert np.abs(synthetic_X.mean(0)).max() < 1e-9
    assert np.linalg.norm(synthetic_X, axis=1).max() == pytest.approx(MAX_NORM)
    # d = 2, and the centred grid has orthogonal columns of equal norm: both singular values are equal.
    s = np.linalg.svd(synthetic_X, compute_uv=False)
    assert s[0] == pytest.approx(s[1], rel=1e-9)


@pytest.mark.parametrize("table", sorted(TABLE_PRESETS))
def test_largest_admissible_r_of_each_paper_table(synthetic_X, table):
    """Paper Sec. 4: the largest r with sigma_min >= omega is 10, 15, 20 for exp(1.1), exp(1.3), exp(1.5)."""
    preset = TABLE_PRESETS[table]
    eps = math.exp(preset["log_epsilon"])
    s = sigma_min(synthetic_X)
    assert max_admissible_r(s, eps, 1e-5, preset["r_values"]) == preset["best_r"]
    for r in preset["r_values"]:
        assert (omega(r, eps, 1e-5) <= s) == (r <= preset["best_r"])


def test_admissible_r_does_not_depend_on_the_grid_extent():
    """sigma_min / max-norm is scale free, so the branch is the same for any grid extent."""
    s_unit = sigma_min(normalise_inputs(unit_grid(100, 1.0)))
    s_wide = sigma_min(normalise_inputs(unit_grid(100, 7.5)))
    assert s_unit == pytest.approx(s_wide, rel=1e-9)


def test_max_admissible_r_search_equals_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(25):
        eps, delta = math.exp(rng.uniform(-1, 3)), 10 ** rng.uniform(-8, -2)
        s = rng.uniform(50, 5000)
        brute = max([r for r in range(1, 3000) if omega(r, eps, delta) <= s], default=0)
        assert max_admissible_r(s, eps, delta) == brute
    assert max_admissible_r(1.0, 1.0, 1e-5) == 0  # omega(1) is far above 1


@pytest.mark.parametrize("log_eps, branch", [(1.1, BRANCH_PRESERVE), (0.0, BRANCH_LIFT)])
def test_release_shape_centring_and_branch(synthetic_X, log_eps, branch):
    rel = release(synthetic_X + 5.0, math.exp(log_eps), 1e-5, 10, np.random.default_rng(0))
    assert rel.branch == branch
    assert rel.Z.shape == (10_000, 10) and rel.M.shape == (2, 10)
    assert np.abs(rel.X_centred.mean(0)).max() < 1e-9     # line 2 removed the shift of +5
    assert np.abs(rel.Z.mean(0)).max() < 1e-9             # so the release is centred too
    source = rel.X_centred if branch == BRANCH_PRESERVE else lift_singular_values(rel.X_centred, rel.omega)
    np.testing.assert_allclose(rel.Z, source @ rel.M / math.sqrt(10), atol=1e-9)
    assert rel.distortion_bound == (1.0 if branch == BRANCH_PRESERVE else
                                    pytest.approx(1 + rel.omega**2 / rel.sigma_min**2))


def test_lift_raises_every_singular_value_and_bounds_distances():
    rng = np.random.default_rng(1)
    Xc = centre(rng.standard_normal((40, 5)) * [1, 2, 3, 4, 20])
    w = 7.0
    lifted = lift_singular_values(Xc, w)
    s, s_lift = np.linalg.svd(Xc, compute_uv=False), np.linalg.svd(lifted, compute_uv=False)
    np.testing.assert_allclose(s_lift, np.sqrt(s**2 + w**2), rtol=1e-10)
    ratios = all_pair_ratios(Xc, lifted)
    # Theorem 2 before projection: 1 <= |x~ - x~'|^2 / |x - x'|^2 <= C' = 1 + omega^2 / sigma_min^2.
    assert ratios.min() >= 1 - 1e-9
    assert ratios.max() <= 1 + w**2 / s[-1] ** 2 + 1e-9


def test_pairwise_distances_within_lemma_1_band_with_stated_probability():
    """Lemma 1 / Theorem 2 (preserve branch): r >= 8 log(n^2/mu)/nu^2 puts every pair in [1-nu, 1+nu] w.p. >= 1-mu."""
    n, d, nu, mu = 20, 10, 0.5, 0.1
    r = lemma1_min_r(n, nu, mu)
    assert r == math.ceil(8 * math.log(n**2 / mu) / nu**2) and lemma1_nu(n, r, mu) <= nu
    X = np.random.default_rng(5).standard_normal((n, d)) * 1e6  # huge sigma_min: the preserve branch
    trials, inside = 200, 0
    rng = np.random.default_rng(6)
    for _ in range(trials):
        rel = release(X, 1.0, 1e-5, r, rng)
        assert rel.branch == BRANCH_PRESERVE
        low, high = theorem2_band(nu, rel.distortion_bound)
        ratios = all_pair_ratios(rel.X_centred, rel.Z)
        inside += bool(ratios.min() >= low and ratios.max() <= high)
    # The lemma promises >= 1 - mu = 0.9; allowing 3 binomial standard errors at p = 0.9 over 200 trials
    # (0.064) keeps the check from failing by chance if the bound were tight. In practice nearly all pass.
    assert inside / trials >= 1 - mu - 3 * math.sqrt(mu * (1 - mu) / trials)
    # And the band is a real constraint: at r = 3 most projections break it.
    small = sum(all_pair_ratios(X, centre(X) @ rng.standard_normal((d, 3)) / math.sqrt(3)).max() > 1 + nu
                for _ in range(50))
    assert small >= 40


def test_release_rejects_bad_parameters(synthetic_X):
    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match="epsilon"):
        release(synthetic_X, 0.0, 1e-5, 10, rng)
    with pytest.raises(ConfigError, match="delta"):
        release(synthetic_X, 1.0, 1.0, 10, rng)
    with pytest.raises(ConfigError, match="r must be"):
        release(synthetic_X, 1.0, 1e-5, 0, rng)
