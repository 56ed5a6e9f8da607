"""Stand-ins at the scale of the DP-HYPE paper's data sets (Table II), generated from data that ships with
scikit-learn or drawn from a fixed seed. They are stand-ins, not MNIST, Cifar-10 or Adult, and every
label that shows them says so.

- ``mnist-like``: 75,000 8 x 8 images (60,000 in the training pool after the 20 % test split, as MNIST's
  60,000), 10 classes: scikit-learn's 1,797 handwritten digits shifted by up to one pixel, rescaled in
  intensity and blurred with pixel noise. A linear model's good candidates reach about 90 %.
- ``cifar-like``: the same images with heavy noise and a random occluding block, so that even the best
  candidate stays near 50-60 % iid and lower under strong label skew (Cifar-10's regime in the paper).
- ``adult-like``: 50,000 census-like rows with 6 continuous and 8 categorical attributes (14 in all, as
  Adult), the categories one-hot encoded (74 columns), and a binary label with Adult's 24 % positive rate
  drawn from a logistic model with interactions.

The paper trains small CNNs and an MLP for 5 rounds of 5 local epochs (Cifar-10: 10). On this machine's
CPU the stand-ins train the project's softmax regression for ``STANDIN_ROUNDS`` rounds of
``STANDIN_EPOCHS`` local epochs (batch 64): per-client data sizes match the paper's, training is shorter.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

STANDINS = {
    "mnist-like": "MNIST-like stand-in (75,000 generated 8 x 8 digit images, 10 classes)",
    "cifar-like": "Cifar-10-like stand-in (75,000 noisy occluded 8 x 8 images, 10 classes)",
    "adult-like": "Adult-like stand-in (50,000 generated census rows, 14 mixed attributes one-hot, 2 classes)",
}
STANDIN_SIZES = {"mnist-like": 75_000, "cifar-like": 75_000, "adult-like": 50_000}
STANDIN_ROUNDS = 2     # federated averaging rounds (the paper: 5)
STANDIN_EPOCHS = 1     # local epochs per round (the paper: 5; Cifar-10: 10)
GENERATOR_SEED = 20_250_101
ADULT_CATEGORIES = (("workclass", 8), ("education", 16), ("marital-status", 7), ("occupation", 14),
                    ("relationship", 6), ("race", 5), ("sex", 2), ("native-country", 10))
ADULT_CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")


def is_standin(name: str) -> bool:
    return name in STANDINS


def load_standin(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (float64, a fresh copy) and labels of stand-in ``name`` (generated once per process)."""
    features, labels = _generate(name)
    return features.copy(), labels.copy()


@lru_cache(maxsize=3)
def _generate(name: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng((GENERATOR_SEED, list(STANDINS).index(name)))
    if name == "adult-like":
        return _adult_like(rng, STANDIN_SIZES[name])
    return _images(rng, STANDIN_SIZES[name], hard=name == "cifar-like")


def _images(rng: np.random.Generator, size: int, hard: bool) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    base = digits.images.astype(np.float32)                      # (1797, 8, 8), values 0..16
    pick = rng.integers(0, len(base), size)
    images = base[pick]
    # A one-pixel shift of a fifth of the images (half of them on the hard task).
    shift = rng.integers(-1, 2, size=(size, 2)) * (rng.random((size, 1)) < (0.5 if hard else 0.2))
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            rows = (shift[:, 0] == dy) & (shift[:, 1] == dx)
            if rows.any() and (dy or dx):
                images[rows] = np.roll(images[rows], (dy, dx), axis=(1, 2))
    images *= rng.uniform(0.7, 1.3, size=(size, 1, 1)).astype(np.float32)
    images += rng.normal(0.0, 3.0 if hard else 2.0, size=images.shape).astype(np.float32)
    if hard:   # a random 3 x 3 block of every image is covered
        corner = rng.integers(0, 6, size=(size, 2))
        ys, xs = np.arange(8)[None, :, None], np.arange(8)[None, None, :]
        block = ((ys >= corner[:, 0, None, None]) & (ys < corner[:, 0, None, None] + 3)
                 & (xs >= corner[:, 1, None, None]) & (xs < corner[:, 1, None, None] + 3))
        images[block] = rng.uniform(0, 16, size=int(block.sum())).astype(np.float32)
    return images.reshape(size, 64).astype(float), digits.target[pick].astype(int)


def _adult_like(rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
    latent = rng.normal(size=(size, 3))                          # education, wealth, work: correlated attributes
    age = np.clip(38 + 13 * latent[:, 1] * 0.5 + 10 * rng.normal(size=size), 17, 90)
    fnlwgt = np.exp(rng.normal(12.0, 0.5, size))
    edu_num = np.clip(np.round(10 + 2.5 * latent[:, 0]), 1, 16)
    gain = np.where(rng.random(size) < 0.08 + 0.05 * (latent[:, 1] > 1), np.exp(rng.normal(8, 1, size)), 0.0)
    loss = np.where(rng.random(size) < 0.05, np.exp(rng.normal(7.5, 0.3, size)), 0.0)
    hours = np.clip(np.round(40 + 8 * latent[:, 2] + 4 * rng.normal(size=size)), 1, 99)
    columns = [age, fnlwgt, edu_num, gain, loss, hours]
    score = (0.9 * latent[:, 0] + 0.8 * latent[:, 1] + 0.5 * latent[:, 2] + 0.03 * (age - 38)
             + 0.6 * (gain > 0) - 0.002 * (age - 45) ** 2 / 4)
    for index, (_, levels) in enumerate(ADULT_CATEGORIES):
        # Each category leans on one latent attribute, and each level shifts the label's odds.
        lean = latent[:, index % 3][:, None] * rng.normal(0, 0.8, levels)[None, :]
        logits = lean + rng.normal(0, 1, levels)[None, :]
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        chosen = (probs.cumsum(axis=1) > rng.random(size)[:, None]).argmax(axis=1)
        score += rng.normal(0, 0.35, levels)[chosen]
        columns.append(np.eye(levels)[chosen].T)
    continuous = np.column_stack(columns[:6])
    features = np.hstack([continuous] + [c.T for c in columns[6:]])
    noisy = score + rng.logistic(0, 0.6, size)
    labels = (noisy > np.quantile(noisy, 0.76)).astype(int)     # Adult: 24 % earn more than 50,000
    return features.astype(float), labels


def attribute_count(name: str) -> int:
    """Attributes before one-hot encoding (adult-like: 14, images: 64 pixels)."""
    return len(ADULT_CONTINUOUS) + len(ADULT_CATEGORIES) if name == "adult-like" else 64
