"""A Flower federation on 127.0.0.1 for the tests, started by an exported app's own README.

:func:`readme_federation` runs the README's start block as written (certificates, the SuperLink with TLS and
SuperNode authentication on loopback, the gateway, the wait until it answers, the keys' registration, the
SuperNodes) on free ports, each block in a shell of its own, and yields a :class:`Federation`: run an app's README
run block (``flwr run`` and the outcome line) and read the ServerApp's summary, start, find or kill a SuperNode,
call ``flwr`` as the operator or as someone else. Every process it started is stopped by its process group on
exit.
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
            for proc in processes:      # a leader that exited stays a zombie in its group until it is reaped
                proc.poll()
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


def readme_blocks(app_dir: Path) -> tuple[str, str, str]:
    """The exported README's commands after its install section: (start the federation, run the app, stop)."""
    text = (Path(app_dir) / "README.md").read_text().split("\n## Run it", 1)[1]
    start, run, stop = re.findall(r"```bash\n(.*?)```", text, re.S)[:3]
    return start, run, stop


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


# The test-only secrets (engine.flower.randomness) of a reproducible federation: in the SuperLink's and the
# SuperNodes' environment only, never in the run config the nodes receive.
TEST_SECRETS = {"DPBO_FLOWER_SERVER_SECRET": "loopback server secret",
                "DPBO_FLOWER_NODE_SECRET": "loopback node secret"}


