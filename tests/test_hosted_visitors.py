"""Many visitors, one hosted server: issue 42's security test replayed against the Docker image's command.

One server for the module: the image's command (``streamlit run serve.py``) and environment, on loopback, with the
limits of the test that found the rows (``DPBO_MAX_SECONDS=30``) and a smaller memory limit
(``DPBO_MAX_MEMORY_MB=512``) so that the sizing rule is a bound a wrong server would cross; stopped by its pid.
Visitors speak Streamlit's websocket protocol (benchmarks/ws_visitor.py); a visitor behind the proxy is a session
whose handshake carries ``X-Forwarded-For`` (the server trusts it from loopback, as from a proxy on its machine).

- A Parquet of 500 settings, each labelled with a unique 60 kB string (a few kB on disk), opened alone and then
  by three visitors at once while two heavy runs compute: every visitor reads the frontier with a sentence saying
  the labels are shortened, the server process grows by less than its answers' budget, at most ``DPBO_MAX_RUNS``
  walled workers compute at once, and the process tree stays within the sizing rule of docs/hosting.md. Before
  issue 42 the server held every label several times and sent the tab a message of hundreds of MB (Streamlit's
  MessageSizeError box), and the uploads computed in walled workers beside the runs' (five at once).
- One visitor's 20 tabs rerun their pages as fast as they can: the health endpoint answers within 1 s throughout
  (before: every probe timed out at 5 s).
- One visitor's 6 tabs press Run: the fifth and sixth are refused with the cap's sentence, and another visitor's
  run starts before the tabs' third and fourth (before: fifth in the queue).
- A NaN sent into a whole-number control, and the metrics endpoint: one sentence, and 404.

About 2-3 minutes on the loaded 2-core machine (the server's start, the uploads and the runs).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
import time
import urllib.error
import urllib.request

import psutil
import pytest

from benchmarks.bench_visitors import long_labels
from benchmarks.loopback import image_environment, start_server, stop_server, tree
from benchmarks.ws_visitor import Visitor
from hosting import image_config

MEMORY_MB = 512
RUNS = 2
SETTINGS = 500
HEALTH_SECONDS = 1.0
RUN_QUERY = "agents=200&iterations=40&runs=6"     # a comparison of a few seconds (priced well under the limits)


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
            self.workers = max(self.workers, sum(parent in forked for parent in forked.values()))

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
                "errors": seen.errors}
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
    url, _ = server

    async def flood() -> list[float]:
        tabs = [await Visitor(url, "203.0.113.50").connect() for _ in range(20)]
        for k, tab in enumerate(tabs):
            await tab.open(["", "Privacy_accountant", "Teaching_view", "Federated_BO"][k % 4], until_finished=False)
        stop, health = asyncio.Event(), []

        async def rerun(tab: Visitor) -> None:
            async def drain():
                while not stop.is_set():
                    try:
                        await asyncio.wait_for(tab.ws.recv(), 1.0)
                    except asyncio.TimeoutError:
                        continue
            reader = asyncio.ensure_future(drain())
            while not stop.is_set():
                await tab.send_rerun()
                await asyncio.sleep(0.02)
            reader.cancel()

        async def probe() -> None:
            loop = asyncio.get_running_loop()
            while not stop.is_set():
                health.append(await loop.run_in_executor(None, _health, url))
                await asyncio.sleep(0.25)

        tasks = [asyncio.ensure_future(rerun(tab)) for tab in tabs] + [asyncio.ensure_future(probe())]
        await asyncio.sleep(15.0)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        for tab in tabs:
            await tab.close()
        return health

    health = play(flood())
    assert len(health) >= 10, health
    assert max(health) < HEALTH_SECONDS, sorted(health)[-5:]


def test_another_visitor_is_served_before_one_visitors_many_tabs_and_a_tab_too_many_gets_a_sentence(server):
    url, _ = server

    async def visit():
        order: list[str] = []
        tabs = []
        for k in range(6):
            started = asyncio.Event()
            tabs.append((started, asyncio.ensure_future(_marked(url, "203.0.113.60", f"tab {k + 1}", order, started))))
            await asyncio.sleep(0.3)
        waiting = time.monotonic() + 120
        while len(QUEUED) < 2 and time.monotonic() < waiting:          # two of the tabs wait in the queue
            await asyncio.sleep(0.1)
        other = await _marked(url, "198.51.100.61", "other", order, asyncio.Event(), query="")
        results = [other] + list(await asyncio.gather(*(task for _, task in tabs)))
        return order, results

    QUEUED.clear()
    order, results = play(visit())
    refused = [r for r in results if any("the most one visitor may have at once (4)" in e for e in r["errors"])]
    assert len(refused) == 2, results                      # the fifth and sixth tab: a sentence, not a queue place
    tabs_started = [who for who in order if who.startswith("tab")]
    assert order.index("other") < order.index(tabs_started[2]), order    # before the tabs still queued


QUEUED: set[str] = set()       # the tabs that were told they wait in the queue


async def _marked(url: str, address: str, who: str, order: list, started: asyncio.Event,
                  query: str = RUN_QUERY) -> dict:
    """A Run on Federated BO; ``who`` is appended to ``order`` when its run's first iteration is reported."""
    visitor = await Visitor(url, address, timeout=400).connect()

    def heard(text: str) -> None:
        if "Waiting for a free place" in text:
            QUEUED.add(who)
        elif "iteration" in text and not started.is_set():
            started.set()
            order.append(who)
    try:
        await visitor.open("Federated_BO", query)
        seen = await visitor.press("fbo_run", on_text=heard)
        return {"who": who, "errors": seen.errors, "exceptions": seen.exceptions}
    finally:
        await visitor.close()


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
