"""A disk cache of numpy arrays keyed by what they were computed from.

The key is a sha256 of a JSON description of the computation (task name,
data checksum, candidate grid, code version, ...): change any part and the key
changes, so a table is never silently stale. Files are written to a temporary
name and renamed into place, so an interrupted write never leaves a file a
later run would trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

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


def load_arrays(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays stored at ``path``, or None if the file is missing or unreadable."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile):  # a truncated .npz is not a zip any more
        return None


def cached_arrays(kind: str, description: dict, compute: Callable[[], dict[str, np.ndarray]],
                  directory=None) -> dict[str, np.ndarray]:
    """Load the arrays for ``description`` from the cache, computing and storing them if absent."""
    path = cache_path(kind, description, directory)
    arrays = load_arrays(path)
    if arrays is None:
        arrays = compute()
        save_arrays_atomic(path, arrays)
    return arrays
