"""Data behind the hyperparameter-tuning tasks: the landmine file and the
scikit-learn bundled sets, plus the splits every task shares.

The landmine file is never shipped with the project: it is read from
``<data dir>/landmine/LandmineData.mat`` (:func:`engine.paths.data_dir`: ``--data-dir``, else
``DPBO_DATA_DIR``, else ``data/``)
and checked against its published sha256 before use, so a truncated or
different file is refused instead of silently giving other scores.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from engine.objectives.base import DatasetUnavailable
from engine.hosting import is_hosted, where
from engine.paths import data_dir as default_data_dir
from engine.validation import ConfigError

FETCH_MAX_BYTES = 32 * 2**20      # a download read at most (the landmine file is about 1 MB, its zip less)
LANDMINE_SHA256 = "2163ab20a80e33a8b65593c48cf283c540599dcb291105e63fa4af2ce24c2bea"
LANDMINE_RELPATH = Path("landmine") / "LandmineData.mat"
LANDMINE_FIELDS = 29
# The address the papers cite (DP-FTS-DE, App. B.2.1, footnote 15): a zip holding the .mat file.
LANDMINE_URL = "http://www.ee.duke.edu/~lcarin/LandmineData.zip"


# --------------------------------------------------------------------------- landmine file

def file_sha256(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def landmine_path(data_dir: str | os.PathLike | None = None) -> Path:
    """Where the landmine file is expected: ``<data dir>/landmine/LandmineData.mat``."""
    return default_data_dir(data_dir) / LANDMINE_RELPATH


def landmine_help(path: Path, suggest_fetch: bool = True) -> str:
    """The sentence telling a person how to make the landmine data available (no server path when hosted)."""
    if is_hosted():
        return "The host of this explorer can install it (DPBO_DATA_DIR/landmine/LandmineData.mat)."
    where = (f"Put LandmineData.mat at {path} (that is DPBO_DATA_DIR/landmine/LandmineData.mat, "
             f"or D/landmine/LandmineData.mat with --data-dir D)")
    if suggest_fetch:
        return where + (f", or run `python -m engine data fetch landmine` where a network is available "
                        f"(it downloads {LANDMINE_URL}).")
    return where + f"; it is in {LANDMINE_URL} (or give another address with --url)."


def check_landmine_file(data_dir: str | os.PathLike | None = None) -> Path:
    """The verified landmine file path; raises :class:`DatasetUnavailable` when missing or corrupt."""
    path = landmine_path(data_dir)
    if not path.is_file():
        raise DatasetUnavailable(f"The landmine data set is unavailable: {where(path, 'it is not installed here')}"
                                 f"{'' if is_hosted() else ' does not exist'}. "
                                 + landmine_help(path), "dataset")
    digest = file_sha256(path)
    if digest != LANDMINE_SHA256:
        raise DatasetUnavailable(f"The landmine data set is unavailable: {where(path, 'the installed file')} "
                                 f"does not match the published "
                                 f"sha256 {LANDMINE_SHA256[:16]}... (corrupt or a different file). "
                                 + landmine_help(path), "dataset")
    return path


def load_landmine(data_dir: str | os.PathLike | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """The 29 landmine fields as ``[(features (n_i, 9) float, labels (n_i,) int 0/1), ...]``.

    Raises :class:`DatasetUnavailable` (a ConfigError) when the file is missing or
    its sha256 differs from :data:`LANDMINE_SHA256`.
    """
    import scipy.io

    path = check_landmine_file(data_dir)
    mat = scipy.io.loadmat(path)
    features, labels = mat["feature"], mat["label"]
    return [(np.asarray(features[0, i], dtype=float), np.asarray(labels[0, i]).ravel().astype(int))
            for i in range(features.shape[1])]


def _extract_landmine(payload: bytes) -> bytes:
    """The .mat bytes from a download: either the file itself or a zip holding it."""
    if payload[:4] != b"PK\x03\x04":
        return payload
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        members = [info for info in archive.infolist() if info.filename.endswith("LandmineData.mat")]
        if not members or members[0].file_size > FETCH_MAX_BYTES:
            return b""          # no such member, or one that unpacks to more than the file: not the file
        return archive.read(members[0])


def fetch_landmine(data_dir: str | os.PathLike | None = None, url: str = LANDMINE_URL, *,
                   opener: Callable = urllib.request.urlopen, timeout: float = 30.0) -> dict:
    """Download the landmine file into the data directory and verify its sha256.

    A file already present with the right checksum is kept. The download is
    written to a temporary name and renamed into place only once verified, so a
    failed or corrupt download never replaces anything. Raises
    :class:`DatasetUnavailable` with the place to put the file by hand when the
    download fails (e.g. no network) or does not match the checksum.

    Returns a dict ``{"status": "present" | "downloaded", "path": ..., "sha256": ...}``.
    """
    path = landmine_path(data_dir)
    if path.is_file() and file_sha256(path) == LANDMINE_SHA256:
        return {"status": "present", "path": str(path), "sha256": LANDMINE_SHA256}
    try:
        with opener(url, timeout=timeout) as response:
            payload = response.read(FETCH_MAX_BYTES + 1)     # file:///dev/zero or an endless server: bounded
    except (urllib.error.URLError, OSError, ValueError) as err:
        reason = getattr(err, "reason", None) or err
        raise DatasetUnavailable(f"Could not download the landmine data from {url} ({reason}). "
                                 + landmine_help(path, suggest_fetch=False), "dataset") from None
    if len(payload) > FETCH_MAX_BYTES:
        raise DatasetUnavailable(f"The download from {url} is larger than {FETCH_MAX_BYTES // 2**20} MB, far more "
                                 "than the landmine file; nothing was written. "
                                 + landmine_help(path, suggest_fetch=False), "dataset")
    content = _extract_landmine(payload)
    if hashlib.sha256(content).hexdigest() != LANDMINE_SHA256:
        raise DatasetUnavailable(f"The file downloaded from {url} does not match the published sha256 of "
                                 f"LandmineData.mat; nothing was written. "
                                 + landmine_help(path, suggest_fetch=False), "dataset")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
    except OSError as err:
        raise ConfigError(f"Could not write {path} ({err.strerror or err}); choose a writable --data-dir.",
                          "data_dir") from None
    return {"status": "downloaded", "path": str(path), "sha256": LANDMINE_SHA256}


# --------------------------------------------------------------------------- bundled scikit-learn sets

def array_digest(*arrays: np.ndarray) -> str:
    """sha256 over the bytes, dtypes and shapes of arrays: the cache key of in-memory data."""
    digest = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


# --------------------------------------------------------------------------- splits

@dataclass(frozen=True, eq=False)
class SplitData:
    """One agent's training and validation examples."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_valid: np.ndarray
    y_valid: np.ndarray


