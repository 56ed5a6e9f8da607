"""The authors' query optimiser (engine.fbo.refine), the landmine-optimiser ablation's switch: its gradient, a search
that never ends below its best start, the same random numbers as the simulation it refines, and the default path
untouched."""

from __future__ import annotations

import numpy as np
import pytest

from engine.fbo import FboConfig, run_fbo
from engine.fbo.refine import STARTS, RefinedSimulation, maximise, normalised_rff, refine_seconds
from engine.fbo.simulation import Simulation
from engine.validation import ConfigError


def _problem(K=3, S=4, M=9, D=2, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((K, S, D)), rng.normal(size=(K, M, D)) * 5, rng.uniform(0, 2 * np.pi, (K, M)),
            rng.normal(size=(K, S, M)), rng.random(K) + 0.5)


def test_the_gradient_is_the_samples_derivative():
    x, freq, phase, weight, scale = _problem()
    value, grad = normalised_rff(x, freq, phase, weight, scale)
    # The value is the normalised feature sum the own sampler evaluates (engine.surrogate.thompson).
    cos = np.cos(np.einsum("ksd,kmd->ksm", x, freq) + phase[:, None, :])
    expected = scale[:, None] * (cos * weight).sum(-1) / np.sqrt((cos * cos).sum(-1))
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    step = 1e-6
    for d in range(x.shape[2]):
        dx = np.zeros_like(x)
        dx[..., d] = step
        numeric = (normalised_rff(x + dx, freq, phase, weight, scale)[0]
                   - normalised_rff(x - dx, freq, phase, weight, scale)[0]) / (2 * step)
        np.testing.assert_allclose(grad[..., d], numeric, atol=1e-6)


def test_the_search_climbs_and_never_ends_below_its_best_start():
    x, freq, phase, weight, scale = _problem(K=6, S=5, seed=3)
    weight = np.broadcast_to(weight[:, :1, :], weight.shape)        # one sample per problem

    def sample(points):
        return normalised_rff(points, freq, phase, np.broadcast_to(weight[:, :1, :], points.shape[:2] +
                                                                   weight.shape[2:]), scale)

    found = maximise(sample, x, np.zeros_like(x), np.ones_like(x))
    start_values = sample(x)[0]
    found_values = sample(found[:, None, :])[0][:, 0]
    assert found.shape == (6, 2) and np.all((found >= 0) & (found <= 1))
    assert np.all(found_values >= start_values.max(axis=1) - 1e-12)
    assert np.mean(found_values > start_values.max(axis=1) + 1e-6) > 0.5     # it moves, uphill
    # At an interior end the gradient vanishes (a local maximum of each problem's sample).
    _, grad = sample(found[:, None, :])
    interior = np.all((found > 1e-6) & (found < 1 - 1e-6), axis=1)
    assert interior.any() and np.abs(grad[interior, 0]).max() < 1e-3


class _Watched(RefinedSimulation):
    """Records every iteration's best tries and chosen points with the own samples that chose them."""

    seen: list

    def _choice(self, candidates, index, use_other, step, t):
        chosen = super()._choice(candidates, index, use_other, step, t)
        sample = self.pool.own.last_sample
        self.seen = getattr(self, "seen", []) + [(candidates.X[index], chosen, use_other.copy(), dict(sample))]
        return chosen


@pytest.mark.parametrize("algorithm", ["ts", "fts-de"])
def test_every_query_is_at_least_as_good_under_its_sample_as_the_best_try(algorithm):
    config = FboConfig(dataset="synthetic", domain="continuous", algorithm=algorithm, agents=4, iterations=4,
                       runs=2, seed=7, P=2, n_init=3)
    sim = _Watched(config)
    list(sim)
    assert len(sim.seen) == config.iterations
    moved, D = 0, sim.objective.dim
    for best, chosen, use_other, sample in sim.seen:
        rows = np.flatnonzero(~use_other.ravel())
        position = np.searchsorted(sample["models"], rows)
        args = (sample["freq"][position], sample["phase"][position])
        weight = sample["weights"][position][:, None, :]
        tried = normalised_rff(best.reshape(-1, 1, D)[rows], *args, weight, sample["scale"][position])[0]
        found = normalised_rff(chosen.reshape(-1, 1, D)[rows], *args, weight, sample["scale"][position])[0]
        assert np.all(found >= tried - 1e-9)
        moved += int(np.sum(found > tried + 1e-9))
    assert moved > 0


def test_the_refined_run_draws_the_simulations_random_numbers_and_the_default_path_is_untouched():
    config = FboConfig(dataset="synthetic", domain="continuous", algorithm="dp-fts-de", agents=6, iterations=3,
                       runs=2, seed=4, P=2, n_init=3, q=0.5, z=1.0)
    plain, refined = Simulation(config), RefinedSimulation(config)
    first_plain, first_refined = next(iter(plain)), next(iter(refined))
    # The same initial queries, features and sent vectors: only what the agents query next differs.
    np.testing.assert_array_equal(first_plain.metric, first_refined.metric)
    np.testing.assert_array_equal(plain.domain.features.W, refined.domain.features.W)
    np.testing.assert_array_equal(plain._sent, refined._sent)                     # noqa: SLF001
    list(plain), list(refined)
    assert not np.array_equal(plain.result().run_curves, refined.result().run_curves)
    # The simulation's own path (no refinement) is what run_fbo gives.
    np.testing.assert_array_equal(plain.result().run_curves, run_fbo(config).run_curves)


def test_the_refinement_needs_a_continuous_objective_and_the_authors_sampler():
    with pytest.raises(ConfigError, match="continuous objective"):
        RefinedSimulation(FboConfig(dataset="synthetic", agents=3, iterations=2, runs=1))
    with pytest.raises(ConfigError, match="authors' own sampler"):
        RefinedSimulation(FboConfig(dataset="synthetic", domain="continuous", own_sampler="pathwise", agents=3,
                                    iterations=2, runs=1))


def test_the_ablation_is_priced_with_its_continuous_side():
    from engine.cli import build_parser
    from engine.cli.reproduce import cost
    from engine.fbo.refine import REFINE_AGENT_ITERATION_S

    args = build_parser().parse_args(["reproduce", "ablations", "--parts", "landmine-optimiser", "--runs", "10",
                                      "--no-replication"])
    optimiser = cost(args).seconds
    # Every query of the continuous side trains an SVM: 4 settings x 10 runs x 8 agents x 70 queries at the data
    # set's price per query, and the refinement's 60 iterations.
    from engine.objectives.registry import dataset_costs

    queries = 4 * 10 * 8 * 70 * dataset_costs("landmine").query_seconds
    refine = 4 * 10 * 8 * 60 * REFINE_AGENT_ITERATION_S
    assert optimiser > queries + refine
    assert refine_seconds(FboConfig(agents=8, iterations=60, runs=10), 8) == pytest.approx(10 * 8 * 60 *
                                                                                          REFINE_AGENT_ITERATION_S)
    assert STARTS == 5
