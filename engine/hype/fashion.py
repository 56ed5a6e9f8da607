"""Fashion-MNIST from the Debian package ``dataset-fashion-mnist``: real 28 x 28 images for DP-HYPE's data mode.

The paper (Sec. VI) used MNIST; no MNIST ships with the project, and Debian packages Zalando's Fashion-MNIST in
MNIST's format (70,000 grey 28 x 28 images of clothing, 10 classes). Every label that shows it says
Fashion-MNIST. The package puts its four gzipped IDX files in :data:`FASHION_MNIST_DIR`; the environment
variable :data:`FASHION_MNIST_ENV` points elsewhere (a folder holding the same four files, gzipped or not).

The package's 60,000 training and 10,000 test images are joined (70,000) and split as every DP-HYPE data set
is (:mod:`engine.hype.datasets`: a stratified 20 % test split, 56,000 in the training pool; the paper's MNIST
pool held 60,000). Each image is reduced by 2 x 2 average pooling to 14 x 14 = 196 features (the models train
on every client x candidate at once; the full 784 pixels would cost four times as much), for both models.
"""

from __future__ import annotations

import gzip
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.validation import ConfigError

NAME = "fashion-mnist"
LABEL = "Fashion-MNIST (70,000 real 28 x 28 clothing images pooled to 14 x 14, 10 classes; the paper used MNIST)"
PACKAGE = "dataset-fashion-mnist"
FASHION_MNIST_DIR = Path("/usr/share/datasets/fashion-mnist")      # where the Debian package puts its files
FASHION_MNIST_ENV = "DPBO_FASHION_MNIST_DIR"
FILES = (("train-images-idx3-ubyte", "train-labels-idx1-ubyte"), ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"))
SIZE = 70_000
POOL = 2           # 2 x 2 average pooling: 28 x 28 -> 14 x 14
IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def fashion_dir(environ=None) -> Path:
    """The folder Fashion-MNIST is read from: ``$DPBO_FASHION_MNIST_DIR``, else the Debian package's."""
    environ = os.environ if environ is None else environ
    value = environ.get(FASHION_MNIST_ENV)
    return Path(value) if value else FASHION_MNIST_DIR


def _file(folder: Path, stem: str) -> Path | None:
    for name in (stem + ".gz", stem):
        if (folder / name).is_file():
            return folder / name
    return None


def available(folder: Path | None = None) -> bool:
    """Whether all four IDX files are there."""
    folder = fashion_dir() if folder is None else Path(folder)
    return all(_file(folder, stem) is not None for pair in FILES for stem in pair)


def read_idx(path: Path) -> np.ndarray:
    """An IDX array (gzipped when the name ends in .gz): two zero bytes, the type code, the number of
    dimensions, each dimension as a big-endian uint32, then the values."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as handle:
        raw = handle.read()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in IDX_TYPES:
        raise ConfigError(f"{Path(path).name} is not an IDX file (its first four bytes are not an IDX header).",
                          "dataset")
    dims = raw[3]
    shape = tuple(int(d) for d in np.frombuffer(raw, ">u4", count=dims, offset=4))
    dtype = np.dtype(IDX_TYPES[raw[2]])
    count = int(np.prod(shape)) if shape else 0
    if len(raw) != 4 + 4 * dims + count * dtype.itemsize:
        raise ConfigError(f"{Path(path).name} holds {len(raw)} bytes, not the {4 + 4 * dims + count * dtype.itemsize} "
                          f"its IDX header announces (a truncated file).", "dataset")
    return np.frombuffer(raw, dtype, count=count, offset=4 + 4 * dims).reshape(shape)


def pool(images: np.ndarray, size: int = POOL) -> np.ndarray:
    """(N, H, W) images averaged over ``size`` x ``size`` blocks, flattened: (N, H/size * W/size) float64."""
    n, h, w = images.shape
    blocks = images.reshape(n, h // size, size, w // size, size).astype(float)
    return blocks.mean(axis=(2, 4)).reshape(n, -1)


def load_fashion_mnist(folder: Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Features (N, 196) float64 (pooled pixels, 0..255) and labels 0..9, a fresh copy; the package's training
    images first, then its test images. Raises ConfigError with one sentence when the files are absent."""
    features, labels = _load(fashion_dir() if folder is None else Path(folder))
    return features.copy(), labels.copy()


@lru_cache(maxsize=2)
def _load(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    if not available(folder):
        raise ConfigError(f"Fashion-MNIST is not installed: install the Debian package {PACKAGE} "
                          f"(apt-get install {PACKAGE}), or set {FASHION_MNIST_ENV} to a folder holding its four "
                          "IDX files.", "dataset")
    features, labels = [], []
    for image_stem, label_stem in FILES:
        images = read_idx(_file(folder, image_stem))
        marks = read_idx(_file(folder, label_stem))
        if images.ndim != 3 or marks.ndim != 1 or len(images) != len(marks):
            raise ConfigError(f"{image_stem} and {label_stem} do not hold one label per 2-D image.", "dataset")
        features.append(pool(images))
        labels.append(marks.astype(int))
    return np.vstack(features), np.concatenate(labels)
