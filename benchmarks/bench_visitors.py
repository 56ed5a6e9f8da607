"""Many visitors, one server: the hosting security test of issue 42 replayed, row by row, over websockets.

Starts the Docker image's command with the image's environment (``DPBO_MAX_SECONDS=30 DPBO_MAX_MEMORY_MB=2048``
as the test that found the rows, an empty data folder: the landmine data absent) from ``--root`` (this checkout,
or an older commit in a throwaway worktree) on a free loopback port, and plays each row with
:class:`benchmarks.ws_visitor.Visitor` sessions (no browser: the figures are the server's). For each row it
reports what the visitor saw and, sampled every 0.1 s from /proc, the peak resident memory of the server process
and of its whole process tree (walled workers, the forkserver) above their sizes before the row, and what the
server still holds 15 s after the row's tabs closed.

Rows (``--rows``, default all):

- ``labels``: a 55 kB Parquet of 2,000 settings, each label a unique 60 kB string, uploaded to the Trade-off
  explorer's "Open a saved sweep table";
- ``labels-x3``: the same by three visitors at once, twice;
- ``errors``: 2,000 settings, each with a unique 60 kB error cell;
- ``flood``: 20 sessions of one visitor rerun their pages as fast as they can for ``--flood-seconds`` (40 s) while
  the health endpoint is polled (5 s time-out, the Dockerfile's) and another visitor opens the Teaching view;
  ``flood-varied``: the same, every request with another link (so that no two are the same);
- ``queue``: one visitor's 6 tabs each press Run on Federated BO (``runs=18``), then another visitor runs the
  defaults: time to the other visitor's first chart;
- ``tree``: two heavy runs and three uploads at once: the process tree's peak and the walled workers alive at once
  against ``DPBO_MAX_RUNS``;
- ``har``: ``Paper_reproduction?part=har-standin&runs=2``; ``digits``: 5,000 digits typed into the sweep's "its
  values"; ``path``: the Paper reproduction's landmine part with the data absent (does a server folder show?);
- ``lower``: ``/_stcore/metrics``, a reused sweep's provenance sentence, a NaN into a number input and an integer
  into a select box.

    python -m benchmarks.bench_visitors [--root /work/before] [--rows labels,flood] [--label before]

Prints one JSON object per row and writes ``benchmarks/results/bench_visitors-<label>.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import psutil

from benchmarks import save_results
from benchmarks.loopback import ROOT, HealthProbe, cpu_seconds, image_environment, start_server, stop_server, tree
from benchmarks.ws_visitor import Visitor
from hosting import image_config

SETTINGS = 2_000
LABEL_BYTES = 60_000
HELD_AFTER = 15.0           # seconds after the tabs closed before what the server holds is read


# ---------------------------------------------------------------- files
def long_labels(settings: int = SETTINGS, label_bytes: int = LABEL_BYTES, *, errors: bool = False,
                seed: int = 0) -> bytes:
    """A small Parquet of ``settings`` rows whose labels (or error cells) are unique ``label_bytes`` strings."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    pad = "x" * (label_bytes - 24)
    unique = [f"{seed:03d}-{i:06d}-{pad}{i:012d}" for i in range(settings)]
    frame = pd.DataFrame({"setting": unique if not errors else [f"q={i}" for i in range(settings)],
                          "utility": rng.random(settings), "privacy_loss": rng.random(settings)})
    if errors:
        frame["error"] = unique
        frame.loc[:, "utility"] = float("nan")
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False, compression="zstd")
    return buffer.getvalue()


