"""A crowd on a hosted explorer: 20 concurrent browser sessions, 8 heavy and 12 light (loopback only).

Starts the Docker image's command with the image's environment (as tests/browser/test_hosted.py does),
opens 8 sessions that each press Run on a federated BO comparison of tens of CPU seconds (they share the
server's pool of DPBO_MAX_RUNS places and queue), and while those compute opens 12 light sessions that
load the privacy accountant and the teaching view. Reports, for the light sessions, the time from opening
the page to its first drawn chart (median and 95th percentile; goal under 1 s) and the latency of
``/_stcore/health`` sampled every 0.25 s while the heavy runs compute (goal under 1 s).

Usage::

    python -m benchmarks.bench_load [--heavy 8] [--light 12] [--rounds 2]

Prints the figures and writes ``benchmarks/results/bench_load.json``. Every session is closed and the
server stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from benchmarks import save_results

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks.loopback import cpu_seconds, image_config, image_environment, start_server, stop_server  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

try:
    from playwright.async_api import Error as PlaywrightError
except ImportError:  # pragma: no cover - playwright comes with requirements-dev.txt
    PlaywrightError = Exception

HEAVY = "/Federated_BO?agents=300&features=100&iterations=100&runs=4"
LIGHT = ["/Privacy_accountant", "/Teaching_view", "/Privacy_accountant?q=0.15&z=1.2", "/Teaching_view?agents=50"]
DRAWN = "() => document.querySelector(\"[data-testid='stPlotlyChart'] g.trace\") !== null"  # any drawn trace
SERVER: list = []          # the server's process, for its CPU use


def server_cpu() -> float:
    return cpu_seconds(SERVER[0].pid)


def start_hosted(cache: str, extra: dict | None = None):
    """The image's command with the image's environment (and ``extra`` variables), on loopback."""
    _, command = image_config()
    return start_server(command, dict(image_environment(cache), **(extra or {})), subprocess.DEVNULL)


class HealthProbe:
    """Polls /_stcore/health every 0.25 s in a thread and keeps the latencies."""

    def __init__(self, url: str):
        self.url, self.latencies, self._stop = f"{url}/_stcore/health", [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(self.url, timeout=10):
                    pass
                self.latencies.append(time.perf_counter() - start)
            except OSError:
                self.latencies.append(10.0)
            self._stop.wait(0.25)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(15)


async def heavy_session(browser, url: str, started: list) -> dict:
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    page.set_default_timeout(120_000)
    await page.goto(url + HEAVY, timeout=120_000)
    run = page.get_by_role("button", name="Run", exact=True)
    await run.wait_for(timeout=60_000)
    await page.wait_for_timeout(500)
    await run.click()
    started.append(time.perf_counter())
    await page.wait_for_timeout(1500)
    # Then the visitor looks elsewhere, as a background tab: the browser throttles the page (here 50 times, as
    # Chromium slows background timers), its session stays connected and the server keeps computing and
    # streaming to it. Eight renderers redrawing live charts at full speed would otherwise compete with the
    # server under test for this machine's two cores.
    cdp = await context.new_cdp_session(page)
    await cdp.send("Emulation.setCPUThrottlingRate", {"rate": 50})
    return dict(context=context, page=page, cdp=cdp)


async def light_session(browser, url: str, path: str, delay: float = 0.0) -> float:
    """Seconds from opening ``path`` to its first drawn chart (``inf`` when not within two minutes)."""
    await asyncio.sleep(delay)
    context = await browser.new_context(viewport={"width": 1300, "height": 900})
    page = await context.new_page()
    page.set_default_timeout(120_000)
    start = time.perf_counter()
    try:
        await page.goto(url + path, timeout=120_000)
        await page.wait_for_function(DRAWN, timeout=120_000, polling=20)
        seconds = time.perf_counter() - start
    except PlaywrightError:
        seconds = float("inf")
    await context.close()
    return seconds


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


async def measure(url: str, heavy: int, light: int, rounds: int, spread: float) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        # Warm the server's caches as any long-running host would be (first imports, the PO-GP-UCB task).
        await light_session(browser, url, LIGHT[0])
        await light_session(browser, url, LIGHT[1])
        started: list[float] = []
        heavies = await asyncio.gather(*(heavy_session(browser, url, started) for _ in range(heavy)))
        await asyncio.sleep(2.0)               # the first heavy runs are computing, the others queue
        cpu_start = server_cpu()
        times = []
        burst = []
        with HealthProbe(url) as health:
            start = time.perf_counter()
            for _ in range(rounds):
                # Visitors arrive one after another (spread over `spread` seconds), each loading a light page.
                paths = [LIGHT[i % len(LIGHT)] for i in range(light)]
                times += await asyncio.gather(*(light_session(browser, url, p, delay=i * spread / light)
                                                for i, p in enumerate(paths)))
            # And once all at the same moment.
            burst = await asyncio.gather(*(light_session(browser, url, LIGHT[i % len(LIGHT)])
                                           for i in range(light)))
            window = time.perf_counter() - start
        server_share = (server_cpu() - cpu_start) / window
        for session in heavies:
            await session["cdp"].send("Emulation.setCPUThrottlingRate", {"rate": 1})
        queued = 0
        for session in heavies:
            queued += await session["page"].get_by_text("Waiting for a free place").count() > 0
        shots = ROOT / "test-artifacts" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        if heavies:
            await heavies[-1]["page"].screenshot(path=str(shots / "load_queued_run.png"))
        for session in heavies:
            await session["context"].close()
        await browser.close()
    return dict(light_first_chart=times, light_burst=burst, health=health.latencies, heavy_queued_at_end=queued,
                server_cores_busy=server_share)


def main() -> int:
    # A timeout's SIGTERM unwinds like an exception, so the server and the browser are always stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heavy", type=int, default=8)
    parser.add_argument("--light", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=1, help="waves of light sessions while the heavy ones run")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the server (repeatable)")
    parser.add_argument("--spread", type=float, default=12.0, help="seconds over which a wave of light visitors "
                                                                    "arrives")
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="dpbo-load-")
    load_before = os.getloadavg()
    proc, url = start_hosted(cache, dict(item.split("=", 1) for item in args.env))
    SERVER.append(proc)
    try:
        result = asyncio.run(measure(url, args.heavy, args.light, args.rounds, args.spread))
    finally:
        stop_server(proc)
    times, health = result["light_first_chart"], result["health"]
    summary = dict(
        sessions=dict(heavy=args.heavy, light=args.light * args.rounds), env=args.env, load_before=load_before,
        load_after=os.getloadavg(), cores=os.cpu_count(),
        light_first_chart_median=statistics.median(times), light_first_chart_p95=percentile(times, 0.95),
        light_first_chart_max=max(times), light_timeouts=sum(t == float("inf") for t in times + result["light_burst"]),
        burst_first_chart_median=statistics.median(result["light_burst"]),
        burst_first_chart_p95=percentile(result["light_burst"], 0.95), health_median=statistics.median(health),
        health_p95=percentile(health, 0.95), health_max=max(health), health_samples=len(health),
        heavy_still_queued_at_end=result["heavy_queued_at_end"],
        server_cores_busy_during_light=result["server_cores_busy"])
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in summary.items()}, indent=1))
    save_results("bench_load.json", dict(summary, **result), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