def stratified_half_split(labels: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Split indices in half within every class: ``ceil(n_c / 2)`` of class c train, the rest validate.

    Returns sorted ``(train, validation)`` index arrays. The same generator
    state gives the same split.
    """
    labels = np.asarray(labels)
    train, valid = [], []
    for label in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == label))
        cut = (len(members) + 1) // 2
        train.append(members[:cut])
        valid.append(members[cut:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(valid))


def dirichlet_label_partition(labels: np.ndarray, n_agents: int, alpha: float, rng: np.random.Generator,
                              min_per_class: int = 2) -> list[np.ndarray]:
    """Split examples among agents by per-class Dirichlet(alpha) proportions (as DP-HYPE, Sec. VI).

    Every agent is first dealt ``min_per_class`` random examples of every class
    (so it can train and validate on every class); the rest of each class is
    divided among the agents in proportions drawn from Dirichlet(alpha, ...,
    alpha). Small alpha: skewed label mixes and sizes; large alpha: close to iid.

    Returns one sorted index array per agent; together they cover every example once.
    """
    labels = np.asarray(labels)
    classes = np.unique(labels)
    smallest = min(int(np.sum(labels == c)) for c in classes)
    if n_agents * min_per_class > smallest:
        raise ConfigError(f"N must be at most {smallest // min_per_class} for this data set "
                          f"(every agent needs {min_per_class} examples of each class), got {n_agents}.", "agents")
    shares: list[list[np.ndarray]] = [[] for _ in range(n_agents)]
    for label in classes:
        members = rng.permutation(np.flatnonzero(labels == label))
        floor, rest = members[:n_agents * min_per_class], members[n_agents * min_per_class:]
        for agent in range(n_agents):
            shares[agent].append(floor[agent * min_per_class:(agent + 1) * min_per_class])
        proportions = rng.dirichlet(np.full(n_agents, float(alpha)))
        cuts = np.round(np.cumsum(proportions)[:-1] * len(rest)).astype(int)
        for agent, part in enumerate(np.split(rest, cuts)):
            shares[agent].append(part)
    return [np.sort(np.concatenate(parts)) for parts in shares]


def agent_splits(features: np.ndarray, labels: np.ndarray, n_agents: int, alpha: float, seed: int,
                 min_per_class: int, *, standardise: bool = False) -> list[SplitData]:
    """Dirichlet(alpha) label shares, each split in half (stratified) into training and validation.

    With ``standardise`` every agent scales its inputs by its own training
    mean and standard deviation (as the paper does for logistic regression).
    """
    shares = dirichlet_label_partition(labels, n_agents, alpha, np.random.default_rng((seed, 0)), min_per_class)
    agents = []
    for index, share in enumerate(shares):
        train, valid = stratified_half_split(labels[share], np.random.default_rng((seed, 1, index)))
        x_train, x_valid = features[share][train], features[share][valid]
        if standardise:
            mean, std = x_train.mean(axis=0), x_train.std(axis=0)
            std[std == 0] = 1.0
            x_train, x_valid = (x_train - mean) / std, (x_valid - mean) / std
        agents.append(SplitData(x_train, labels[share][train], x_valid, labels[share][valid]))
    return agents
