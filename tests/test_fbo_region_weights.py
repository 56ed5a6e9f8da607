"""Sub-region weights cost O(P + N) per round: a run with many sub-regions and many agents keeps no (P, N)
matrix per iteration, and neither does the privacy audit (the hosting probe's P x N x T cases, small)."""

from __future__ import annotations

import tracemalloc

import numpy as np

from engine.audit.config import ServerAudit
from engine.audit.fbo_server import ServerGame
from engine.fbo import FboConfig, Simulation
from engine.fbo.server import aggregate_batch
from engine.fbo.weights import RegionWeights, region_weights, subregion_weights
from engine.objectives import build_objective

N = P = 3000
MATRIX_BYTES = P * N * 8          # one dense (P, N) float matrix: 72 MB


def test_compact_weights_are_the_dense_weights():
    assignment = np.arange(11) % 4
    for mode in ("adaptive", "fixed", "equal"):
        for t in (1, 4, 30):
            compact = region_weights(assignment, 4, t, mode=mode)
            dense = subregion_weights(assignment, 4, t, mode=mode)
            np.testing.assert_allclose(np.asarray(compact), dense)
            assert compact.max() == dense.max()
            np.testing.assert_allclose(compact.agent_norms(), np.linalg.norm(dense, axis=0))
            np.testing.assert_allclose(compact.column(5), dense[:, 5])
            vectors = np.random.default_rng(t).normal(size=(2, 11, 3))
            np.testing.assert_allclose(compact.combine(vectors), np.einsum("pn,rnm->rpm", dense, vectors))
            rng = np.random.default_rng
            a = aggregate_batch(vectors, compact, q=0.5, z=1.0, S=1.0, rng=rng(0), private=True)
            b = aggregate_batch(vectors, dense, q=0.5, z=1.0, S=1.0, rng=rng(0), private=True)
            np.testing.assert_allclose(a.broadcast, b.broadcast)
            assert a.noise_std == b.noise_std


def test_a_run_with_many_sub_regions_keeps_no_p_by_n_matrix():
    config = FboConfig(algorithm="dp-fts-de", agents=N, P=P, iterations=6, runs=1, features=1, n_init=1,
                       own_sampler="shared")
    objective = build_objective("synthetic", n_agents=N)
    tracemalloc.start()
    try:
        records = list(Simulation(config, objective))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # before: five (P, N) temporaries per round and one kept per record (650 MB here)
    assert peak < MATRIX_BYTES / 2, peak
    for record in records[1:]:
        assert isinstance(record.weights, RegionWeights)
        assert record.weights.shape == (P, N)
        assert record.server_step.weights is record.weights
        assert record.weights.own.nbytes + record.weights.other.nbytes == 2 * P * 8


def test_an_audit_with_many_sub_regions_keeps_no_p_by_n_matrix():
    tracemalloc.start()
    try:
        game = ServerGame(ServerAudit(agents=N, P=P, features=2, trials=100, steps=3))
        game.scores("in", 20, np.random.default_rng(0))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MATRIX_BYTES / 2, peak      # before: (T, P, N) weights and their norms (over 600 MB)
    assert all(isinstance(w, RegionWeights) for w in game.weights)
