"""A client flooding its websocket with reruns gets them coalesced, and the server keeps answering its health
check (the app on loopback, started and stopped by its process id; Streamlit's own websocket protocol)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FLOOD = 300                 # rerun requests
FLOOD_SECONDS = 6.0         # sent over this long (50 a second, the probe sent 30)
NO_ANSWER = -1.0            # a health probe that got no answer


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _health(port: int, timeout: float) -> float:
    start = time.monotonic()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=timeout) as response:
        response.read()
    return time.monotonic() - start


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    env = dict(os.environ, DPBO_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--server.headless", "true",
                             "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _health(port, 2)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("the app did not start")
                time.sleep(0.3)
        yield port, proc.pid
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def _rerun_message() -> bytes:
    """The ``rerun_script`` message a browser sends for the landing page."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.rerun_script.query_string = ""
    msg.rerun_script.page_script_hash = ""
    return msg.SerializeToString()


async def _connect(port: int):
    from tornado.websocket import websocket_connect

    return await websocket_connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"])


async def _next_type(ws) -> str | None:
    """The type of the server's next message on ``ws`` (None when the stream closed)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    data = await ws.read_message()
    if data is None:
        return None
    msg = ForwardMsg()
    msg.ParseFromString(data)
    return msg.WhichOneof("type")


async def _flood(port: int) -> dict:
    ws = await _connect(port)
    runs, health = [], []

    async def read():
        while (kind := await _next_type(ws)) is not None:
            if kind == "new_session":
                runs.append(time.monotonic())

    async def probe():
        loop = asyncio.get_running_loop()
        while True:
            try:
                health.append(await loop.run_in_executor(None, _health, port, 10))
            except OSError:
                health.append(NO_ANSWER)
            await asyncio.sleep(0.2)

    reader, prober = asyncio.ensure_future(read()), asyncio.ensure_future(probe())
    start = time.monotonic()
    for i in range(FLOOD):
        await ws.write_message(_rerun_message(), binary=True)
        await asyncio.sleep(max(0.0, start + FLOOD_SECONDS * (i + 1) / FLOOD - time.monotonic()))
    # The coalesced rerun after the flood may wait for a slow first run (a cold machine): wait for it by count,
    # bounded, not by a guess of the machine's speed; then a little longer for any rerun still to come.
    deadline = time.monotonic() + 60
    while len(runs) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    await asyncio.sleep(2.0)
    prober.cancel()
    reader.cancel()
    ws.close()
    return dict(runs=len(runs), health=health, seconds=time.monotonic() - start)


async def _warm(port: int) -> None:
    """One whole run of the page first (a fresh checkout imports and compiles the engine on its first run), so
    the flood's CPU is the server's answer to the flood, not a cold start whose cost depends on the machine."""
    ws = await _connect(port)
    await ws.write_message(_rerun_message(), binary=True)
    while await _next_type(ws) not in (None, "script_finished"):
        pass
    ws.close()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_a_rerun_flood_is_coalesced_and_health_keeps_answering(server):
    from ui.kit.reruns import min_interval

    port, pid = server
    # In a thread of its own: a browser test's Playwright (sync API) may keep an event loop running in this one.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(asyncio.wait_for(_warm(port), 120))).result()
        cpu = _cpu_seconds(pid)
        out = pool.submit(lambda: asyncio.run(asyncio.wait_for(_flood(port), 150))).result()
    out["cpu"] = _cpu_seconds(pid) - cpu
    # One rerun per interval at most, far fewer than the requests. Without the limit every request interrupted
    # the script and started it again: the server's process took 7.6 CPU seconds of these 8 (one core, all
    # the time); coalesced, 3.3. The CPU seconds are told in the reference machine's seconds (a reference
    # workload measured here), so a slower machine does not decide the verdict.
    from benchmarks.bench_limits import here_in_reference_seconds

    out["reference_cpu"] = here_in_reference_seconds(out["cpu"])
    assert 2 <= out["runs"] <= out["seconds"] / min_interval() + 3, out["runs"]
    assert out["reference_cpu"] < 0.7 * out["seconds"], out
    # Every health probe during the flood was answered (each waits at most 10 s: a guard against a server that
    # stopped answering, not a bound on this machine's speed).
    assert out["health"] and NO_ANSWER not in out["health"], out["health"]
