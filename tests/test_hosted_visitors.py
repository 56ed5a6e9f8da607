"""Many visitors, one hosted server: issue 42's security test replayed against the Docker image's command.

One server for the module: the image's command (``streamlit run serve.py``) and environment, on loopback, with the
limits of the test that found the rows (``DPBO_MAX_SECONDS=30``) and a smaller memory limit
(``DPBO_MAX_MEMORY_MB=512``) so that the sizing rule is a bound a wrong server would cross; stopped by its pid.
Visitors speak Streamlit's websocket protocol (benchmarks/ws_visitor.py); a visitor behind the proxy is a session
whose handshake carries ``X-Forwarded-For`` (the server trusts it from loopback, as from a proxy on its machine).

- A Parquet of 250 settings, each labelled with a unique 60 kB string (a few kB on disk), opened alone and then
  by three visitors at once while two heavy runs compute: every visitor reads the frontier with a sentence saying
  the labels are shortened, the server process grows by less than its answers' budget, at most ``DPBO_MAX_RUNS``
  walled workers compute at once, and the process tree stays within the sizing rule of docs/hosting.md. Before
  issue 42 the server held every label several times and sent the tab a message of hundreds of MB (Streamlit's
  MessageSizeError box), and the uploads computed in walled workers beside the runs' (five at once).
- One visitor's 20 tabs rerun their pages as fast as they can: the health endpoint answers within 1 s throughout
  (before: every probe timed out at 5 s).
- One visitor's 6 tabs press Run: the fifth and sixth are refused with the cap's sentence, and another visitor's
  run starts before the tabs still waiting (before: fifth in the queue).
- A NaN sent into a whole-number control, and the metrics endpoint: one sentence, and 404.

About 2-3 minutes on the loaded 2-core machine (the server's start, the uploads and the runs).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import threading
import time
import urllib.error
import urllib.request

import psutil
import pytest

from benchmarks.bench_visitors import long_labels
from benchmarks.loopback import HealthProbe, image_environment, start_server, stop_server, tree
from benchmarks.ws_visitor import Visitor
from hosting import image_config

MEMORY_MB = 512
RUNS = 2
SETTINGS = 250
HEALTH_SECONDS = 1.0
RUN_QUERY = "agents=200&iterations=40&runs=6"     # a comparison of a few seconds (priced well under the limits)
LONG_RUN = "runs=18"          # the issue's: the default comparison, 18 runs a line, about 20 s alone


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    _, command = image_config()
    folder = tmp_path_factory.mktemp("hosted-visitors")
    env = dict(image_environment(folder / "cache"), DPBO_DATA_DIR=str(folder / "data"), DPBO_MAX_SECONDS="30",
               DPBO_MAX_MEMORY_MB=str(MEMORY_MB), DPBO_MAX_RUNS=str(RUNS))
    with open(folder / "server.log", "w") as log:
        proc, url = start_server(command, env, log)
        try:
            play(_warm(url))
            yield url, proc.pid
        finally:
            stop_server(proc)


def play(coroutine, timeout: float = 600):
    """``coroutine`` to its end in a thread of its own (bounded)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(asyncio.wait_for(coroutine, timeout))).result()


async def _warm(url: str) -> None:
    """Every page the tests open, once: the baseline is a server that has imported them."""
    for page, query in (("Tradeoff_explorer", ""), ("Federated_BO", ""), ("Teaching_view", ""),
                        ("Privacy_accountant", ""), ("", "")):
        visitor = await Visitor(url, "192.0.2.1").connect()
        await visitor.open(page, query)
        await visitor.close()


class Watch:
    """The server's resident memory, the tree's proportional memory (PSS: shared pages counted once, what a
    container is charged) and the walled workers alive at once, sampled every 50 ms from /proc."""

    def __init__(self, pid: int):
        self.pid, self.server = pid, psutil.Process(pid)
        self.base = self.peak = self.server.memory_info().rss / 2**20
        self.tree_peak, self.workers = 0.0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            self.peak = max(self.peak, self.server.memory_info().rss / 2**20)
            total, forked = 0.0, {}
            for proc in tree(self.pid):
                try:
                    total += proc.memory_full_info().pss / 2**20
                    if any("forkserver" in part for part in proc.cmdline()):
                        forked[proc.pid] = proc.ppid()
                except psutil.Error:
                    pass
            self.tree_peak = max(self.tree_peak, total)
            roots = {pid for pid, parent in forked.items() if parent not in forked}       # the forkserver
            self.workers = max(self.workers, sum(parent in roots for parent in forked.values()))   # its children

    def __enter__(self) -> "Watch":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(5)


def answers_budget_mb() -> float:
    """What the server may hold for running jobs and kept analyses: two answers per running job and the kept
    analyses (engine.limits.answer, ui.sweep.analysis), as docs/hosting.md's sizing rule counts them."""
    from engine.limits import ANSWER_MB
    from ui.sweep.analysis import KEPT_MB

    return RUNS * 2 * ANSWER_MB + KEPT_MB


