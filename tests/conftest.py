"""Shared test settings: where the landmine data lives, and a cache per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "datasets"


def pytest_configure(config):
    # Tests read the landmine file from ../shared/datasets unless told otherwise,
    # and never write into the project's own cache folder.
    if "DPBO_DATA_DIR" not in os.environ and SHARED_DATA.is_dir():
        os.environ["DPBO_DATA_DIR"] = str(SHARED_DATA)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The data directory holding landmine/LandmineData.mat; skips when it is absent."""
    path = Path(os.environ.get("DPBO_DATA_DIR", SHARED_DATA))
    if not (path / "landmine" / "LandmineData.mat").is_file():
        pytest.skip(f"LandmineData.mat not found under {path}/landmine (set DPBO_DATA_DIR)")
    return path


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    """A cache directory private to this test session (objective tables, sweeps)."""
    return tmp_path_factory.mktemp("dpbo-cache")
