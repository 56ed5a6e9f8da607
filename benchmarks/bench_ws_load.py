"""A crowd on a hosted explorer without browsers: sessions that speak Streamlit's websocket protocol.

Starts the Docker image's command with the image's environment on loopback (benchmarks/loopback.py), opens
``--heavy`` sessions that each press Run on a federated BO comparison of tens of CPU seconds (they share the
server's pool of DPBO_MAX_RUNS places and queue; in hosting mode they compute in walled worker processes),
and while those compute opens ``--light`` sessions, one after another in small groups, on the privacy
accountant and the teaching view. A session is one websocket (``/_stcore/stream``) that sends the
``rerun_script`` message a browser sends and reads the server's ``ForwardMsg`` protobufs: no browser, so the
figures are the server's. Reports the light sessions' time from the request to the first chart element
(median, p95) and the server's CPU use (cores) and resident memory (its process alone, and with its workers).

    python -m benchmarks.bench_ws_load [--heavy 8] [--light 12]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import threading
import time

import psutil
import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.loopback import ROOT, cpu_seconds, image_environment, rss_mb, start_server, stop_server
from hosting import image_config

HEAVY = ("Federated_BO", "agents=300&features=100&iterations=100&runs=4")
LIGHT = [("Privacy_accountant", ""), ("Teaching_view", ""), ("Privacy_accountant", "q=0.15&z=1.2"),
         ("Teaching_view", "agents=50")]
DONE = (0, 1, 3)          # ScriptFinishedStatus: a run that ended (not one cut short for a rerun)


def _rerun(page: str, query: str, page_hash: str = "", widgets=()) -> bytes:
    msg = BackMsg()
    msg.rerun_script.query_string = query
    msg.rerun_script.page_name = page
    msg.rerun_script.page_script_hash = page_hash
    for widget_id in widgets:
        state = msg.rerun_script.widget_states.widgets.add()
        state.id = widget_id
        state.trigger_value = True
    return msg.SerializeToString()


async def _script(ws, timeout: float, on_element=None) -> str:
    """Read until the script run ends; returns the page's script hash. ``on_element(kind, element)``."""
    page_hash = ""
    while True:
        message = ForwardMsg()
        message.ParseFromString(await asyncio.wait_for(ws.recv(), timeout))
        kind = message.WhichOneof("type")
        if kind == "navigation":                     # the page this run shows (new_session names the main script)
            page_hash = message.navigation.page_script_hash
        elif kind == "delta" and message.delta.WhichOneof("type") == "new_element" and on_element:
            element = message.delta.new_element
            on_element(element.WhichOneof("type"), element)
        elif kind == "script_finished" and message.script_finished in DONE:
            return page_hash


async def light_session(url: str, page: str, query: str) -> float:
    """Seconds from the request to the first chart element (inf when none came)."""
    first: list[float] = []
    async with websockets.connect(url + "/_stcore/stream", max_size=None) as ws:
        start = time.perf_counter()
        await ws.send(_rerun(page, query))
        await _script(ws, 120, lambda kind, el: first.append(time.perf_counter() - start)
                      if kind == "plotly_chart" and not first else None)
    return first[0] if first else float("inf")


async def heavy_session(url: str, running: asyncio.Event, ended: list) -> None:
    """Open the Federated BO page, press Run, read until the run ends."""
    buttons: dict[str, str] = {}
    page, query = HEAVY
    async with websockets.connect(url + "/_stcore/stream", max_size=None) as ws:
        await ws.send(_rerun(page, query))
        page_hash = await _script(ws, 120, lambda kind, el: buttons.__setitem__(el.button.id.rsplit("-", 1)[-1],
                                                                               el.button.id)
                                  if kind == "button" else None)       # the last drawn Run is the live one
        await ws.send(_rerun(page, query, page_hash, [buttons["fbo_run"]]))
        running.set()
        start = time.perf_counter()
        await _script(ws, 1800)
        ended.append(time.perf_counter() - start)


class Sampler:
    """The server's CPU use (cores) and memory, sampled every 0.25 s while light sessions load."""

    def __init__(self, pid: int):
        self.pid, self.stop = pid, threading.Event()
        self.server_mb: list[float] = []
        self.tree_mb: list[float] = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        server = psutil.Process(self.pid)
        while not self.stop.wait(0.25):
            self.server_mb.append(server.memory_info().rss / 2**20)
            self.tree_mb.append(rss_mb(self.pid))

    def __enter__(self):
        self.start_cpu, self.start_own = cpu_seconds(self.pid), sum(psutil.Process(self.pid).cpu_times()[:2])
        self.started = time.perf_counter()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        elapsed = time.perf_counter() - self.started
        self.cores_tree = (cpu_seconds(self.pid) - self.start_cpu) / elapsed
        self.cores_server = (sum(psutil.Process(self.pid).cpu_times()[:2]) - self.start_own) / elapsed


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


async def crowd(url: str, pid: int, heavy: int, light: int, group: int) -> dict:
    for page, query in LIGHT[:2]:                    # warm the pages' imports and caches
        await light_session(url, page, query)
    running, ended = asyncio.Event(), []
    heavies = [asyncio.create_task(heavy_session(url, running, ended)) for _ in range(heavy)]
    if heavy:
        await running.wait()
        await asyncio.sleep(2.0)                     # the heavy runs compute (and queue)
    times: list[float] = []
    with Sampler(pid) as sampler:
        for first in range(0, light, group):
            batch = [LIGHT[i % len(LIGHT)] for i in range(first, min(first + group, light))]
            times += await asyncio.gather(*(light_session(url, page, query) for page, query in batch))
    still_running = sum(not task.done() for task in heavies)
    failed = [repr(task.exception()) for task in heavies if task.done() and task.exception() is not None]
    for task in heavies:
        task.cancel()
    await asyncio.gather(*heavies, return_exceptions=True)
    return {"heavy": heavy, "light": light, "heavy_running_during_light": still_running, "heavy_failed": failed,
            "heavy_seconds": [round(x, 1) for x in ended],
            "light_first_chart_median_s": round(statistics.median(times), 3), "light_first_chart_p95_s":
            round(p95(times), 3), "server_cores": round(sampler.cores_server, 2),
            "server_and_workers_cores": round(sampler.cores_tree, 2),
            "server_peak_rss_mb": round(max(sampler.server_mb, default=0), 0),
            "server_and_workers_peak_rss_mb": round(max(sampler.tree_mb, default=0), 0)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heavy", type=int, default=8)
    parser.add_argument("--light", type=int, default=12)
    parser.add_argument("--group", type=int, default=3, help="light sessions opened at once")
    args = parser.parse_args(argv)
    _, command = image_config()
    with tempfile.TemporaryDirectory() as cache, open(ROOT / "benchmarks" / "bench_ws_load.log", "w") as log:
        proc, url = start_server(command, image_environment(cache), log)
        try:
            report = asyncio.run(crowd(url.replace("http", "ws", 1), proc.pid, args.heavy, args.light, args.group))
        finally:
            stop_server(proc)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
