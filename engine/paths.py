"""Where the engine reads data, keeps its cache and finds the stored reproductions.

One order, for the dashboard, the command line and the tests alike: data
(e.g. ``landmine/LandmineData.mat``) is read from an explicit ``--data-dir``,
else the environment variable ``DPBO_DATA_DIR``, else the default folder
(:data:`DEFAULT_DATA_DIR`). Computed tables go to ``--cache-dir``, else
``DPBO_CACHE_DIR``, else :data:`DEFAULT_CACHE_DIR`. ``dpbo data status``
(``python -m engine data status``) prints which folders are in use.

The defaults depend on how the engine is there:

- run from a checkout of the project (or the Docker image's copy of it):
  the project's ``data/`` and ``data/cache/``;
- installed from the wheel (``pip install dpbo-explorer``: a
  ``dpbo_explorer-*.dist-info`` folder next to the ``engine`` package): the
  user's data and cache folders, never site-packages: on Linux
  ``$XDG_DATA_HOME/dpbo-explorer`` (``~/.local/share/dpbo-explorer``) and
  ``$XDG_CACHE_HOME/dpbo-explorer`` (``~/.cache/dpbo-explorer``); on macOS
  ``~/Library/Application Support/dpbo-explorer`` and
  ``~/Library/Caches/dpbo-explorer``; on Windows
  ``%LOCALAPPDATA%\\dpbo-explorer\\data`` and ``...\\cache``.

The stored reproductions (read-only) are the checkout's
``data/reproduction/``, or the copy the wheel carries as package data
(``engine/reproduce/stored_data/``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "dpbo-explorer"
ENGINE_DIR = Path(__file__).resolve().parent
PROJECT_ROOT = ENGINE_DIR.parent


def is_installed(root: Path = PROJECT_ROOT) -> bool:
    """Whether the engine was installed from the distribution (its metadata sits beside the package), rather than
    run from a checkout of the project."""
    return any(root.glob("dpbo_explorer-*.dist-info"))


def user_folder(kind: str, environ=None, platform: str | None = None) -> Path:
    """The user's own ``kind`` ("data" or "cache") folder for this program (see the module's docstring)."""
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    home = Path(environ.get("HOME") or Path.home())
    if platform.startswith("win"):
        base = Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
        return base / APP_NAME / kind
    if platform == "darwin":
        return home / "Library" / ("Caches" if kind == "cache" else "Application Support") / APP_NAME
    variable, fallback = ("XDG_CACHE_HOME", home / ".cache") if kind == "cache" else \
        ("XDG_DATA_HOME", home / ".local" / "share")
    value = environ.get(variable)
    # The XDG specification ignores a relative path in these variables.
    base = Path(value) if value and Path(value).is_absolute() else fallback
    return base / APP_NAME


INSTALLED = is_installed()
if INSTALLED:
    DEFAULT_DATA_DIR = user_folder("data")
    DEFAULT_CACHE_DIR = user_folder("cache")
    DEFAULT_SOURCE = "the user's data folder"
    STORED_REPRODUCTION_DIR = ENGINE_DIR / "reproduce" / "stored_data"
else:
    DEFAULT_DATA_DIR = PROJECT_ROOT / "data"
    DEFAULT_CACHE_DIR = PROJECT_ROOT / "data" / "cache"
    DEFAULT_SOURCE = "data/ in the project"
    STORED_REPRODUCTION_DIR = PROJECT_ROOT / "data" / "reproduction"
DATA_DIR_ORDER = ("--data-dir", "DPBO_DATA_DIR", DEFAULT_SOURCE)


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
    """The cache directory (created): ``explicit``, else ``DPBO_CACHE_DIR``, else :data:`DEFAULT_CACHE_DIR`."""
    if explicit:
        path = Path(explicit).expanduser()
    else:
        env = os.environ.get("DPBO_CACHE_DIR")
        path = Path(env).expanduser() if env else DEFAULT_CACHE_DIR
    path.mkdir(parents=True, exist_ok=True)
    return path