async def _upload(url: str, data: bytes, name: str, address: str) -> dict:
    visitor = await Visitor(url, address, timeout=400).connect()
    try:
        await visitor.open("Tradeoff_explorer")
        seen = await visitor.upload("sw_upload", name, data)
        return {"exceptions": seen.exceptions, "charts": seen.kinds.count("plotly_chart"), "bytes": seen.bytes,
                "shortened": [t for t in seen.texts if "longer than" in t and "characters" in t],
                "errors": [e for e in seen.errors if name in e or "upload" in e]}     # not the sweep tab's own
    finally:
        await visitor.close()


async def _run(url: str, address: str, query: str, started: asyncio.Event | None = None) -> dict:
    visitor = await Visitor(url, address, timeout=400).connect()
    try:
        await visitor.open("Federated_BO", query)
        seen = await visitor.press("fbo_run", on_text=lambda text: started.set() if started and "iteration" in text
                                   else None)
        return {"exceptions": seen.exceptions, "errors": seen.errors, "charts": seen.kinds.count("plotly_chart")}
    finally:
        await visitor.close()


def test_long_labels_alone_and_three_at_once_beside_two_runs_keep_the_server_and_the_tree_within_bounds(server):
    url, pid = server

    async def visit():
        alone = await _upload(url, long_labels(SETTINGS, seed=1), "alone.parquet", "203.0.113.1")
        running = [asyncio.Event(), asyncio.Event()]
        runs = [asyncio.ensure_future(_run(url, f"203.0.113.{20 + k}", RUN_QUERY, running[k])) for k in range(2)]
        await asyncio.wait_for(asyncio.gather(*(event.wait() for event in running)), 300)
        uploads = await asyncio.gather(*(_upload(url, long_labels(SETTINGS, seed=10 + k), f"t{k}.parquet",
                                                 f"203.0.113.{30 + k}") for k in range(3)))
        return [alone, *uploads], await asyncio.gather(*runs)

    with Watch(pid) as watch:
        uploads, runs = play(visit())
    for seen in uploads:
        assert not seen["exceptions"] and not seen["errors"], seen
        assert seen["charts"] >= 1 and seen["shortened"], seen          # the frontier, and the sentence
        assert seen["bytes"] < 10e6, seen["bytes"]                       # what the tab is sent is bounded too
    assert all(not r["exceptions"] and not r["errors"] and r["charts"] for r in runs), runs
    grown = watch.peak - watch.base
    assert grown < answers_budget_mb(), (watch.base, watch.peak)
    assert watch.workers <= RUNS, watch.workers
    rule = RUNS * MEMORY_MB + 1024
    assert watch.tree_peak < rule, (watch.tree_peak, rule)
    print(f"\nserver {watch.base:.0f} -> {watch.peak:.0f} MB (budget +{answers_budget_mb():.0f}), tree PSS peak "
          f"{watch.tree_peak:.0f} MB (rule {rule} MB), walled workers at once {watch.workers}")


def _health(url: str) -> float:
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=5) as response:
            response.read()
    except OSError:
        return float("inf")
    return time.perf_counter() - started


def test_a_rerun_flood_from_one_visitors_twenty_tabs_leaves_the_health_check_under_a_second(server):
    """The health endpoint probed every 0.25 s by a process of its own (the Dockerfile's 5 s time-out) while one
    visitor's 20 tabs rerun their pages as fast as they can for 15 s (each tab asks for another link every time, so
    no request repeats): no probe goes unanswered (the Dockerfile's health check never fails) and 95 % of them answer
    within 1 s. (Before issue 42 every probe timed out. On a 2-core machine shared with other work, a single answer
    can still wait for the interpreter's own garbage collection: the bound is on the 95th percentile, the slowest
    answer is printed.)"""
    url, _ = server

    async def flood() -> int:
        tabs = [await Visitor(url, "203.0.113.50").connect() for _ in range(20)]
        for k, tab in enumerate(tabs):
            await tab.open(["", "Privacy_accountant", "Teaching_view", "Federated_BO"][k % 4], until_finished=False)
        stop, sent = asyncio.Event(), [0]

        async def rerun(tab: Visitor) -> None:
            async def drain():
                while not stop.is_set():
                    try:
                        await asyncio.wait_for(tab.ws.recv(), 1.0)
                    except asyncio.TimeoutError:
                        continue
            reader, base = asyncio.ensure_future(drain()), tab.query
            while not stop.is_set():
                tab.query = f"{base}&n={sent[0]}" if base else f"n={sent[0]}"
                await tab.send_rerun()
                sent[0] += 1
                await asyncio.sleep(0.02)
            reader.cancel()

        tasks = [asyncio.ensure_future(rerun(tab)) for tab in tabs]
        await asyncio.sleep(15.0)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.gather(*(tab.close() for tab in tabs), return_exceptions=True)
        return sent[0]

    with HealthProbe(url) as flooded:
        sent = play(flood())
    latencies = sorted(flooded.latencies)
    assert sent > 1000, sent                  # a flood: thousands of requests
    assert len(latencies) >= 20, latencies
    assert latencies[-1] < 5.0, latencies[-5:]                               # every probe answered
    assert latencies[int(0.95 * (len(latencies) - 1))] < HEALTH_SECONDS, latencies[-5:]
    print(f"\nhealth while flooded ({sent} requests): {len(latencies)} probes, median "
          f"{latencies[len(latencies) // 2]:.3f} s, slowest {latencies[-1]:.2f} s")


