"""Hosting mode attacked from a browser, on loopback, against the Docker image's own command and environment.

Each test is one finding of the hosting probe (issue 12) replayed the way a visitor would do it; every loop is
bounded and stops itself. The server's CPU and memory are read with psutil (the server process and its
children).
"""

from __future__ import annotations

import os
import threading
import urllib.parse
from pathlib import Path

import psutil
import pytest

from benchmarks.loopback import (FakeScheduler, cpu_seconds, image_environment, rss_mb, seconds_until_quiet,
                                start_server, stop_server, tree)
from hosting import image_config
from tests.browser.conftest import need_chromium, screenshot, wait_for_app

pytestmark = pytest.mark.browser

OUTSIDE = Path("/tmp/dpbo-hosted-outside")
BARS = "() => document.querySelector(\"[data-testid='stPlotlyChart'] .barlayer .trace\") !== null"
ERROR_BOX = "document.querySelector(\"[data-testid='stException']\") !== null"
DRAWN = "() => document.querySelector(\"[data-testid='stPlotlyChart'] .scatterlayer .trace\") !== null"
# Two lines (TS and DP-FTS-DE) that compute for tens of seconds, inside the image's limits.
HEAVY = "agents=300&features=100&iterations=100&runs=4"
MEMORY_LIMIT_MB = 2048      # the image's DPBO_MAX_MEMORY_MB (default)


def assert_no_traceback(page) -> None:
    assert page.locator("[data-testid='stException']").count() == 0
    assert "Traceback" not in page.inner_text("body")


def project_files() -> set[Path]:
    """The project's files, without the test artifacts and the virtual environments (.venv, CI's .venv-ci)."""
    return {p for p in Path(__file__).resolve().parents[2].rglob("*")
            if "test-artifacts" not in p.parts and not any(part.startswith(".venv") for part in p.parts)}


def test_hosting_without_docker_runs_the_images_command_with_its_environment(page, tmp_path):
    """`python -m hosting` (docs/hosting.md), on loopback: the image's settings, read from the Dockerfile."""
    need_chromium()
    image_env, _ = image_config()
    env = dict(os.environ, DPBO_CACHE_DIR=str(tmp_path / "cache"))
    for name, value in image_env.items():           # nothing of the image's set beforehand
        if name not in ("DPBO_CACHE_DIR", "DPBO_DATA_DIR"):
            env.pop(name, None)
    with open(tmp_path / "streamlit.log", "w") as log:
        proc, url = start_server(["hosting"], env, log)
        try:
            server_env = psutil.Process(proc.pid).environ()
            for name, value in image_env.items():
                if name not in ("DPBO_CACHE_DIR", "DPBO_DATA_DIR"):
                    assert server_env.get(name) == value, (name, server_env.get(name), value)
            assert server_env["DPBO_CACHE_DIR"] == str(tmp_path / "cache")
            page.goto(f"{url}/Tradeoff_explorer")
            wait_for_app(page)
            assert_no_traceback(page)
            page.get_by_role("button", name="Run sweep").wait_for()
            # Hosting mode: without the host's scheduler the page offers no Dask.
            assert page.get_by_text("Dask", exact=False).count() == 0
        finally:
            stop_server(proc)
    assert "external IP" not in (tmp_path / "streamlit.log").read_text()


def test_the_teaching_views_walled_round_works_on_a_fresh_server_opened_there_first(page, tmp_path):
    """The teacher's first open of a hosted explorer: the image's command and environment, a server no other page
    has warmed, the Teaching view with its defaults. Its round computes in a walled worker; the round's
    Streamlit-cached function must travel there although no live-run page was ever imported (it crashed with
    "cannot pickle '_thread.lock' object"). The session's shared server could not see this: an earlier page had
    imported the live-run loop, which registered how cached functions travel, and the extreme link values
    refused the round before it computed."""
    need_chromium()
    _, command = image_config()
    with open(tmp_path / "streamlit.log", "w") as log:
        proc, url = start_server(command, image_environment(tmp_path / "cache"), log)
        try:
            page.goto(f"{url}/Teaching_view")
            wait_for_app(page, timeout_ms=90_000)
            # The round's vectors drawn, or an error box: whichever comes first (bounded).
            page.wait_for_function(f"() => ({BARS})() || {ERROR_BOX}", timeout=90_000)
            assert_no_traceback(page)
        finally:
            stop_server(proc)
    assert "cannot pickle" not in (tmp_path / "streamlit.log").read_text()


