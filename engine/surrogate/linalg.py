"""Small dense linear algebra for stacks of K matrices (one per agent model).

numpy's ``linalg`` functions accept stacks but miss two pieces the Gaussian
process layer needs: a Cholesky factorisation that survives the odd nearly
singular matrix (numpy raises for the whole stack when one member fails) and
triangular solves (``np.linalg.solve`` would redo an LU factorisation of a
triangular matrix, about 3x the cost). The solves below loop over the n rows
(n <= ~100) with vectorised work over the K models, which at K in the
thousands is several times faster than one LAPACK call per model.
"""

from __future__ import annotations

import numpy as np

try:    # np.einsum without its Python layer: the solves call it once per row, thousands of times
    from numpy._core.multiarray import c_einsum as _einsum
except ImportError:     # pragma: no cover - other numpy versions
    _einsum = np.einsum

# Relative jitter tried, in order, on the diagonal of a model whose factorisation fails.
JITTERS = (1e-10, 1e-8, 1e-6, 1e-4)


def safe_cholesky(A: np.ndarray) -> np.ndarray:
    """Lower Cholesky factors of a stack (K, n, n) of symmetric positive (semi)definite matrices.

    A model whose matrix is not numerically positive definite gets a jitter
    added to its diagonal (relative to its mean diagonal, growing through
    :data:`JITTERS`) instead of failing the whole stack.
    """
    try:
        return np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        pass
    out = np.empty_like(A)
    scale = np.maximum(np.abs(np.einsum("kii->k", A)) / A.shape[-1], 1e-300)
    eye = np.eye(A.shape[-1])
    # Rare path: factor one model at a time, so only the failing ones get jitter.
    for k in range(A.shape[0]):
        for jitter in (0.0,) + JITTERS:
            try:
                out[k] = np.linalg.cholesky(A[k] + jitter * scale[k] * eye)
                break
            except np.linalg.LinAlgError:
                continue
        else:
            raise np.linalg.LinAlgError("a covariance matrix stayed singular after adding jitter")
    return out


def solve_lower(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve L x = b for lower-triangular L (K, n, n) and b (K, n) or (K, n, s)."""
    vector = b.ndim == 2
    B = b[:, :, None] if vector else b
    x = np.empty(B.shape, dtype=np.result_type(L, B))
    diag = np.einsum("kii->ki", L)
    for i in range(L.shape[1]):
        acc = B[:, i]
        if i:
            acc = acc - _einsum("kj,kjs->ks", L[:, i, :i], x[:, :i])
        x[:, i] = acc / diag[:, i, None]
    return x[:, :, 0] if vector else x


def solve_lower_transposed(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve L^T x = b for lower-triangular L (K, n, n) and b (K, n) or (K, n, s)."""
    vector = b.ndim == 2
    B = b[:, :, None] if vector else b
    n = L.shape[1]
    x = np.empty(B.shape, dtype=np.result_type(L, B))
    diag = np.einsum("kii->ki", L)
    for i in range(n - 1, -1, -1):
        acc = B[:, i]
        if i < n - 1:
            acc = acc - _einsum("kj,kjs->ks", L[:, i + 1:, i], x[:, i + 1:])
        x[:, i] = acc / diag[:, i, None]
    return x[:, :, 0] if vector else x


def cho_solve(L: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve (L L^T) x = b given the lower Cholesky factors L."""
    return solve_lower_transposed(L, solve_lower(L, b))


def log_det_from_cholesky(L: np.ndarray) -> np.ndarray:
    """log |L L^T| for every model, (K,)."""
    return 2.0 * np.log(np.einsum("kii->ki", L)).sum(axis=1)


def append_inverse(buffer: np.ndarray, n: int, column: np.ndarray, corner: np.ndarray) -> None:
    """Grow an inverse by one bordered row and column, in place.

    ``buffer[:, :n, :n]`` holds A^-1 (K models); afterwards ``buffer[:, :n+1, :n+1]``
    holds the inverse of [[A, c], [c^T, d]] for c = ``column`` (K, n), d = ``corner`` (K,).
    Block inversion with the Schur complement s = d - c^T A^-1 c costs O(n^2) per
    model instead of a fresh O(n^3) inversion when one observation is added.

    The models are updated :data:`UPDATE_CHUNK` at a time, so each chunk's (k, n, n) temporary stays in
    the cache (three times faster at thousands of models; every number is the same).
    """
    for lo in range(0, buffer.shape[0], UPDATE_CHUNK):
        part = slice(lo, lo + UPDATE_CHUNK)
        _append_inverse(buffer[part], n, column[part], corner[part])


UPDATE_CHUNK = 128


def _append_inverse(buffer: np.ndarray, n: int, column: np.ndarray, corner: np.ndarray) -> None:
    inverse = buffer[:, :n, :n]
    u = np.einsum("kij,kj->ki", inverse, column)
    schur = corner - np.einsum("ki,ki->k", column, u)
    scaled = u / schur[:, None]
    inverse += u[:, :, None] * scaled[:, None, :]
    buffer[:, :n, n] = -scaled
    buffer[:, n, :n] = -scaled
    buffer[:, n, n] = 1.0 / schur
