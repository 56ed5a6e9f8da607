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


def _joined(address: str, workers: int, seconds: float, security=None) -> bool:
    from distributed import Client

    with Client(address, timeout="30s", set_as_default=False, security=security) as client:
        try:
            client.wait_for_workers(workers, timeout=seconds)
        except TimeoutError:
            return False
    return True


def tls_options(folder: Path, name: str) -> list[str]:
    """The ``dask scheduler`` / ``dask worker`` options of docs/hosting.md's recipe, for the key pair ``name``."""
    return ["--tls-ca-file", str(folder / "ca.pem"), "--tls-cert", str(folder / f"{name}.pem"), "--tls-key",
            str(folder / f"{name}-key.pem")]


@contextlib.contextmanager
def cluster(workers: int, workdir: Path, env: dict | None = None, tls: Path | None = None):
    """Yield ``(address, processes)`` of a loopback cluster of ``workers`` worker processes; with ``tls`` (a folder
    holding docs/hosting.md's certificates), a TLS cluster started with the recipe's options."""
    (port,) = free_ports(1)
    address = f"{'tls' if tls else 'tcp'}://127.0.0.1:{port}"
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
               "--dashboard-address", "127.0.0.1:0", "--no-show",
               *(["--protocol", "tls", *tls_options(tls, "scheduler")] if tls else [])], "scheduler")
        if not wait_port(port, START_SECONDS):
            raise RuntimeError("The scheduler did not start: " + (workdir / "scheduler.log").read_text()[-2000:])
        for i in range(workers):
            start([str(BIN / "dask"), "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                   "--no-dashboard", "--dashboard-address", "127.0.0.1:0", "--name", f"w{i}", "--death-timeout", "60",
                   "--local-directory", str(workdir / f"w{i}"),
                   *(tls_options(tls, f"worker-{i + 1}") if tls else [])], f"worker{i}")
        security = None
        if tls:
            from distributed.security import Security

            security = Security(tls_ca_file=str(tls / "ca.pem"), tls_client_cert=str(tls / "explorer.pem"),
                                tls_client_key=str(tls / "explorer-key.pem"), require_encryption=True)
        if not _joined(address, workers, START_SECONDS, security):
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
