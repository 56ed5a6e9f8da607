"""A Flower federation on 127.0.0.1 for the tests: one SuperLink and N SuperNodes as processes (insecure).

:func:`federation` starts them with free ports, yields a function that runs
an exported app with ``flwr run`` and returns the ServerApp's summary, and
stops every process it started by its pid (its process group) on exit.
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
NODE_POLL_SECONDS = 0.2
READY_SECONDS = 180     # a guard: how long a process may take to answer on its port before the start fails
# A SuperNode that finds no message sleeps 3 s before it asks again, and waits for its ClientApp's reply in
# steps of 0.5 s (flwr 1.42, supernode/start_client_internal.py, hard-coded). Each round of a run pays that
# wait, so the tests' SuperNodes poll every NODE_POLL_SECONDS instead: only that module's sleeps are shortened,
# everything the nodes do is Flower's own code.
SUPERNODE = f"""
import sys, time
import flwr.supernode.start_client_internal as loop
from flwr.supernode.cli import flower_supernode

class _Time:
    def __getattr__(self, name):
        return getattr(time, name)

    @staticmethod
    def sleep(seconds):
        time.sleep(min(seconds, {NODE_POLL_SECONDS}))

loop.time = _Time()
sys.argv[0] = "flower-supernode"
sys.exit(flower_supernode())
"""


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


@contextlib.contextmanager
def federation(nodes: int, workdir: Path):
    """Start a SuperLink and ``nodes`` SuperNodes; yield ``run(app_dir, timeout) -> (summary, seconds)``."""
    link, *node_ports = free_ports(1 + nodes)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               FLWR_HOME=str(workdir / "flwr-home"), PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""),
               FLWR_SUPEREXEC_TASK_POLL_INTERVAL="0.1")    # start a ClientApp 0.1 s after its message, not 1 s
    home = workdir / "flwr-home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[superlink]\ndefault = "loopback"\n\n[superlink.loopback]\n'
                                      f'address = "127.0.0.1:{link}"\ninsecure = true\n')
    processes = []
    logs = []

    def start(args, name):
        log = open(workdir / f"{name}.log", "w")
        logs.append(log)
        processes.append(subprocess.Popen(args, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                          start_new_session=True))

    try:
        start([str(BIN / "flower-superlink"), "--insecure", "--port", str(link)], "superlink")
        if not wait_port(link, READY_SECONDS):
            raise RuntimeError("The SuperLink did not start: " + (workdir / "superlink.log").read_text()[-2000:])
        for i, port in enumerate(node_ports):
            start([sys.executable, "-c", SUPERNODE, "--insecure", "--superlink", f"127.0.0.1:{link}",
                   "--port", str(port), "--node-config", f"partition-id={i} num-partitions={nodes}"], f"node{i}")
        # Ready before the first run: every SuperNode answers on its own port (its imports take seconds, tens
        # of seconds on a busy machine; the wait is for readiness, READY_SECONDS only a guard against a hang).
        for i, port in enumerate(node_ports):
            if not wait_port(port, READY_SECONDS):
                raise RuntimeError(f"SuperNode {i} did not start: " + (workdir / f"node{i}.log").read_text()[-2000:])

        def run(app_dir: Path, timeout: float) -> tuple[dict, float]:
            result = workdir / f"result-{app_dir.name}.json"
            begin = time.perf_counter()
            subprocess.run([str(BIN / "flwr"), "run", str(app_dir), "loopback", "--run-config",
                            f'result_file="{result}"'], env=env, cwd=workdir, check=True, timeout=timeout,
                           capture_output=True)
            while not result.exists() and time.perf_counter() - begin < timeout:
                time.sleep(0.2)
            seconds = time.perf_counter() - begin
            if not result.exists():
                tails = {p.name: p.read_text()[-1500:] for p in workdir.glob("*.log")}
                raise TimeoutError(f"No result after {seconds:.0f} s: {tails}")
            return json.loads(result.read_text()), seconds

        yield run
    finally:
        stop(processes)
        for log in logs:
            log.close()


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
def readme_federation(app_dir: Path, nodes: int, start_seconds: float = 300):
    """Run the app's README start block as written (in its own process group); yield ``run(app_dir, timeout)``.

    ``run`` runs the README's run block in ``app_dir`` against the same federation and returns
    (the ServerApp's RESULT summary, seconds). The federation's ports and Flower's home are the README's
    variables (LINK_PORT, NODE_PORT, FLWR_HOME); everything is stopped by its process group on exit.
    """
    app_dir = Path(app_dir)
    start, _ = readme_blocks(app_dir)
    link, node = free_ports(1)[0], free_port_range(nodes)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""), FLWR_HOME=str(app_dir / ".flwr"),
               LINK_PORT=str(link), NODE_PORT=str(node))
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