# ---------------------------------------------------------------- measuring
class Peaks:
    """The server's and its tree's resident memory (MB), sampled every 0.1 s; walled workers alive at once."""

    def __init__(self, pid: int):
        self.pid = pid
        self.server = psutil.Process(pid)
        self.stop = threading.Event()
        self.base_server, self.base_tree = self._server(), self._tree()[0]
        self.peak_server, self.peak_tree, self.workers = self.base_server, self.base_tree, 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _server(self) -> float:
        return self.server.memory_info().rss / 2**20

    def _tree(self) -> tuple[float, int]:
        total, workers = 0, 0
        forked = {}                              # the forkserver and its children share its command line
        for proc in tree(self.pid):
            try:
                total += proc.memory_info().rss
                if any("forkserver" in part for part in proc.cmdline()):
                    forked[proc.pid] = proc.ppid()
            except psutil.Error:
                pass
        roots = {pid for pid, parent in forked.items() if parent not in forked}            # the forkserver
        workers = sum(parent in roots for parent in forked.values())     # walled workers: the forkserver's children
        return total / 2**20, workers

    def _run(self) -> None:
        while not self.stop.wait(0.1):
            server = self._server()
            total, workers = self._tree()
            self.peak_server, self.peak_tree = max(self.peak_server, server), max(self.peak_tree, total)
            self.workers = max(self.workers, workers)

    def __enter__(self) -> "Peaks":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(2)

    def report(self) -> dict:
        return {"server_mb": f"{self.base_server:.0f} -> {self.peak_server:.0f}",
                "tree_mb": f"{self.base_tree:.0f} -> {self.peak_tree:.0f}",
                "server_peak_mb": round(self.peak_server), "tree_peak_mb": round(self.peak_tree),
                "walled_workers_at_once": self.workers}


def _short(texts: list[str], limit: int = 160) -> list[str]:
    return [t if len(t) <= limit else t[:limit] + f"... ({len(t):,} chars)" for t in texts]


# ---------------------------------------------------------------- rows
async def _upload(url: str, data: bytes, name: str, address: str) -> dict:
    visitor = await Visitor(url, address, timeout=400).connect()
    try:
        await visitor.open("Tradeoff_explorer")
        started = time.perf_counter()
        seen = await visitor.upload("sw_upload", name, data)
        return {"seconds": round(time.perf_counter() - started, 1), "bytes_sent_to_tab": seen.bytes,
                "errors": _short(seen.errors)[:3], "exceptions": _short(seen.exceptions)[:3],
                "warning_boxes": len(seen.warnings), "charts": seen.kinds.count("plotly_chart")}
    finally:
        await visitor.close()


async def row_labels(url: str, pid: int, rounds: int = 1, at_once: int = 1, errors: bool = False) -> dict:
    files = [long_labels(errors=errors, seed=k) for k in range(rounds * at_once)]
    with Peaks(pid) as peaks:
        seen = []
        for r in range(rounds):
            seen += await asyncio.gather(*(_upload(url, files[r * at_once + k], f"sweep-{r}-{k}.parquet",
                                                   f"203.0.113.{10 + k}") for k in range(at_once)))
    await asyncio.sleep(HELD_AFTER)
    held = psutil.Process(pid).memory_info().rss / 2**20
    return dict(peaks.report(), file_kb=round(len(files[0]) / 1024), held_after_close_mb=round(held),
                held_above_start_mb=round(held - peaks.base_server), visitors=seen)


async def row_flood(url: str, pid: int, sessions: int = 20, seconds: float = 40.0, vary: bool = False) -> dict:
    """``vary``: every rerun asks for another link (a query value that changes), so no two requests are the same."""
    flooders = [await Visitor(url, "203.0.113.50").connect() for _ in range(sessions)]
    pages = ["", "Privacy_accountant", "Teaching_view", "Federated_BO"]
    for k, visitor in enumerate(flooders):
        await visitor.open(pages[k % len(pages)], until_finished=False)
    sent = [0]
    stop = asyncio.Event()

    async def flood(visitor: Visitor) -> None:
        async def drain():
            while not stop.is_set():
                try:
                    await asyncio.wait_for(visitor.ws.recv(), 1.0)
                except asyncio.TimeoutError:
                    continue
                except Exception:  # noqa: BLE001 - the server closed the tab
                    return
        reader = asyncio.ensure_future(drain())
        base = visitor.query
        while not stop.is_set():
            try:
                if vary:
                    visitor.query = f"{base}&n={sent[0]}" if base else f"n={sent[0]}"
                await visitor.send_rerun()
            except Exception:  # noqa: BLE001
                break
            sent[0] += 1
            await asyncio.sleep(0.02)
        reader.cancel()

    other: dict = {}

    async def another_visitor() -> None:
        await asyncio.sleep(seconds / 4)
        visitor = await Visitor(url, "198.51.100.9", timeout=300).connect()
        started = time.perf_counter()
        try:
            seen = await visitor.open("Teaching_view")
            other["teaching_first_chart_s"] = round(seen.first_chart or float("inf"), 2)
            other["teaching_finished_s"] = round(time.perf_counter() - started, 2)
        except asyncio.TimeoutError:
            other["teaching_first_chart_s"] = "none within 300 s"
        finally:
            await visitor.close()

    cpu0, t0 = cpu_seconds(pid), time.perf_counter()
    own0 = sum(psutil.Process(pid).cpu_times()[:2])
    with Peaks(pid) as peaks, HealthProbe(url) as probe:
        tasks = [asyncio.ensure_future(flood(v)) for v in flooders]
        visitor_task = asyncio.ensure_future(another_visitor())
        await asyncio.sleep(seconds)
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    health = probe.latencies
    await asyncio.wait_for(visitor_task, 300)
    elapsed = time.perf_counter() - t0
    await asyncio.gather(*(visitor.close() for visitor in flooders), return_exceptions=True)
    finite = sorted(h for h in health if h != float("inf"))
    return dict(peaks.report(), reruns_sent=sent[0], health_checks=len(health),
                health_timeouts_5s=sum(h == float("inf") for h in health),
                health_over_1s=sum(h > 1.0 for h in health),
                health_median_s=round(statistics.median(finite), 3) if finite else None,
                health_p95_s=round(sorted(health)[int(0.95 * (len(health) - 1))], 3) if health else None,
                health_max_s=round(max(health), 3) if health else None,
                server_cores=round((sum(psutil.Process(pid).cpu_times()[:2]) - own0) / elapsed, 2),
                tree_cores=round((cpu_seconds(pid) - cpu0) / elapsed, 2), **other)


