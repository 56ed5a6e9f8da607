"""Shared test settings: the landmine data where the engine looks for it, and a cache per test session.

The tests resolve the data directory exactly as the dashboard and the CLI do
(:func:`engine.paths.data_dir`: ``DPBO_DATA_DIR``, else ``data/``), so a
checkout where the tests find the landmine file is one where the app finds
it too. ``.ci/run`` points ``DPBO_DATA_DIR`` at ``../shared/datasets``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.paths import data_dir as resolve_data_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The data directory holding landmine/LandmineData.mat; skips when it is absent."""
    path = resolve_data_dir()
    if not (path / "landmine" / "LandmineData.mat").is_file():
        pytest.skip(f"LandmineData.mat not found under {path}/landmine (set DPBO_DATA_DIR)")
    return path


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """A cache directory private to this test session (objective tables, sweeps)."""
    return tmp_path_factory.mktemp("dpbo-cache")


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory, cache_dir):
    """A real Dask cluster on 127.0.0.1 for the session: the stock ``dask scheduler`` and two ``dask worker``
    processes (tests/dask_loopback.py), stopped by their pids at the end. Yields ``(address, processes)``."""
    import os

    from tests.dask_loopback import cluster

    from engine.executor.cluster import close_clients

    env = dict(os.environ, DPBO_CACHE_DIR=str(cache_dir))
    with cluster(2, tmp_path_factory.mktemp("dask"), env) as running:
        try:
            yield running
        finally:
            close_clients()             # before the cluster stops: no client left trying to reconnect