def test_another_visitor_is_served_before_one_visitors_many_tabs_and_a_tab_too_many_gets_a_sentence(server):
    """One visitor's 6 tabs press Run on the issue's long comparison at once; two compute (``DPBO_MAX_RUNS``), two
    wait, the fifth and sixth are refused with the cap's sentence. Another visitor then presses Run: its run is the
    next to start, before the waiting tabs'. The order of starts is what is checked (no machine's speed)."""
    url, _ = server

    async def visit():
        order: list[str] = []
        tabs = [await Visitor(url, "203.0.113.60", timeout=600).connect() for _ in range(6)]
        other = await Visitor(url, "198.51.100.61", timeout=600).connect()
        try:
            for tab in tabs:
                await tab.open("Federated_BO", LONG_RUN)
            await other.open("Federated_BO")
            queued: set[str] = set()
            pressed = [asyncio.ensure_future(_press(tab, f"tab {k + 1}", order, queued))
                       for k, tab in enumerate(tabs)]
            deadline = time.monotonic() + 300
            while (len(set(queued) - set(order)) < 2 or len(order) < 2) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)            # two tabs compute, two wait for a place
            assert len(set(queued) - set(order)) >= 2 and len(order) >= 2, (queued, order)
            waiting = set(queued) - set(order)     # told to wait, not started: the tabs the other visitor must pass
            theirs = asyncio.ensure_future(_press(other, "other", order, set()))
            while "other" not in order and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            done = [task for task in pressed if task.done()]
            for task in pressed + [theirs]:
                task.cancel()                       # the order is known: the tabs close, their runs stop
            refused = [task.result() for task in done if not task.cancelled() and task.exception() is None]
            return order, waiting, [r for r in refused if r]
        finally:
            for visitor in tabs + [other]:
                await visitor.close()

    order, waiting, refused = play(visit())
    assert len(refused) == 2 and all("the most one visitor may have at once (4)" in r[0] for r in refused), refused
    assert "other" in order, order
    assert waiting and all(who not in order or order.index("other") < order.index(who) for who in waiting), \
        (order, waiting)
    print(f"\nstarts in order: {order}; waiting when the other visitor pressed Run: {sorted(waiting)}")


async def _press(visitor: Visitor, who: str, order: list, queued: set) -> list[str]:
    """Press Run; ``who`` joins ``order`` when its run's first iteration is reported, ``queued`` when it is told it
    waits. Returns the refusal's sentences when the run was refused (it ends at once), else runs until cancelled."""
    def heard(text: str) -> None:
        if "Waiting for a free place" in text:
            queued.add(who)
        elif re.match(r"iteration \d+ of \d+", text) and who not in order:     # its progress bar
            order.append(who)
    seen = await visitor.press("fbo_run", on_text=heard)
    return [e for e in seen.errors if "queued or running" in e]


def test_a_crafted_nan_gets_one_sentence_and_the_metrics_are_closed(server):
    url, _ = server

    async def visit():
        visitor = await Visitor(url, "203.0.113.70").connect()
        try:
            await visitor.open("Federated_BO")
            nan = await visitor.set("fbo_runs", float("nan"))
            choice = await visitor.set("fbo_accountant", 99)
            return nan, choice
        finally:
            await visitor.close()

    nan, choice = play(visit())
    assert not nan.exceptions and any("could not handle" in e for e in nan.errors), nan.errors
    assert not choice.exceptions
    with pytest.raises(urllib.error.HTTPError) as closed:
        urllib.request.urlopen(url + "/_stcore/metrics", timeout=10)
    assert closed.value.code == 404
    assert _health(url) < 5


def test_the_image_serves_the_app_through_serve_py():
    _, command = image_config()
    assert command[:3] == ["streamlit", "run", "serve.py"]
    env, _ = image_config()
    assert env["STREAMLIT_CLIENT_SHOW_ERROR_LINKS"] == "false" and env["STREAMLIT_RUNNER_FAST_RERUNS"] == "false"
    assert os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(__file__)), "serve.py"))
