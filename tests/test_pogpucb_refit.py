"""PO-GP-UCB with the modeler refitting its hyperparameters at every iteration stays finite."""

from __future__ import annotations

import numpy as np

from engine.pogpucb.config import PoConfig
from engine.pogpucb.gp import fit_isotropic
from engine.pogpucb.modeler import run_gp_ucb
from engine.pogpucb.runner import _streams
from engine.pogpucb.tasks import build_task


def _repeated_rows():
    """A modeler's observations after it has queried the same four rows again and again."""
    rng = np.random.default_rng(3)
    rows = rng.uniform(0, 1, size=(4, 2))
    X = np.repeat(rows, 20, axis=0)
    y = np.sin(3 * X[:, 0]) + 0.05 * rng.standard_normal(len(X))
    return X, y


def test_a_refit_from_a_tiny_previous_lengthscale_stays_near_the_data():
    X, y = _repeated_rows()
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    closest = d[d > 0].min()
    hyper = fit_isotropic(X, y, lengthscale_guess=1e-160, n_lengthscales=12)
    assert np.isfinite([hyper.lengthscale, hyper.signal_var, hyper.noise_var]).all()
    assert hyper.lengthscale >= closest / 100 ** 2 * 0.99


def test_chained_refits_do_not_walk_the_lengthscale_to_zero():
    X, y = _repeated_rows()
    lengthscale = None
    for _ in range(60):
        hyper = fit_isotropic(X, y, lengthscale_guess=lengthscale, n_lengthscales=12)
        lengthscale = hyper.lengthscale
        assert np.isfinite([hyper.lengthscale, hyper.signal_var, hyper.noise_var]).all()
        assert hyper.lengthscale > 1e-8


def test_the_failing_refit_every_iteration_run_completes():
    # The fifth run (run 4) of iterations=100, hyperparameters=refit, refit_every=1, runs=5 on the default
    # synthetic task: its non-private baseline refitted into NaN hyperparameters and a Cholesky on NaN.
    config = PoConfig(iterations=100, hyperparameters="refit", refit_every=1, runs=5)
    task = build_task(config.dataset, config.task_seed)
    init_rng, _, _, base_rng = _streams(config.seed, 4)
    init = init_rng.choice(task.n, size=config.initial_points, replace=False)
    trace = run_gp_ucb(task.X, task.f, task.noise_var, task.hyper, init, config.iterations, config.delta_prime,
                       base_rng, refit_every=1)
    assert len(trace.hypers) == config.iterations
    assert all(np.isfinite([h.lengthscale, h.signal_var, h.noise_var]).all() for h in trace.hypers)


def test_a_length_scale_whose_kernel_lapack_cannot_decompose_is_skipped(monkeypatch):
    # Some GP draws give a kernel on which LAPACK's eigh does not converge at one length-scale of the grid: the
    # fit skips that length-scale (not a candidate) and returns the best of the others, as without the failure.
    import numpy as np

    rng = np.random.default_rng(3)
    X = rng.random((30, 2))
    y = np.sin(3 * X[:, 0]) + 0.01 * rng.standard_normal(30)
    plain = fit_isotropic(X, y)
    real, calls = np.linalg.eigh, []

    def flaky(matrix):
        calls.append(1)
        if len(calls) == 1:            # the grid's first (shortest) length-scale
            raise np.linalg.LinAlgError("Eigenvalues did not converge")
        return real(matrix)

    monkeypatch.setattr(np.linalg, "eigh", flaky)
    fit = fit_isotropic(X, y)
    assert np.isfinite(fit.lengthscale) and fit.lengthscale == plain.lengthscale
