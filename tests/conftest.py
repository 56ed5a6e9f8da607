"""Shared test settings: the landmine data where the engine looks for it, a cache per test session, and the
groups the suite runs in on its two workers.

The tests resolve the data directory exactly as the dashboard and the CLI do
(:func:`engine.paths.data_dir`: ``DPBO_DATA_DIR``, else ``data/``), so a
checkout where the tests find the landmine file is one where the app finds
it too. ``.ci/run`` points ``DPBO_DATA_DIR`` at ``../shared/datasets``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from engine.paths import data_dir as resolve_data_dir

ROOT = Path(__file__).resolve().parents[1]

# pyproject.toml runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup``): each group below runs
# whole on one worker, so what its tests share is set up once. A module is a group (its module-scoped fixtures);
# every browser test is one group (one dashboard per configuration, one Chromium); the Dask cluster's users are
# one group (one cluster). Session-scoped servers, ports and caches are per worker (each has its own pytest tmp
# folder, free ports are asked of the system), so groups running at once share nothing but the machine.
# The longest groups start first, so that the end of the run is not one long group on one worker.
SESSION_CACHE: list[str] = []      # the folder pytest_configure made, removed at the end
LONGEST_FIRST = ("browser", "browser-servers", "tests/test_flower_federation.py", "tests/test_install.py", "dask")


# Browser modules that start servers of their own (the image's hosted server, the quick start, a server without
# the landmine data, a server whose table builds wait on a gate) run apart from those sharing the session's
# dashboard, so the two can run at once.
OWN_SERVERS = ("test_hosted.py", "test_first_visit.py", "test_landmine_data.py", "test_table_build.py",
               "test_acceptance.py")


# What a quick run for development leaves out, `python -m pytest -m "not heavy"` (README): the groups that start
# servers, browsers, clusters, federations or virtual environments, the statistical tests, and the modules whose
# tests each take many seconds of CPU (measured: README, "Running the tests").
HEAVY_GROUPS = ("browser", "browser-servers", "dask", "tests/test_flower_federation.py", "tests/test_install.py")
HEAVY_MODULES = ("tests/test_cluster_recipe.py", "tests/test_limits_conservative.py", "tests/test_price_property.py")


def _group(item) -> str:
    path = Path(str(item.fspath)).resolve().relative_to(ROOT)
    if path.parts[:2] == ("tests", "browser"):
        return "browser-servers" if path.name in OWN_SERVERS else "browser"
    if "dask_cluster" in getattr(item, "fixturenames", ()):
        return "dask"
    return path.as_posix()


@pytest.hookimpl(tryfirst=True)     # before xdist's own hook, which reads the groups into the tests' ids
def pytest_collection_modifyitems(config, items):
    """Mark every test with its worker group (:data:`LONGEST_FIRST`), the longest groups first, and the heavy ones
    ``heavy``."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    for item in items:
        group = _group(item)
        item.add_marker(pytest.mark.xdist_group(group))
        if group in HEAVY_GROUPS or group in HEAVY_MODULES or item.get_closest_marker("statistical"):
            item.add_marker(pytest.mark.heavy)
    order = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (rank.get(_group(item), len(rank)), order[id(item)]))


def pytest_configure(config):
    """Python keeps the bytecode it compiles (a machine may set ``PYTHONDONTWRITEBYTECODE``): the suite starts
    hundreds of interpreters (servers, workers, federations' apps, commands, a fresh environment installed without
    compiling), and each would otherwise compile every module it imports from source again.

    The engine's default cache for this session: a folder of this worker's own, not the checkout's data/cache
    (another worker's tests, and the servers they start, write there at the same time; tests/browser/
    test_hosted.py checks that nothing is written into the project). A ``DPBO_CACHE_DIR`` set beforehand stays;
    the xdist controller, which runs no test, sets none (its workers would inherit it)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    _scan_components_once()
    controller = bool(getattr(config.option, "numprocesses", None)) and "PYTEST_XDIST_WORKER" not in os.environ
    if "DPBO_CACHE_DIR" not in os.environ and not controller:
        SESSION_CACHE.append(tempfile.mkdtemp(prefix="dpbo-test-cache-"))
        os.environ["DPBO_CACHE_DIR"] = SESSION_CACHE[-1]


def _scan_components_once() -> None:
    """Streamlit's app tests scan every installed distribution's metadata for components each time an app test
    starts (hundreds per session, a third of a second each); the installed packages do not change during a test
    session, so the first scan's answer is kept. A server the tests start scans once, as it does anyway."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:          # no Streamlit: the engine's own tests
        return
    scan, found = manifest_scanner.scan_component_manifests, []

    def scan_once(max_workers=None):
        if not found:
            found.append(scan(max_workers))
        return list(found[0])

    manifest_scanner.scan_component_manifests = scan_once


def pytest_unconfigure(config):
    while SESSION_CACHE:
        os.environ.pop("DPBO_CACHE_DIR", None)
        shutil.rmtree(SESSION_CACHE.pop(), ignore_errors=True)


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
def dask_workdir(tmp_path_factory) -> Path:
    """The folder of the session's Dask cluster: its processes' logs (``scheduler.log``, ``worker0.log``, ...)."""
    return tmp_path_factory.mktemp("dask")


@pytest.fixture(scope="session")
def dask_cluster(dask_workdir, cache_dir):
    """A real Dask cluster on 127.0.0.1 for the session: the stock ``dask scheduler`` and two ``dask worker``
    processes (tests/dask_loopback.py), stopped by their pids at the end. Yields ``(address, processes)``."""
    import os

    from tests.dask_loopback import cluster

    from engine.executor.cluster import close_clients

    env = dict(os.environ, DPBO_CACHE_DIR=str(cache_dir))
    with cluster(2, dask_workdir, env) as running:
        try:
            yield running
        finally:
            close_clients()             # before the cluster stops: no client left trying to reconnect