def test_a_visitor_cannot_make_the_server_connect_to_a_scheduler(hosted, page):
    fake = FakeScheduler()
    try:
        query = urllib.parse.urlencode({"executor": "dask", "scheduler": f"tcp://127.0.0.1:{fake.port}",
                                        "base": "agents = 5\niterations = 2\nfeatures = 10", "v1": "0.25",
                                        "p2": "none", "refs": "", "runs": 1, "workers": 1})
        page.goto(f"{hosted.url}/Tradeoff_explorer?{query}")
        wait_for_app(page)
        assert page.get_by_label("scheduler address").count() == 0
        assert page.get_by_text("Dask: the host's scheduler").count() == 0     # the host configured none
        page.get_by_role("button", name="Run sweep").click()
        page.get_by_text("Done:", exact=False).first.wait_for(timeout=90_000)
        wait_for_app(page)
        assert_no_traceback(page)
    finally:
        fake.close()
    assert fake.connections == 0


def test_no_path_like_setting_writes_outside_the_cache(hosted, page):
    project = project_files()
    for path, query in [
        ("Tradeoff_explorer", {"tool": "hype", "p1": "epsilon", "v1": "1", "p2": "none", "runs": 1,
                               "base": f"mode = data\nclients = 20\nrepetitions = 50\ncache_dir = {OUTSIDE}"}),
        ("Tradeoff_explorer", {"p1": "q", "v1": "0.25", "p2": "none", "runs": 1, "refs": "",
                               "base": f"dataset = landmine\nagents = 5\ndata_dir = {OUTSIDE}/etc"}),
        ("Federated_BO", {"data_dir": str(OUTSIDE), "cache_dir": str(OUTSIDE), "out": str(OUTSIDE)}),
        ("DP_HYPE", {"mode": "data", "cache_dir": str(OUTSIDE)}),
    ]:
        page.goto(f"{hosted.url}/{path}?{urllib.parse.urlencode(query)}")
        wait_for_app(page)
        assert_no_traceback(page)
        if path == "Tradeoff_explorer":
            page.get_by_text("has no setting", exact=False).first.wait_for()
            assert page.get_by_role("button", name="Run sweep").is_disabled()
        elif path == "Federated_BO":
            page.get_by_role("button", name="Run", exact=True).click()
            page.get_by_text("Finished", exact=False).first.wait_for(timeout=120_000)
    assert not OUTSIDE.exists()
    created = project_files() - project
    assert not [p for p in created if "__pycache__" not in p.parts and p.suffix != ".pyc"]


# The server tree's CPU seconds after Stop (or a closed tab) until it is quiet, as a share of the CPU seconds the
# run had computed before: a share of CPU time against CPU time of the same processes carries over between
# machines and loads. Not stopped, the run computes for tens of seconds more (many times what it had done).
AFTER_STOP_SHARE = 0.5
QUIET_GUARD = 60.0          # seconds: a guard against work that never ends, not a bound on this machine's speed


class CpuMeter:
    """The CPU seconds of a server's processes, sampled every 0.1 s in a thread: a process keeps the last figure
    seen for it after it ended (a killed worker does not take its CPU time out of the sum)."""

    def __init__(self, pid: int):
        self.pid, self.seen, self.lock = pid, {}, threading.Lock()
        self.stopped = threading.Event()
        self.sample()
        threading.Thread(target=self._loop, daemon=True).start()

    def sample(self) -> float:
        for proc in tree(self.pid):
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            with self.lock:
                key = (proc.pid, proc.create_time())
                self.seen[key] = max(self.seen.get(key, 0.0), times.user + times.system)
        with self.lock:
            return sum(self.seen.values())

    def _loop(self) -> None:
        while not self.stopped.wait(0.1):
            self.sample()

    def close(self) -> None:
        self.stopped.set()


def run_then(page, hosted, action) -> tuple[float, float]:
    """Start the heavy run, let it compute, do ``action``; returns (the CPU seconds the server's processes spent
    from ``action`` until quiet, as a share of those they spent from Run until ``action``; RSS growth)."""
    base = rss_mb(hosted.pid)
    meter = CpuMeter(hosted.pid)
    cpu_at_start = meter.sample()
    page.goto(f"{hosted.url}/Federated_BO?{HEAVY}")
    wait_for_app(page)
    run = page.get_by_role("button", name="Run", exact=True)
    assert run.is_enabled()
    run.click()
    page.wait_for_function(DRAWN, timeout=120_000, polling=100)
    page.wait_for_timeout(1500)
    assert cpu_seconds(hosted.pid) > 0
    peak = rss_mb(hosted.pid) - base
    cpu_at_action = meter.sample()
    action()
    try:
        assert seconds_until_quiet(hosted.pid, limit=QUIET_GUARD) < QUIET_GUARD, "the work did not end"
        share = (meter.sample() - cpu_at_action) / (cpu_at_action - cpu_at_start)
    finally:
        meter.close()
    return share, max(peak, rss_mb(hosted.pid) - base)


