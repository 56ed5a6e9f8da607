"""Run the engine's many small matrix products on one BLAS thread.

The simulation's linear algebra is thousands of tiny products per iteration
(e.g. 50 x 50 matrices per agent, small GP solves); a multithreaded BLAS only adds synchronisation,
and on a busy 2-core machine its spinning threads made a run twice as slow.
threadpoolctl ships with scikit-learn; without it this is a no-op.
"""

from __future__ import annotations

import contextlib
import functools

_controller = None


def single_threaded_blas():
    """Context manager limiting BLAS to one thread (cheap: the controller is built once)."""
    global _controller
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
            _controller = False
        else:
            _controller = ThreadpoolController()
    if _controller is False:
        return contextlib.nullcontext()
    return _controller.limit(limits=1, user_api="blas")


@functools.lru_cache(maxsize=1)
def blas_kernel() -> str | None:
    """The kernel OpenBLAS runs in this process (its ``openblas_get_corename``), or None without OpenBLAS."""
    import numpy  # noqa: F401  (threadpoolctl sees only the libraries already loaded)

    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return None
    for pool in threadpool_info():
        if pool.get("internal_api") == "openblas":
            return pool.get("architecture")
    return None