async def _run_page(url: str, address: str, page: str, query: str, button: str, results: list, label: str,
                    started: float) -> None:
    visitor = await Visitor(url, address, timeout=600).connect()
    try:
        await visitor.open(page, query)
        pressed = time.perf_counter()
        seen = await visitor.press(button)
        results.append({"who": label, "pressed_at_s": round(pressed - started, 1),
                        "first_chart_s": round(seen.first_chart, 1) if seen.first_chart is not None else None,
                        "finished_s": round(time.perf_counter() - pressed, 1), "errors": _short(seen.errors)[:2],
                        "exceptions": _short(seen.exceptions)[:2],
                        "queue_texts": [t for t in seen.texts if "queue" in t][:1]})
    finally:
        await visitor.close()


async def row_queue(url: str, pid: int, tabs: int = 6) -> dict:
    results: list = []
    started = time.perf_counter()
    with Peaks(pid) as peaks:
        many = [asyncio.ensure_future(_run_page(url, "203.0.113.60", "Federated_BO", "runs=18", "fbo_run", results,
                                                f"tab {k + 1}", started)) for k in range(tabs)]
        await asyncio.sleep(5.0)        # the tabs have pressed Run and hold the queue
        await _run_page(url, "198.51.100.61", "Federated_BO", "", "fbo_run", results, "other visitor", started)
        await asyncio.gather(*many, return_exceptions=True)
    other = next(r for r in results if r["who"] == "other visitor")
    return dict(peaks.report(), other_first_chart_s=other["first_chart_s"], other=other,
                tabs=[r for r in results if r["who"] != "other visitor"])


async def row_tree(url: str, pid: int) -> dict:
    results: list = []
    started = time.perf_counter()
    heavy = "agents=1000&features=100&iterations=30&runs=2"
    with Peaks(pid) as peaks:
        jobs = [asyncio.ensure_future(_run_page(url, f"203.0.113.{70 + k}", "Federated_BO", heavy, "fbo_run", results,
                                                f"run {k + 1}", started)) for k in range(2)]
        jobs += [asyncio.ensure_future(_upload(url, long_labels(seed=10 + k), f"t{k}.parquet", f"203.0.113.{80 + k}"))
                 for k in range(3)]
        seen = await asyncio.gather(*jobs, return_exceptions=True)
    limits = _limits()
    rule = limits["runs"] * limits["memory_mb"] + 1024
    return dict(peaks.report(), sizing_rule_mb=rule, within_rule=peaks.peak_tree <= rule, runs=results,
                uploads=[s if isinstance(s, dict) else repr(s) for s in seen[2:]])


def _limits() -> dict:
    from engine.limits import HostLimits

    limits = HostLimits.from_env()
    return {"runs": limits.runs_cap, "memory_mb": limits.max_memory_mb or 0}


async def row_open(url: str, page: str, query: str, set_key: str | None = None, value=None) -> dict:
    visitor = await Visitor(url, "203.0.113.90").connect()
    try:
        seen = await visitor.open(page, query)
        if set_key is not None:
            seen = await visitor.set(set_key, value)
        return {"exceptions": _short(seen.exceptions), "errors": _short(seen.errors)[:3],
                "warnings": _short(seen.warnings)[:3], "texts": seen.texts}
    finally:
        await visitor.close()