class Federation:
    """A running README federation: ``run`` an app's run block, start or kill one of its SuperNodes.

    Iterating gives ``(run, env)``. ``env`` is what every block gets: the README's own variables (its ports),
    ``HOME`` a folder of its own (the blocks' default FLWR_HOME is under it) and nothing else of the start block.
    """

    def __init__(self, app_dir: Path, nodes: int, env: dict, start_env: dict, processes: list):
        self.app_dir, self.nodes, self.env, self.start_env, self.processes = app_dir, nodes, env, start_env, processes
        self.flwr_home = Path(env["HOME"]) / ".flwr-dpbo"

    def __iter__(self):
        return iter((self.run, self.env))

    def run(self, folder: Path, timeout: float, on_line=None) -> tuple[dict, float]:
        """The README's run block in ``folder`` (its own shell); (the ServerApp's RESULT summary, seconds).

        ``on_line(text)``: called with the block's output so far while it runs (every 0.5 s).
        """
        summary, seconds, _ = self.run_block(folder, timeout, on_line)
        if summary is None:
            raise TimeoutError(f"No result after {seconds:.0f} s: {self.output(folder)[-2000:]} "
                               f"{(self.app_dir / 'federation.log').read_text()[-2000:]}")
        return summary, seconds

    def run_block(self, folder: Path, timeout: float, on_line=None) -> tuple[dict | None, float, int | None]:
        """The run block's (RESULT summary or None, seconds, exit status or None when it was stopped)."""
        _, block, _ = readme_blocks(folder)
        begin = time.perf_counter()
        log = Path(folder) / "run-block.log"
        with open(log, "w") as out:
            runner = subprocess.Popen(["bash", "-c", block], cwd=folder, env=self.env, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True)
            self.processes.append(runner)
            end = time.monotonic() + timeout
            while runner.poll() is None and time.monotonic() < end:
                if on_line is not None:
                    on_line(log.read_text(errors="replace"))
                time.sleep(0.5)
            if runner.poll() is None:
                stop_groups([runner])
        seconds = time.perf_counter() - begin
        lines = [line for line in self.output(folder).splitlines() if "RESULT {" in line]
        summary = json.loads(lines[-1].split("RESULT ", 1)[1]) if lines else None
        return summary, seconds, runner.returncode

    @staticmethod
    def output(folder: Path) -> str:
        return (Path(folder) / "run-block.log").read_text(errors="replace")

    def node_command(self, index: int, key: str | None = None, partition: int | None = None,
                     node_config: str | None = None) -> str:
        """The README's SuperNode command for node ``index`` (its key and port), as its start block writes it;
        ``node_config`` replaces its whole ``--node-config`` value (a canary node's, say)."""
        start, _, _ = readme_blocks(self.app_dir)
        loop = start[start.index("for i in $(seq 0", start.index("supernode register")):]
        command = loop.split("do\n", 1)[1].split("  echo $!", 1)[0]
        setup = "".join(line + "\n" for line in start.splitlines() if line.startswith("export "))
        command = setup + command.replace("$((NODE_PORT + i))", str(int(self.env["NODE_PORT"]) + index))
        command = command.replace("partition-id=$i", f"partition-id={index if partition is None else partition}")
        if node_config is not None:
            command = re.sub(r'--node-config "[^"]*"', lambda _: f"--node-config '{node_config}'", command)
        command = command.replace('"keys/supernode_$i"', key or f"keys/supernode_{index}")
        return command + 'echo $! >> "$FLWR_HOME/nodes.pids"\n'       # as the start block does, for its stop block

    def start_node(self, index: int, key: str | None = None, partition: int | None = None,
                   log_name: str | None = None, node_config: str | None = None) -> subprocess.Popen:
        """Start SuperNode ``index`` again (or another key's node) with the README's command, in its own group."""
        log = open(self.app_dir / (log_name or f"node-{index}.log"), "a")
        proc = subprocess.Popen(["bash", "-c", self.node_command(index, key, partition, node_config)], cwd=self.app_dir,
                                env=self.start_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.processes.append(proc)
        return proc

    def node_pid(self, index: int) -> int:
        """The pid of the SuperNode serving node ``index``'s port (a process this federation started)."""
        port = str(int(self.env["NODE_PORT"]) + index).encode()
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit():
                try:
                    args = (proc / "cmdline").read_bytes().split(b"\0")
                except OSError:
                    continue
                if b"engine.flower.supernode" in args and port in args:
                    return int(proc.name)
        raise LookupError(f"No SuperNode on port {port.decode()}")

    def kill_node(self, index: int, sig: int = signal.SIGKILL) -> None:
        """SIGKILL (a crash: the SuperLink lists the node until its heartbeat expires) or SIGTERM (a stop: the
        node signs off at once)."""
        os.kill(self.node_pid(index), sig)

    def flwr(self, *args: str, timeout: float = 120, home: Path | None = None) -> subprocess.CompletedProcess:
        """``flwr ARGS`` as the operator runs it (its FLWR_HOME), or with another Flower home."""
        env = dict(self.env, FLWR_HOME=str(home or self.flwr_home), FLWR_TELEMETRY_ENABLED="0")
        return subprocess.run(["flwr", *args], cwd=self.app_dir, env=env, capture_output=True, text=True,
                              timeout=timeout)


@contextlib.contextmanager
def readme_federation(app_dir: Path, nodes: int, start_seconds: float = 300, *, installed: Path | None = None,
                      base_env: dict | None = None, secrets: dict | None = None):
    """Run the app's README start block as written (in its own process group); yield a :class:`Federation`.

    Every block (start, run) runs in a shell of its own with the README's port variables (LINK_PORT, FLEET_PORT,
    NODE_PORT) on free ports and ``HOME`` a folder of this federation's (the blocks' FLWR_HOME is their default
    under it); everything is stopped by its process group on exit. ``secrets``: the test-only secrets
    (:data:`TEST_SECRETS`) in the start block's environment only (the SuperLink's and the SuperNodes').

    By default the commands run in this checkout's environment (its ``bin`` first on PATH, the checkout on
    PYTHONPATH). ``installed``: the ``bin`` folder of another environment where the engine is installed; its
    programs come first on PATH and the checkout is not on PYTHONPATH (``base_env``: the environment to start
    from, os.environ by default).
    """
    app_dir = Path(app_dir)
    start, _, _ = readme_blocks(app_dir)
    link, fleet = free_ports(2)
    node = free_port_range(nodes + 2)          # room for a SuperNode a test adds
    env = {k: v for k, v in (os.environ if base_env is None else base_env).items()
           if not k.startswith(("FLWR_", "DPBO_FLOWER_"))}
    if installed is None:
        env.update(PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   PATH=str(BIN) + os.pathsep + os.environ.get("PATH", ""))
    else:
        env.pop("PYTHONPATH", None)
        env["PATH"] = str(installed) + os.pathsep + env.get("PATH", "")
    home = app_dir.parent / f"{app_dir.name}-home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), LINK_PORT=str(link), FLEET_PORT=str(fleet), NODE_PORT=str(node), **OFFLINE)
    start_env = dict(env, **(secrets or {}))
    processes, log = [], open(app_dir / "federation.log", "w")
    try:
        proc = subprocess.Popen(["bash", "-c", start], cwd=app_dir, env=start_env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        processes.append(proc)
        proc.wait(timeout=start_seconds)          # the block returns once the SuperNodes are started
        yield Federation(app_dir, nodes, env, start_env, processes)
    finally:
        stop_groups(processes)
        log.close()
