"""Evaluating many sampled functions on a candidate set, fast when the set is a grid.

A Thompson sample is maximised over the candidates: every agent's own sampled
function must be evaluated at every candidate, in every iteration. Two sums
cover both samplers of :mod:`engine.surrogate.thompson`:

- a random-feature sum ``sum_m w_m cos(s_m . x + b_m)`` with fresh frequencies
  per model, and
- a kernel sum ``sum_j alpha_j exp(-|x - x_j|^2 / (2 l^2))`` over a model's
  observations (the exact GP update of a pathwise sample).

:class:`GridCandidates` (the tables of every task are regular grids: 1000 points
in 1-D, 50 x 50 in 2-D, 16^3 in 3-D) separates both sums along the grid's
axes. ``cos(a + b) = cos a cos b - sin a sin b`` turns the feature sum over a
2-D grid into one matrix product of (n0 x 2M) by (2M x n1), so trigonometric
functions are evaluated on n0 + n1 points instead of n0 n1; a long 1-D axis is
cut into a coarse and a fine part to the same effect. The kernel sum factors
the same way because the SE kernel is a product over dimensions.
:class:`PointCandidates` evaluates both sums directly (any point set, e.g. the
fresh uniform candidates of a continuous domain).

Trigonometric factors are computed in single precision: arguments stay below
about 10^3 radians, where float32 keeps the phase to 1e-4, far below what
matters for an argmax of a random function, at a tenth of the cost.
"""

from __future__ import annotations

import numpy as np

# A 1-D axis longer than this is cut into a coarse and a fine part.
SPLIT_AXIS_ABOVE = 64


class CandidateSet:
    """C points of [0, 1]^D and the two sums over them, for B models at once."""

    points: np.ndarray

    @property
    def size(self) -> int:
        return self.points.shape[0]

    @property
    def dim(self) -> int:
        return self.points.shape[1]

    def feature_sum(self, freq: np.ndarray, phase: np.ndarray, weight: np.ndarray, *,
                    norm_squared: bool = False):
        """sum_m weight_m cos(freq_m . x + phase_m) at every candidate: (B, M, D), (B, M), (B, M) -> (B, C).

        With ``norm_squared`` also returns sum_m cos^2(freq_m . x + phase_m), (B, C).
        """
        raise NotImplementedError

    def kernel_sum(self, X: np.ndarray, alpha: np.ndarray, lengthscale: np.ndarray) -> np.ndarray:
        """sum_j alpha_j exp(-|x - X_j|^2 / (2 l^2)) at every candidate: (B, n, D), (B, n), (B,) -> (B, C)."""
        raise NotImplementedError


class PointCandidates(CandidateSet):
    """Any point set: every sum is evaluated point by point."""

    def __init__(self, points: np.ndarray):
        self.points = np.asarray(points, dtype=float)

    def feature_sum(self, freq, phase, weight, *, norm_squared=False):
        angle = np.matmul(self.points.astype(np.float32), np.swapaxes(freq, 1, 2).astype(np.float32))
        angle += phase[:, None, :].astype(np.float32)
        cos = np.cos(angle)                                           # (B, C, M)
        value = np.matmul(cos, weight[:, :, None].astype(np.float32))[:, :, 0].astype(float)
        if norm_squared:
            return value, np.einsum("bcm,bcm->bc", cos, cos).astype(float)
        return value

    def kernel_sum(self, X, alpha, lengthscale):
        diff = self.points[None, :, None, :] - X[:, None, :, :]
        sq = np.einsum("bcnd,bcnd->bcn", diff, diff)
        weights = np.exp(sq * (-0.5 / lengthscale ** 2)[:, None, None])
        return np.matmul(weights, alpha[:, :, None])[:, :, 0]


