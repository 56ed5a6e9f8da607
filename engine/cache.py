"""The one disk cache (``DPBO_CACHE_DIR``): arrays keyed by what they were computed from, bounded in size.

The key is a sha256 of a JSON description of the computation (task name,
data checksum, candidate grid, code version, ...): change any part and the key
changes, so a table is never silently stale. Files are written to a temporary
name and renamed into place, so an interrupted write never leaves a file a
later run would trust.

The cache holds at most ``DPBO_CACHE_MAX_MB`` (default 2048; ``none``: no
limit). After every write the least recently used entries (objective tables,
DP-HYPE score tables, interrupted builds, the dashboard's sweeps) are removed
until it fits; reading an entry counts as using it. Deleting anything in the
cache is always safe: it is computed again when needed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from engine.paths import cache_dir as default_cache_dir


def cache_key(description: dict) -> str:
    """A short stable hash of a JSON-serialisable description."""
    text = json.dumps(description, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cache_path(kind: str, description: dict, directory=None) -> Path:
    return default_cache_dir(directory) / f"{kind}-{cache_key(description)}.npz"


def save_arrays_atomic(path: Path, arrays: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    enforce_limit(path, directory=path.parent)


def load_arrays(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path``, or None if the file is missing or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):  # a truncated .npz is not a zip any more
        return None
    mark_used(path)
    return arrays


def cached_arrays(kind: str, description: dict, compute: Callable[[], dict[str, np.ndarray]],
                  directory=None) -> dict[str, np.ndarray]:
    """Load the arrays for ``description`` from the cache, computing and storing them if absent."""
    path = cache_path(kind, description, directory)
    arrays = load_arrays(path)
    if arrays is None:
        arrays = compute()
        save_arrays_atomic(path, arrays)
    return arrays


# ---------------------------------------------------------------- size limit (least recently used first)
CACHE_MAX_ENV = "DPBO_CACHE_MAX_MB"
DEFAULT_CACHE_MAX_MB = 2048.0
GROUPED = ("sweeps",)        # folders whose children are separate entries
IN_FLIGHT_SECONDS = 600.0    # a temporary file younger than this belongs to a write in progress
_lock = threading.Lock()


def cache_limit_bytes(environ: Mapping[str, str] | None = None) -> int | None:
    """The cache's size limit in bytes (``DPBO_CACHE_MAX_MB``; None: no limit)."""
    environ = os.environ if environ is None else environ
    raw = environ.get(CACHE_MAX_ENV, "").strip().lower()
    if raw in ("none", "off", "unlimited"):
        return None
    try:
        value = float(raw) if raw else DEFAULT_CACHE_MAX_MB
    except ValueError:
        value = DEFAULT_CACHE_MAX_MB
    if not math.isfinite(value) or value <= 0:
        value = DEFAULT_CACHE_MAX_MB
    return int(value * 2**20)


def mark_used(path: Path) -> None:
    """Record that ``path`` (a cache file or folder) was just used: it is evicted last."""
    try:
        os.utime(path)
    except OSError:
        pass


def _entry_stats(path: Path) -> tuple[float, int, bool]:
    """(last used, bytes, in flight) of one cache entry (a file, or a folder and everything in it)."""
    now = time.time()
    if path.is_file():
        stat = path.stat()
        return stat.st_mtime, stat.st_size, path.suffix == ".tmp" and now - stat.st_mtime < IN_FLIGHT_SECONDS
    used, size, flight = path.stat().st_mtime, 0, False
    for root, _, files in os.walk(path):
        for name in files:
            try:
                stat = os.stat(os.path.join(root, name))
            except OSError:
                continue
            used, size = max(used, stat.st_mtime), size + stat.st_size
            flight |= name.endswith(".tmp") and now - stat.st_mtime < IN_FLIGHT_SECONDS
    return used, size, flight


def cache_entries(directory=None) -> list[tuple[float, int, Path]]:
    """Every entry of the cache as (last used, bytes, path), least recently used first."""
    root = default_cache_dir(directory)
    found = []
    for item in root.iterdir():
        children = item.iterdir() if item.name in GROUPED and item.is_dir() else [item]
        for entry in children:
            try:
                used, size, flight = _entry_stats(entry)
            except OSError:
                continue
            if not flight:
                found.append((used, size, entry))
    return sorted(found, key=lambda e: e[0])


def in_cache(path, directory=None) -> bool:
    """Whether ``path`` lies inside the cache folder."""
    root = default_cache_dir(directory).resolve()
    return root in Path(path).resolve().parents


def _belongs(entry: Path, kept: Path) -> bool:
    """Whether ``entry`` holds ``kept`` or goes with it (a table and its ``.parts`` folder)."""
    return entry == kept or entry in kept.parents or (entry.parent == kept.parent and entry.name.startswith(kept.name))


def enforce_limit(keep: Path | None = None, directory=None, limit: int | None | bool = False) -> list[Path]:
    """Remove least recently used entries until the cache fits its limit; returns what was removed.

    ``keep``: a path just written (its entry is never removed by this call).
    ``limit``: bytes (default: :func:`cache_limit_bytes`).
    """
    limit = cache_limit_bytes() if limit is False else limit
    if limit is None:
        return []
    root = default_cache_dir(directory).resolve()
    kept = None if keep is None else Path(keep).resolve()
    removed = []
    with _lock:
        entries = cache_entries(root)
        total = sum(size for _, size, _ in entries)
        for _, size, entry in entries:
            if total <= limit:
                break
            if kept is not None and _belongs(entry.resolve(), kept):
                continue
            try:
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
            except FileNotFoundError:
                pass
            except OSError:
                continue
            total -= size
            removed.append(entry)
    return removed
