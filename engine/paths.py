"""Where the engine reads data and keeps its cache.

Data (e.g. landmine/LandmineData.mat) is read from an explicit ``--data-dir``,
else the environment variable ``DPBO_DATA_DIR``, else ``data/`` in the
project. Computed tables go to ``DPBO_CACHE_DIR``, else ``data/cache/``.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]


def data_dir(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("DPBO_DATA_DIR")
    return Path(env).expanduser() if env else PROJECT_ROOT / "data"


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    if explicit:
        path = Path(explicit).expanduser()
    else:
        env = os.environ.get("DPBO_CACHE_DIR")
        path = Path(env).expanduser() if env else PROJECT_ROOT / "data" / "cache"
    path.mkdir(parents=True, exist_ok=True)
    return path