class GridCandidates(CandidateSet):
    """The Cartesian product of one sorted axis per dimension, last dimension varying fastest."""

    def __init__(self, axes):
        self.axes = [np.asarray(a, dtype=float) for a in axes]
        mesh = np.meshgrid(*self.axes, indexing="ij")
        self.points = np.stack([m.ravel() for m in mesh], axis=1)
        self.shape = tuple(len(a) for a in self.axes)
        self._virtual = self._virtual_axes()
        sizes = [len(v) for v, _ in self._virtual]
        # Split the virtual axes into two groups of balanced size: the matrix product joins them.
        best = min(range(1, len(sizes)) if len(sizes) > 1 else [1],
                   key=lambda k: np.prod(sizes[:k]) + np.prod(sizes[k:]))
        self._split = best

    @classmethod
    def detect(cls, points: np.ndarray) -> "GridCandidates | None":
        """The grid whose points are exactly ``points`` in the same order, or None."""
        points = np.asarray(points, dtype=float)
        if points.ndim != 2 or not len(points):
            return None
        axes = [np.unique(points[:, d]) for d in range(points.shape[1])]
        if int(np.prod([len(a) for a in axes])) != len(points):
            return None
        grid = cls(axes)
        return grid if np.array_equal(grid.points, points) else None

    def _virtual_axes(self):
        """(offsets, dimension) per virtual axis; flat candidate index is row-major over them."""
        if len(self.axes) == 1 and len(self.axes[0]) > SPLIT_AXIS_ABOVE:
            axis = self.axes[0]
            step = np.diff(axis)
            if np.allclose(step, step[0], rtol=1e-9, atol=0):
                # x_i = x_0 + h i with i = fine * a + b: a coarse axis (x_0 + h fine a) and a fine one (h b).
                n = len(axis)
                fine = int(np.ceil(np.sqrt(n)))
                coarse = -(-n // fine)
                h = float(step[0])
                return [(axis[0] + h * fine * np.arange(coarse), 0), (h * np.arange(fine), 0)]
        return [(axis, d) for d, axis in enumerate(self.axes)]

    # ------------------------------------------------------------------ feature sums
    def _group_angles(self, freq, phase, members):
        """sum over the group's virtual axes of freq . offset (+ phase): (B, M, n_group), float32."""
        B, M, _ = freq.shape
        angle = np.zeros((B, M, 1), dtype=np.float32)
        if phase is not None:
            angle += phase[:, :, None].astype(np.float32)
        for offsets, d in members:
            part = freq[:, :, d, None].astype(np.float32) * offsets.astype(np.float32)[None, None, :]
            angle = (angle[:, :, :, None] + part[:, :, None, :]).reshape(B, M, -1)
        return angle

    def feature_sum(self, freq, phase, weight, *, norm_squared=False):
        first, second = self._virtual[:self._split], self._virtual[self._split:]
        a = self._group_angles(freq, None, first)
        b = self._group_angles(freq, phase, second)
        B, M, na = a.shape
        nb = b.shape[2]
        # sum_m w cos(a + b) = [cos a; sin a]^T [w cos b; -w sin b]: one product with inner size 2M
        # (twice as efficient as two of size M). Factors are (B, 2M, n): each half is one contiguous
        # block per model, so trigonometric values are written straight into place.
        left = np.empty((B, 2 * M, na), dtype=np.float32)
        right = np.empty((B, 2 * M, nb), dtype=np.float32)
        cos_a, sin_a = np.cos(a, out=left[:, :M]), np.sin(a, out=left[:, M:])
        cos_b, sin_b = np.cos(b, out=right[:, :M]), np.sin(b, out=right[:, M:])
        if norm_squared:
            # cos^2 t = (1 + cos 2t) / 2, with cos 2(a + b) from the double-angle factors.
            left2 = self._double_angle(cos_a, sin_a, 1.0)
            right2 = self._double_angle(cos_b, sin_b, -1.0)
            double = self._flat(np.matmul(np.swapaxes(left2, 1, 2), right2))
        w = weight[:, :, None].astype(np.float32)
        cos_b *= w
        sin_b *= -w
        value = self._flat(np.matmul(np.swapaxes(left, 1, 2), right))
        if not norm_squared:
            return value
        return value, 0.5 * M + 0.5 * double

    @staticmethod
    def _double_angle(cos, sin, sign):
        """[cos 2t; sign sin 2t] from cos t and sin t, (B, 2M, n)."""
        B, M, n = cos.shape
        out = np.empty((B, 2 * M, n), dtype=np.float32)
        c2, s2 = out[:, :M], out[:, M:]
        np.multiply(cos, cos, out=c2)
        c2 *= 2.0
        c2 -= 1.0
        np.multiply(sin, cos, out=s2)
        s2 *= 2.0 * sign
        return out

    def _flat(self, values: np.ndarray) -> np.ndarray:
        B = values.shape[0]
        return values.reshape(B, -1)[:, :self.size].astype(float)

    # ------------------------------------------------------------------ kernel sums
    def kernel_sum(self, X, alpha, lengthscale):
        if len(self._virtual) == 2 and len(self.axes) == 1:
            on_grid = self._on_long_axis(X)
            if on_grid is not None:
                return self._convolve(on_grid, alpha, lengthscale)
        scale = (-0.5 / lengthscale ** 2)[:, None, None]
        columns = []
        for d, axis in enumerate(self.axes):
            diff = axis[None, :, None] - X[:, None, :, d]                 # (B, n_d, n)
            columns.append(np.exp(diff * diff * scale))
        B, n = alpha.shape
        # Fold every axis but the last into one (their kernel factors multiply), then one product with the last.
        folded = columns[0] * alpha[:, None, :]
        for col in columns[1:-1]:
            folded = (folded[:, :, None, :] * col[:, None, :, :]).reshape(B, -1, n)
        if len(columns) == 1:
            return folded.sum(axis=2)
        return np.matmul(folded, np.swapaxes(columns[-1], 1, 2)).reshape(B, -1)


    def _on_long_axis(self, X) -> np.ndarray | None:
        """Grid indices of points X (B, n, 1) on a long evenly spaced axis, or None if one is off the grid."""
        axis = self.axes[0]
        h = (axis[-1] - axis[0]) / (len(axis) - 1)
        index = np.rint((X[:, :, 0] - axis[0]) / h).astype(int)
        if index.min() < 0 or index.max() >= len(axis) or not np.allclose(axis[index], X[:, :, 0], atol=1e-9 * h):
            return None
        return index

    def _convolve(self, index, alpha, lengthscale):
        """sum_j alpha_j k(x - x_j) on a long even 1-D grid: the weights placed on the grid, convolved
        with the kernel by FFT (n log n per model instead of an exp per candidate and observation)."""
        axis = self.axes[0]
        n_points = len(axis)
        h = (axis[-1] - axis[0]) / (n_points - 1)
        size = 1 << int(np.ceil(np.log2(2 * n_points)))
        B = alpha.shape[0]
        spikes = np.zeros((B, size))
        np.add.at(spikes, (np.arange(B)[:, None], index), alpha)
        lags = np.minimum(np.arange(size), size - np.arange(size)) * h       # circular distance, exact below n
        kernel = np.exp(-0.5 * (lags[None, :] / lengthscale[:, None]) ** 2)
        out = np.fft.irfft(np.fft.rfft(spikes, axis=1) * np.fft.rfft(kernel, axis=1), n=size, axis=1)
        return out[:, :n_points]


def candidate_set(points: np.ndarray) -> CandidateSet:
    """A :class:`GridCandidates` when ``points`` form a grid, else :class:`PointCandidates`."""
    return GridCandidates.detect(points) or PointCandidates(points)
