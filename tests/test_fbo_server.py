"""The central server (clipping, weighted sums, noise), sub-region weights, schedules and sub-regions."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fbo.schedules import one_minus_pt, weight_level
from engine.fbo.server import aggregate, aggregate_batch, select_agents
from engine.fbo.subregions import Subregions, split_counts
from engine.fbo.weights import subregion_weights
from engine.privacy import fixed_sample_size


def _vectors(rng, R, N, M, scale=1.0):
    # Norms spread around the clipping threshold so both branches are exercised.
    return rng.normal(0.0, scale, size=(R, N, M)) * rng.uniform(0.2, 2.0, size=(R, N, 1))


# ---------------------------------------------------------------- server


@pytest.mark.parametrize("P", [1, 2, 4])
def test_clipping_bound_holds_for_every_selected_vector(P):
    rng = np.random.default_rng(0)
    N, M, S = 60, 50, 11.0
    vectors = _vectors(rng, 20, N, M)
    weights = subregion_weights(np.arange(N) % P, P, 1)
    step = aggregate_batch(vectors, weights, q=0.5, z=1.0, S=S, rng=rng, private=True)
    threshold = S / np.sqrt(P)
    norms = np.linalg.norm(vectors, axis=2)
    clipped_norms = np.linalg.norm(step.clipped_vectors, axis=2)
    assert step.selected.any() and step.clipped.any() and (step.selected & ~step.clipped).any()
    assert np.all(clipped_norms[step.selected] <= threshold * (1 + 1e-12))
    # Clipping only rescales: long vectors land on the threshold, short ones are untouched.
    assert np.allclose(clipped_norms[step.clipped], threshold)
    keep = step.selected & ~step.clipped
    assert np.array_equal(step.clipped_vectors[keep], vectors[keep])
    assert np.array_equal(step.clipped, step.selected & (norms > threshold))


def test_weighted_sum_matches_algorithm_line_10():
    rng = np.random.default_rng(1)
    N, M, P, q = 12, 5, 3, 0.4
    vectors = _vectors(rng, 1, N, M, scale=3.0)[0]
    weights = subregion_weights(np.arange(N) % P, P, 2)
    step = aggregate(vectors, weights, q=q, z=0.7, S=4.0, rng=rng, private=True)
    expected = np.zeros((P, M))
    for i in range(P):
        for n in np.flatnonzero(step.selected):
            clipped = vectors[n] / max(1.0, np.linalg.norm(vectors[n]) / (4.0 / np.sqrt(P)))
            expected[i] += weights[i, n] / q * clipped
    assert np.allclose(step.signal, expected)
    assert np.allclose(step.broadcast, step.signal + step.noise)
    assert step.noise_std == pytest.approx(0.7 * weights.max() * 4.0 / q)


@pytest.mark.statistical
def test_server_noise_has_the_formula_std():
    rng = np.random.default_rng(2)
    N, M, P, q, z, S = 40, 50, 2, 0.25, 1.3, 11.0
    weights = subregion_weights(np.arange(N) % P, P, 1)
    expected = z * weights.max() * S / q
    # 400 runs x P x M = 40,000 noise coordinates in one batched round.
    step = aggregate_batch(_vectors(rng, 400, N, M), weights, q=q, z=z, S=S, rng=rng, private=True)
    noise = step.broadcast - step.signal
    n = noise.size
    # The sample std of n Gaussian draws has relative std 1 / sqrt(2 n) = 0.35 %; 2 % is ~6 of those.
    assert noise.std() == pytest.approx(expected, rel=0.02)
    # Mean zero: its standard error is expected / sqrt(n) = 0.5 % of expected; allow 5 standard errors.
    assert abs(noise.mean()) < 5 * expected / np.sqrt(n)
    # Independent coordinates: the correlation of neighbouring coordinates is ~N(0, 1/n).
    flat = noise.reshape(-1, M)
    corr = np.corrcoef(flat[:, 0], flat[:, 1])[0, 1]
    assert abs(corr) < 5 / np.sqrt(flat.shape[0])


@pytest.mark.statistical
def test_poisson_subsampling_rate_is_q():
    rng = np.random.default_rng(3)
    R, N, q = 500, 200, 0.25
    selected = select_agents(R, N, q, rng, "poisson")
    # Binomial(R N, q): std of the rate is sqrt(q (1 - q) / (R N)) = 0.14 %; allow 5 of those.
    assert abs(selected.mean() - q) < 5 * np.sqrt(q * (1 - q) / (R * N))
    counts = selected.sum(axis=1)
    assert counts.min() != counts.max()  # the number selected varies under Poisson sampling


def test_fixed_size_sampling_selects_round_Nq():
    rng = np.random.default_rng(4)
    selected = select_agents(50, 29, 0.35, rng, "fixed")
    assert fixed_sample_size(0.35, 29) == 10
    assert np.all(selected.sum(axis=1) == 10)
    assert len({tuple(row) for row in selected}) > 1


def test_without_privacy_every_agent_is_averaged_unclipped_and_noiseless():
    rng = np.random.default_rng(5)
    N, M, P = 10, 4, 2
    vectors = _vectors(rng, 3, N, M, scale=20.0)
    weights = subregion_weights(np.arange(N) % P, P, 1)
    step = aggregate_batch(vectors, weights, q=0.1, z=5.0, S=0.1, rng=rng, private=False)
    assert step.selected.all() and not step.clipped.any()
    assert step.noise_std == 0.0 and not step.noise.any()
    assert np.allclose(step.broadcast, np.einsum("pn,rnm->rpm", weights, vectors))


def test_single_run_uses_the_batched_arithmetic():
    vectors = _vectors(np.random.default_rng(6), 1, 30, 8, scale=4.0)
    weights = subregion_weights(np.arange(30) % 3, 3, 4)
    one = aggregate(vectors[0], weights, q=0.3, z=1.0, S=5.0, rng=np.random.default_rng(7), private=True)
    batch = aggregate_batch(vectors, weights, q=0.3, z=1.0, S=5.0, rng=np.random.default_rng(7), private=True)
    assert np.array_equal(one.selected, batch.selected[0])
    assert np.array_equal(one.broadcast, batch.broadcast[0])


# ---------------------------------------------------------------- weights and schedules


def test_temperature_schedule_is_the_appendix_one():
    # App. B: a_t = 16 for t <= 5, then 16, 12.25, 8.5, 4.75, 1 for t = 6..10, then 1.
    levels = [weight_level(t, 15.0, "synthetic") for t in range(1, 13)]
    assert levels == pytest.approx([16, 16, 16, 16, 16, 16, 12.25, 8.5, 4.75, 1, 1, 1])
    # Real-world: 16 for 10 iterations, then linear to 1 over the next 30 (uniform after 40).
    real = [weight_level(t, 15.0, "real") for t in range(1, 45)]
    assert real[:11] == pytest.approx([16] * 11)
    assert real[39:] == pytest.approx([1] * 5)
    assert np.all(np.diff(real[10:40]) < 0)


@pytest.mark.parametrize("schedule,end", [("synthetic", 10), ("real", 40)])
@pytest.mark.parametrize("P", [1, 2, 3, 4])
def test_weights_sum_to_one_and_become_uniform(schedule, end, P):
    N = 29
    assignment = np.arange(N) % P
    for t in range(1, end + 5):
        w = subregion_weights(assignment, P, t, schedule=schedule)
        assert w.shape == (P, N)
        assert np.allclose(w.sum(axis=1), 1.0)
        assert np.all(w > 0)
        if t >= end:
            assert np.allclose(w, 1.0 / N)
        elif P > 1:
            # Before the schedule ends, a sub-region's own explorers weigh more than the others.
            own = w[np.arange(P)[:, None] == assignment[None, :]]
            other = w[np.arange(P)[:, None] != assignment[None, :]]
            assert own.min() > other.max()


def test_weights_at_unit_temperature_favour_own_explorers_by_e_to_the_a():
    w = subregion_weights(np.arange(10) % 2, 2, 1, a=15.0)
    assert w[0, 0] / w[0, 1] == pytest.approx(np.exp(15.0))


def test_equal_and_fixed_weight_ablations():
    assignment = np.arange(20) % 4
    assert np.allclose(subregion_weights(assignment, 4, 1, mode="equal"), 1 / 20)
    fixed_early = subregion_weights(assignment, 4, 1, mode="fixed")
    fixed_late = subregion_weights(assignment, 4, 60, mode="fixed")
    assert np.allclose(fixed_early, fixed_late)                     # non-adaptive: T_t = 1 throughout
    assert np.allclose(fixed_early, subregion_weights(assignment, 4, 1))  # and equal to the paper's start


def test_one_minus_pt_schedules():
    t = np.array([1, 2, 4, 10])
    assert np.allclose(one_minus_pt("sqrt", t), 1 / np.sqrt(t))
    assert np.allclose(one_minus_pt("linear", t), 1 / t)
    assert np.allclose(one_minus_pt("square", t), 1 / t ** 2)
    assert np.allclose(one_minus_pt("constant", t, constant=0.3), 0.3)


# ---------------------------------------------------------------- sub-regions


def test_subregions_match_the_appendix():
    # App. B.1.1: P = 2 gives [0, 0.5) and [0.5, 1]; P = 3 gives thirds.
    two = Subregions(2, 1)
    assert list(two.index(np.array([[0.0], [0.4999], [0.5], [1.0]]))) == [0, 0, 1, 1]
    three = Subregions(3, 1)
    assert list(three.index(np.array([[0.33], [0.34], [0.66], [0.67], [1.0]]))) == [0, 1, 1, 2, 2]
    # App. B.2.1: P = 4 in 2-D (and 3-D) is the 2 x 2 grid of the first two dimensions.
    four = Subregions(4, 2)
    points = np.array([[0.1, 0.1], [0.1, 0.6], [0.6, 0.1], [0.6, 0.6]])
    assert list(four.index(points)) == [0, 1, 2, 3]
    assert split_counts(4, 3) == (2, 2, 1)


@pytest.mark.parametrize("P,dim", [(2, 1), (3, 1), (4, 2), (6, 2), (5, 3), (8, 3)])
def test_subregions_have_equal_volume_and_cover_the_box(P, dim):
    sub = Subregions(P, dim)
    assert int(np.prod(sub.counts)) == P
    lo, hi = sub.bounds(np.arange(P))
    assert np.allclose(np.prod(hi - lo, axis=1), 1.0 / P)
    points = sub.sample_points(np.arange(P), 50, np.random.default_rng(0))     # (P, 50, D)
    assert np.array_equal(sub.index(points), np.repeat(np.arange(P)[:, None], 50, axis=1))


def test_round_robin_assignment_and_initial_candidates_in_region():
    sub = Subregions(3, 1)
    assignment = sub.assign(10)
    assert list(assignment) == [0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    grid = np.linspace(0, 1, 1000)[:, None]
    region = sub.index(grid)
    idx = sub.sample_candidates(region, np.broadcast_to(assignment, (4, 10)), 10, np.random.default_rng(1))
    assert idx.shape == (4, 10, 10)
    assert np.array_equal(region[idx], np.broadcast_to(assignment[None, :, None], idx.shape))
    # Distinct initial points per agent.
    assert all(len(set(row)) == 10 for row in idx.reshape(-1, 10))
