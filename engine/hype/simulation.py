"""Simulated clients of the paper's Sec. V-B: local losses drawn per client and candidate.

Good candidates have local loss N(0, sigma_loss^2), bad ones N(1,
sigma_loss^2), independently for every client, candidate and repetition.
The good candidates sit at fixed random positions (drawn from the seed), so
the winner histogram shows them apart without favouring low indices.

Repetitions are processed in blocks of a size fixed by (n, p) alone, each
block with its own generator seeded by (seed, 1, block): the results do not
depend on how often a caller asks for partial results, and the same seed
gives the same losses and the same standard-normal noise whatever epsilon or
k, so curves over epsilon or k compare on common random numbers.
"""

from __future__ import annotations

import numpy as np

BLOCK_ELEMENTS = 2_500_000  # losses per block (reps x n x p), ~10 MB of float32
MAX_BLOCK = 200


def block_length(clients: int, candidates: int) -> int:
    """Repetitions per block for n clients and p candidates."""
    return int(max(1, min(MAX_BLOCK, BLOCK_ELEMENTS // (clients * candidates))))


def blocks(repetitions: int, length: int) -> list[tuple[int, int]]:
    """(block index, repetitions in it) covering ``repetitions``."""
    out, done, index = [], 0, 0
    while done < repetitions:
        size = min(length, repetitions - done)
        out.append((index, size))
        done += size
        index += 1
    return out


def block_rng(seed: int, index: int) -> np.random.Generator:
    return np.random.default_rng((int(seed), 1, int(index)))


def good_positions(candidates: int, good: int, seed: int) -> np.ndarray:
    """Boolean mask of the good candidates: ``good`` positions drawn once from the seed."""
    mask = np.zeros(candidates, dtype=bool)
    mask[np.random.default_rng((int(seed), 0)).choice(candidates, size=good, replace=False)] = True
    return mask


def draw_standard(rng: np.random.Generator, reps: int, clients: int, candidates: int) -> np.ndarray:
    """Standard normals (reps, n, p) in float32; a client's local losses are ``sigma_loss * z + [bad]``."""
    return rng.standard_normal((reps, clients, candidates), dtype=np.float32)


def _sortable(values: np.ndarray, bits: int) -> tuple[np.ndarray, int]:
    """Integer keys ordered as ``values`` with the candidate index in the low ``bits`` bits."""
    if values.dtype == np.float32:
        keys = values.view(np.int32)
        full = np.int32(0x7FFFFFFF)
        shift = 31
    else:
        keys = values.view(np.int64)
        full = np.int64(0x7FFFFFFFFFFFFFFF)
        shift = 63
    # Negative floats sort in reverse as integers: flip their magnitude bits.
    keys ^= (keys >> shift) & full
    low = keys.dtype.type((1 << bits) - 1)
    keys &= ~low
    keys |= np.arange(values.shape[-1], dtype=keys.dtype)
    return keys, low


def top_ids(z: np.ndarray, good: np.ndarray, sigma_loss: float, kmax: int, ordered: bool) -> np.ndarray:
    """Every client's ``kmax`` smallest local losses: candidate indices (reps, n, kmax).

    Ordered best first when ``ordered``, else in any order. The ranking of
    ``sigma_loss * z + [bad]`` equals that of ``z + [bad] / sigma_loss``. It
    is computed by sorting integer keys whose high bits are the float's bits
    (order-preserving) and whose low bits are the candidate index: numpy sorts
    integers with SIMD several times faster than it argsorts floats. With p <=
    128 the keys are 32-bit and the index takes 7 of float32's 24 mantissa
    bits, so losses closer than 2^-17 (relative) are ranked by index instead of
    by value; with larger p they are 64-bit with 52-bit mantissas.
    """
    p = z.shape[-1]
    bits = max(1, int(np.ceil(np.log2(p))))
    offset = (~good).astype(np.float32) / np.float32(sigma_loss)
    if bits <= 7:
        values = z + offset
    else:
        values = z.astype(np.float64) + offset.astype(np.float64)
    keys, low = _sortable(values, bits)
    if kmax >= p or ordered:
        keys.sort(axis=-1)
        chosen = keys[..., :kmax]
    else:
        chosen = np.partition(keys, kmax - 1, axis=-1)[..., :kmax]
    return (chosen & low).astype(np.intp)


def survivors_mask(rng: np.random.Generator, reps: int, clients: int, dropped: int) -> np.ndarray | None:
    """Which clients report in each repetition: ``dropped`` of them, uniformly at random, do not.

    None when nobody drops (saves the draw and the weighting).
    """
    if dropped <= 0:
        return None
    keys = rng.random((reps, clients))
    threshold = np.partition(keys, dropped - 1, axis=1)[:, dropped - 1:dropped]
    return keys > threshold


def clean_votes(ids: np.ndarray, ks, candidates: int, survivors: np.ndarray | None = None) -> np.ndarray:
    """Summed clean votes for several k at once: (len(ks), reps, p) integers.

    ``ids`` (reps, n, kmax) are the clients' best candidates from
    :func:`top_ids`, ordered best first when ``ks`` holds more than one k < p
    (the k-sets are nested, so the votes for every k are cumulative counts
    over the positions). ``survivors`` (reps, n) drops the votes of clients
    that did not report. k >= p: every reporting client votes for everything.
    """
    reps, clients, kmax = ids.shape
    p = int(candidates)
    ks = [int(k) for k in ks]
    out = np.empty((len(ks), reps, p), dtype=np.int64)
    reporting = clients if survivors is None else survivors.sum(axis=1)
    partial = sorted({k for k in ks if k < p})
    rep = np.arange(reps)[:, None, None]
    weights = None
    by_k = {}
    if len(partial) == 1:
        k = partial[0]
        chosen = ids[..., :k]
        if survivors is not None:
            weights = np.broadcast_to(survivors[:, :, None], chosen.shape).ravel()
        by_k[k] = np.bincount((rep * p + chosen).ravel(), weights=weights, minlength=reps * p).reshape(reps, p)
    elif partial:
        top = partial[-1]
        chosen = ids[..., :top]
        position = np.arange(top)[None, None, :]
        if survivors is not None:
            weights = np.broadcast_to(survivors[:, :, None], chosen.shape).ravel()
        counts = np.bincount(((position * reps + rep) * p + chosen).ravel(), weights=weights,
                             minlength=top * reps * p).reshape(top, reps, p)
        cumulative = np.cumsum(counts, axis=0)
        by_k = {k: cumulative[k - 1] for k in partial}
    for index, k in enumerate(ks):
        if k >= p:
            out[index] = np.broadcast_to(np.reshape(reporting, (-1, 1)), (reps, p))
        else:
            out[index] = by_k[k]
    return out
