"""A Flower federation on 127.0.0.1 for the tests, started by an exported app's own README.

:func:`readme_federation` runs the README's start block as written (certificates, the SuperLink with TLS and
SuperNode authentication, the wait until it answers, the keys' registration, the SuperNodes) on free ports,
yields a function that runs an app's README run block (``flwr run``) and returns the ServerApp's summary, and
stops every process it started by its process group on exit.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# No package registry at run time: pip and uv may not use an index, and any HTTP(S) request that is not to
# 127.0.0.1 goes to a proxy on a port nothing listens on (the federation's own traffic is local).
DEAD_PROXY = "http://127.0.0.1:9"
OFFLINE = {"PIP_NO_INDEX": "1", "UV_OFFLINE": "1", "HTTP_PROXY": DEAD_PROXY, "HTTPS_PROXY": DEAD_PROXY,
           "http_proxy": DEAD_PROXY, "https_proxy": DEAD_PROXY, "NO_PROXY": "127.0.0.1,localhost",
           "no_proxy": "127.0.0.1,localhost"}


def free_ports(count: int) -> list[int]:
    sockets, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        sockets.append(s)
        ports.append(s.getsockname()[1])
    for s in sockets:
        s.close()
    return ports


def wait_port(port: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
        time.sleep(0.2)
    return False


def stop(processes) -> None:
    for proc in processes:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
    for proc in processes:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)


def stop_groups(processes, seconds: float = 15) -> None:
    """Stop the process groups led by ``processes`` even when the leader has exited (the README's bash returns
    once it has started the SuperLink and SuperNodes in the background, which stay in its group)."""
    groups = [proc.pid for proc in processes]
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for group in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, sig)
        end = time.monotonic() + seconds
        while time.monotonic() < end and any(_group_alive(group) for group in groups):
            time.sleep(0.2)
        if not any(_group_alive(group) for group in groups):
            break
    for proc in processes:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def readme_blocks(app_dir: Path) -> tuple[str, str]:
    """The exported README's commands after its install section: (start the federation, run the app)."""
    text = (Path(app_dir) / "README.md").read_text().split("\n## Run it", 1)[1]
    start, run = re.findall(r"```bash\n(.*?)```", text, re.S)[:2]
    return start, run


def free_port_range(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1 (the README numbers its SuperNodes' ports)."""
    for _ in range(50):
        base = free_ports(1)[0]
        try:
            sockets = []
            for port in range(base, base + count):
                s = socket.socket()
                sockets.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError(f"No {count} consecutive free ports")


@contextlib.contextmanager
def readme_federation(app_dir: Path, nodes: int, start_seconds: float = 300, *, installed: Path | None = None,
                      base_env: dict | None = None):
    """Run the app's README start block as written (in its own process group); yield ``run(app_dir, timeout)``.

    ``run`` runs the README's run block in ``app_dir`` against the same federation and returns
    (the ServerApp's RESULT summary, seconds). The federation's ports and Flower's home are the README's
    variables (LINK_PORT, NODE_PORT, FLWR_HOME); everything is stopped by its process group on exit.

    By default the commands run in this checkout's environment (its ``bin`` first on PATH, the checkout on
    PYTHONPATH). ``installed``: the ``bin`` folder of another environment where the engine is installed; its
    programs come first on PATH and the checkout is not on PYTHONPATH (``base_env``: the environment to start
    from, os.environ by default).
    """
    app_dir = Path(app_dir)
    start, _ = readme_blocks(app_dir)
    link, node = free_ports(1)[0], free_port_range(nodes)
    env = dict(os.environ if base_env is None else base_env)
    if installed is None:
        env.update(PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    else:
        env.pop("PYTHONPATH", None)
        env["PATH"] = str(installed) + os.pathsep + env.get("PATH", "")
    env.update(FLWR_HOME=str(app_dir / ".flwr"), LINK_PORT=str(link), NODE_PORT=str(node), **OFFLINE)
    processes, log = [], open(app_dir / "federation.log", "w")
    try:
        proc = subprocess.Popen(["bash", "-c", start], cwd=app_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        processes.append(proc)
        proc.wait(timeout=start_seconds)          # the block returns once the SuperNodes are started

        def run(folder: Path, timeout: float) -> tuple[dict, float]:
            _, block = readme_blocks(folder)
            begin = time.perf_counter()
            with open(Path(folder) / "run.log", "w") as out:
                runner = subprocess.Popen(["bash", "-c", block], cwd=folder, env=env, stdout=out,
                                          stderr=subprocess.STDOUT, start_new_session=True)
                processes.append(runner)
                try:
                    runner.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    stop_groups([runner])
            seconds = time.perf_counter() - begin
            text = (Path(folder) / "run.log").read_text()
            lines = [line for line in text.splitlines() if "RESULT {" in line]
            if not lines:
                raise TimeoutError(f"No result after {seconds:.0f} s: {text[-2000:]} "
                                   f"{(app_dir / 'federation.log').read_text()[-2000:]}")
            return json.loads(lines[-1].split("RESULT ", 1)[1]), seconds

        yield run, env
    finally:
        stop_groups(processes)
        log.close()
