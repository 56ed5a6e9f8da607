"""A Dask cluster on 127.0.0.1 for the tests, started as a host starts one: the stock ``dask scheduler`` and
``dask worker`` commands (each worker under its nanny, so its tasks run in a daemonic process).

:func:`cluster` starts a scheduler and ``workers`` single-threaded workers with no dashboard, bound to
loopback (``--no-dashboard`` alone still serves the health and metrics pages on 0.0.0.0: their address is
bound too), waits (bounded) until every worker has joined, yields the scheduler's address and the processes,
and stops every process it started by its pid (its process group) on exit.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.flower_loopback import free_ports, stop, wait_port

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_SECONDS = 90       # bound on starting the scheduler and the workers on a busy machine


def _joined(address: str, workers: int, seconds: float) -> bool:
    from distributed import Client

    with Client(address, timeout="30s", set_as_default=False) as client:
        try:
            client.wait_for_workers(workers, timeout=seconds)
        except TimeoutError:
            return False
    return True


@contextlib.contextmanager
def cluster(workers: int, workdir: Path, env: dict | None = None):
    """Yield ``(address, processes)`` of a loopback cluster of ``workers`` worker processes."""
    (port,) = free_ports(1)
    address = f"tcp://127.0.0.1:{port}"
    environ = dict(os.environ if env is None else env,
                   PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    environ.pop("DASK_DISTRIBUTED__WORKER__DAEMON", None)       # the stock setting: daemonic worker processes
    workdir.mkdir(parents=True, exist_ok=True)
    processes, logs = [], []

    def start(args, name):
        log = open(workdir / f"{name}.log", "w")
        logs.append(log)
        processes.append(subprocess.Popen(args, cwd=ROOT, env=environ, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True))

    try:
        start([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard",
               "--dashboard-address", "127.0.0.1:0", "--no-show"], "scheduler")
        if not wait_port(port, START_SECONDS):
            raise RuntimeError("The scheduler did not start: " + (workdir / "scheduler.log").read_text()[-2000:])
        for i in range(workers):
            start([str(BIN / "dask"), "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                   "--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--name", f"w{i}", "--death-timeout", "60",
                   "--local-directory", str(workdir / f"w{i}")], f"worker{i}")
        if not _joined(address, workers, START_SECONDS):
            tails = {p.name: p.read_text()[-1500:] for p in workdir.glob("*.log")}
            raise RuntimeError(f"The workers did not join: {tails}")
        yield address, processes
    finally:
        stop(processes)
        for log in logs:
            log.close()


def listening(processes) -> list[str]:
    """Every address the cluster's processes (and their children) listen on, as ``ip:port``."""
    import psutil

    seen = []
    for proc in processes:
        with contextlib.suppress(psutil.Error):
            parent = psutil.Process(proc.pid)
            for member in [parent, *parent.children(recursive=True)]:
                with contextlib.suppress(psutil.Error):
                    seen += [f"{c.laddr.ip}:{c.laddr.port}" for c in member.net_connections("inet")
                             if c.status == psutil.CONN_LISTEN]
    return seen


def wait_until(predicate, seconds: float, step: float = 0.05) -> bool:
    """Whether ``predicate()`` turned true within ``seconds`` (a hang guard, never a timing assertion)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
