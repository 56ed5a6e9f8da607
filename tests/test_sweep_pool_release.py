"""A sweep that is stopped or abandoned gives back its worker pool: threads and file descriptors."""

from __future__ import annotations

import gc
import os
import threading
import time

import pytest

from engine.cancel import Cancelled, CancelToken, cancellable
from engine.sweep import iter_sweep
from engine.sweep.spec import SweepSpec

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc/self/fd")

CYCLES = 4


def _counts() -> tuple[int, int]:
    gc.collect()
    return threading.active_count(), len(os.listdir("/proc/self/fd"))


def _settled(start: tuple[int, int], slack: tuple[int, int], seconds: float = 60.0) -> tuple[int, int]:
    """The counts once they are back within ``slack`` of ``start`` (or after ``seconds``, a guard wide enough for
    a busy machine: a released pool settles in well under a second when nothing else runs)."""
    end = time.monotonic() + seconds
    now = _counts()
    while (now[0] > start[0] + slack[0] or now[1] > start[1] + slack[1]) and time.monotonic() < end:
        time.sleep(0.1)
        now = _counts()
    return now


def _spec(k: int) -> SweepSpec:
    # Many quick cells: results keep arriving while the stream is dropped, and cells still wait to be sent.
    return SweepSpec("toy", base={"sleep": 0.01}, axes=(("x", tuple(float(v) for v in range(1, 80))),), runs=1,
                     seed=k)


def _abandon(tmp_path, k: int) -> None:
    sweep = iter_sweep(_spec(k), tmp_path / f"abandoned-{k}.parquet", executor="joblib", workers=2)
    next(sweep)
    next(sweep)        # the pool is up and a cell finished: the sweep waits at a yield
    del sweep          # a page that reran or closed drops it there


def _cancel(tmp_path, k: int) -> None:
    token = CancelToken()
    threading.Timer(0.3, token.cancel).start()
    with pytest.raises(Cancelled), cancellable(token):
        for _ in iter_sweep(_spec(k), tmp_path / f"cancelled-{k}.parquet", executor="joblib", workers=2):
            pass


@pytest.mark.parametrize("stop", [_abandon, _cancel], ids=["abandoned", "cancelled"])
def test_restarted_sweeps_release_threads_and_descriptors(tmp_path, stop):
    stop(tmp_path, 99)                        # first use: loky's own process-wide helpers start once
    start = _settled(_counts(), (0, 0), seconds=1.0)
    for k in range(CYCLES):
        stop(tmp_path, k)
    threads, fds = _settled(start, (1, 3))
    assert threads <= start[0] + 1, f"threads {start[0]} -> {threads} after {CYCLES} stopped sweeps"
    assert fds <= start[1] + 3, f"open descriptors {start[1]} -> {fds} after {CYCLES} stopped sweeps"
