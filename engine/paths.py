"""Where the engine reads data and keeps its cache.

One order, for the dashboard, the command line and the tests alike: data
(e.g. ``landmine/LandmineData.mat``) is read from an explicit ``--data-dir``,
else the environment variable ``DPBO_DATA_DIR``, else ``data/`` in the
project (:data:`DEFAULT_DATA_DIR`). ``python -m engine data status`` prints
which one is in use. Computed tables go to ``DPBO_CACHE_DIR``, else
``data/cache/``.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = PROJECT_ROOT / "data"
DATA_DIR_ORDER = ("--data-dir", "DPBO_DATA_DIR", "data/ in the project")


def data_dir_source(explicit: str | os.PathLike | None = None, environ=None) -> str:
    """Which entry of :data:`DATA_DIR_ORDER` decides the data directory."""
    environ = os.environ if environ is None else environ
    if explicit:
        return DATA_DIR_ORDER[0]
    return DATA_DIR_ORDER[1] if environ.get("DPBO_DATA_DIR") else DATA_DIR_ORDER[2]


def data_dir(explicit: str | os.PathLike | None = None, environ=None) -> Path:
    """The data directory: ``explicit``, else ``DPBO_DATA_DIR``, else :data:`DEFAULT_DATA_DIR`."""
    environ = os.environ if environ is None else environ
    if explicit:
        return Path(explicit).expanduser()
    env = environ.get("DPBO_DATA_DIR")
    return Path(env).expanduser() if env else DEFAULT_DATA_DIR


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        path = Path(explicit).expanduser()
    else:
        env = os.environ.get("DPBO_CACHE_DIR")
        path = Path(env).expanduser() if env else PROJECT_ROOT / "data" / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path