async def row_path(url: str, data_dir: str) -> dict:
    seen = await row_open(url, "Paper_reproduction", "part=landmine")
    shown = [t for t in seen.pop("texts") if data_dir in t or str(ROOT) in t or "LandmineData.mat" in t]
    return dict(seen, server_paths_shown=_short(shown))


async def row_lower(url: str, pid: int) -> dict:
    out: dict = {}
    try:
        with urllib.request.urlopen(url + "/_stcore/metrics", timeout=10) as response:
            body = response.read().decode("utf-8", "replace")
            out["metrics_status"] = response.status
            out["metrics_cache_lines"] = sum("cache" in line for line in body.splitlines())
    except urllib.error.HTTPError as err:
        out["metrics_status"] = err.code
    sweep = "p1=q&v1=0.25&p2=none&refs=&runs=1&base=agents+%3D+5%0Aiterations+%3D+2%0Afeatures+%3D+10"
    for k in range(2):
        visitor = await Visitor(url, f"203.0.113.{100 + k}", timeout=300).connect()
        try:
            await visitor.open("Tradeoff_explorer", sweep)
            seen = await visitor.press("sw_run")
            out[f"sweep_{k + 1}_provenance"] = _short([t for t in seen.texts if "earlier" in t])
        finally:
            await visitor.close()
    out["nan_into_number_input"] = {k: v for k, v in (await row_open(url, "Federated_BO", "", "fbo_runs",
                                                                       float("nan"))).items() if k != "texts"}
    out["int_into_select_box"] = {k: v for k, v in (await row_open(url, "Federated_BO", "", "fbo_accountant",
                                                                     99)).items() if k != "texts"}
    return out


async def play(url: str, pid: int, rows: list[str], data_dir: str, flood_seconds: float) -> dict:
    report = {}
    for row in rows:
        started = time.perf_counter()
        if row == "labels":
            out = await row_labels(url, pid)
        elif row == "labels-x3":
            out = await row_labels(url, pid, rounds=2, at_once=3)
        elif row == "errors":
            out = await row_labels(url, pid, errors=True)
        elif row == "flood":
            out = await row_flood(url, pid, seconds=flood_seconds)
        elif row == "flood-varied":
            out = await row_flood(url, pid, seconds=flood_seconds, vary=True)
        elif row == "queue":
            out = await row_queue(url, pid)
        elif row == "tree":
            out = await row_tree(url, pid)
        elif row == "har":
            out = await row_open(url, "Paper_reproduction", "part=har-standin&runs=2")
            out.pop("texts")
        elif row == "digits":
            out = await row_open(url, "Tradeoff_explorer", "", "sw_v1", "5" * 5000)
            out.pop("texts")
        elif row == "path":
            out = await row_path(url, data_dir)
        elif row == "lower":
            out = await row_lower(url, pid)
        else:
            raise SystemExit(f"unknown row {row}")
        out["row_seconds"] = round(time.perf_counter() - started, 1)
        print(json.dumps({row: out}), flush=True)
        report[row] = out
    return report


ROWS = ["har", "digits", "path", "lower", "labels", "labels-x3", "errors", "queue", "tree", "flood", "flood-varied"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose server to start")
    parser.add_argument("--rows", default=",".join(ROWS))
    parser.add_argument("--label", default="after")
    parser.add_argument("--flood-seconds", type=float, default=40.0)
    args = parser.parse_args(argv)
    _, command = image_config(args.root / "Dockerfile")
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as data, \
            open(Path(tempfile.gettempdir()) / f"bench_visitors-{args.label}.log", "w") as log:
        env = dict(image_environment(cache), DPBO_DATA_DIR=data, DPBO_MAX_SECONDS="30", DPBO_MAX_MEMORY_MB="2048",
                   PYTHONPATH=str(args.root))
        os.environ.update({k: env[k] for k in ("DPBO_MAX_SECONDS", "DPBO_MAX_MEMORY_MB")})
        proc, url = start_server(command, env, log, cwd=args.root)
        try:
            report = asyncio.run(play(url, proc.pid, args.rows.split(","), data, args.flood_seconds))
        finally:
            stop_server(proc)
    save_results(f"bench_visitors-{args.label}.json", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