def test_stop_ends_the_work_at_once(hosted, page):
    def stop():
        page.locator("[data-testid='stMain']").get_by_role("button", name="Stop", exact=True).click()

    share, growth = run_then(page, hosted, stop)
    print(f"stop: CPU after Stop {share:.0%} of the CPU before it, RSS growth {growth:.0f} MB")
    assert share < AFTER_STOP_SHARE, share
    assert growth < MEMORY_LIMIT_MB
    page.get_by_text("the charts show the iterations that finished").first.wait_for(timeout=20_000)
    assert_no_traceback(page)
    screenshot(page, "hosted_fbo_stopped")


def test_closing_the_tab_ends_the_work_at_once(hosted, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        share, growth = run_then(page, hosted, page.close)
    finally:
        context.close()
    print(f"tab close: CPU after the close {share:.0%} of the CPU before it, RSS growth {growth:.0f} MB")
    assert share < AFTER_STOP_SHARE, share
    assert growth < MEMORY_LIMIT_MB


def test_no_session_sees_another_sessions_results(hosted, browser):
    first, second = (browser.new_context(viewport={"width": 1400, "height": 1000}) for _ in range(2))
    try:
        a, b = first.new_page(), second.new_page()
        a.goto(f"{hosted.url}/DP_HYPE?repetitions=300")
        wait_for_app(a)
        a.get_by_role("button", name="Run", exact=True).click()
        a.get_by_text("300 votes of 250 clients", exact=False).first.wait_for(timeout=60_000)
        b.goto(f"{hosted.url}/DP_HYPE")
        wait_for_app(b)
        assert b.get_by_text("votes of 250 clients", exact=False).count() == 0
        assert b.get_by_text("good candidate chosen").count() == 0
    finally:
        first.close()
        second.close()


def test_an_upload_above_the_limit_is_refused_at_once(hosted, page, tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "w") as handle:
        handle.write("setting,utility,privacy_loss\n")
        line = "q=0.25,0.5,1.0\n" * 1000
        while handle.tell() < 21 * 2**20:
            handle.write(line)
    page.goto(f"{hosted.url}/Tradeoff_explorer")
    wait_for_app(page)
    page.get_by_role("tab", name="Open a saved sweep table").click()
    cpu = cpu_seconds(hosted.pid)
    page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(big))
    page.get_by_text("20", exact=False).filter(has_text="MB").first.wait_for(timeout=60_000)
    assert seconds_until_quiet(hosted.pid, limit=QUIET_GUARD) < QUIET_GUARD
    # Refused before it is read: the server spent less CPU on it (its receipt and the page's rerun) than reading
    # 21 MB of CSV takes (seconds of CPU).
    spent = cpu_seconds(hosted.pid) - cpu
    print(f"upload refused: {spent:.2f} CPU seconds")
    assert spent < 2.0, spent
    assert_no_traceback(page)


def test_a_long_accounting_ends_with_the_tab(hosted, browser):
    # The probe's /Privacy_accountant?steps=100000 kept a core busy for over 20 minutes after the tab closed.
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(f"{hosted.url}/Privacy_accountant?steps=100000")
        page.wait_for_timeout(1500)
        at_close = cpu_seconds(hosted.pid)
        page.close()
        # Not stopped, it computes for twenty minutes: quiet within the guard is the work ended with the tab.
        quiet = seconds_until_quiet(hosted.pid, limit=QUIET_GUARD)
    finally:
        context.close()
    print(f"accountant tab close: quiet after {quiet:.2f} s, {cpu_seconds(hosted.pid) - at_close:.2f} CPU s")
    assert quiet < QUIET_GUARD, "the accounting did not end with the tab"


def test_every_page_answers_extreme_links_with_sentences(hosted, page):
    extreme = {"agents": "1e999", "z": "1e-200", "q": "1e-300", "sigma": "1e308", "epsilon": "1e-300",
               "workers": "64", "iterations": "-1", "runs": "nan"}
    for path in ["", "Federated_BO", "Teaching_view", "Privacy_accountant", "DP_HYPE", "PO_GP_UCB",
                 "Tradeoff_explorer"]:
        page.goto(f"{hosted.url}/{path}?{urllib.parse.urlencode(extreme)}")
        wait_for_app(page, timeout_ms=90_000)
        assert_no_traceback(page)
        screenshot(page, f"hosted_{path or 'home'}")
