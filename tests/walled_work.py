"""Work for walled runs on a Dask cluster (tests/test_executor_dask.py): a module that imports almost nothing, so
a walled worker that imports it to unpickle the work stays far below the tests' small memory walls."""

from __future__ import annotations

import os
import time

BIG = 3 * 1024 ** 3         # bytes a run asks for: far above the small walls of these tests
CPU_PER_BEAT = 0.01         # a beat of the Stop test is 10 ms of the run's own CPU time


def records(send):
    for i in range(3):
        send(("record", i, os.getpid()))


def hog(send):
    import numpy as np

    send(("record", 0, os.getpid()))
    send(("record", 1, float(np.ones(BIG // 8).sum())))


def spin(send):
    send(("record", 0, os.getpid()))
    while True:
        pass


def beating(path: str):
    """A run that counts its own CPU time in beats (written to ``path``) and reports every tenth beat."""
    def work(send):
        send(("pid", os.getpid()))
        beat, start = 0, time.process_time()
        while True:
            while time.process_time() - start < (beat + 1) * CPU_PER_BEAT:
                pass
            beat += 1
            with open(path + ".new", "w") as out:
                out.write(str(beat))
            os.replace(path + ".new", path)          # a reader never sees a half-written count
            if beat % 10 == 0:
                send(("beat", beat))
    return work


def gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] == "Z"
    except OSError:
        return True


def forever(path: str) -> None:
    """A task that checks for Stop between beats and never ends by itself; on Stop it writes ``stopped``."""
    from engine.cancel import Cancelled, checkpoint

    beat = 0
    try:
        while True:
            checkpoint()
            beat += 1
            with open(path + ".new", "w") as out:
                out.write(str(beat))
            os.replace(path + ".new", path)
            time.sleep(0.01)
    except Cancelled:
        with open(path + ".new", "w") as out:
            out.write("stopped")
        os.replace(path + ".new", path)
        raise
