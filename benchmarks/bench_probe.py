"""The hosting probe of issue 12, replayed against a running dashboard (loopback only).

Every case starts its own ``streamlit run app.py`` from ``--root`` (a checkout:
this one, or an older commit in a throwaway worktree) on a free loopback port,
opens one page in headless Chromium, does what the case says (press Run,
upload a file, close the tab, press Stop), and reports:

- ``seconds``: from opening the page (or pressing the button) until the
  server settled (the script finished and the CPU went quiet), or ``> limit``;
- ``peak MB``: the largest resident size of the server process tree above its
  size before the page was opened;
- ``busy after``: for the cases that close the tab or press Stop, how long the
  server kept computing afterwards;
- ``saw``: what the visitor saw (the first error box or traceback, shortened).

Each case is bounded (``--limit`` seconds, then the server is killed), so a
runaway case of an old commit cannot keep the machine busy. Usage::

    python -m benchmarks.bench_probe --root /tmp/before [--cases agents-1e999,teaching-100k] [--limit 90]

Prints a Markdown table and writes ``benchmarks/results/bench_probe-<label>.json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

from benchmarks import save_results

import psutil

from benchmarks.loopback import FakeScheduler, cpu_seconds, rss_mb, seconds_until_quiet, start_server, stop_server

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("DPBO_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage"]
OUTSIDE = Path(tempfile.gettempdir()) / "dpbo-probe-outside"
SHOTS = ROOT / "test-artifacts" / "probe"


class Server:
    """``streamlit run app.py`` from ``root`` with ``env`` on loopback; stopped with everything it started."""

    def __init__(self, root: Path, env: dict):
        self.log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)
        command = ["streamlit", "run", "app.py", "--server.headless=true", "--browser.gatherUsageStats=false",
                   "--server.fileWatcherType=none"]
        self.proc, self.url = start_server(command, env, self.log, cwd=root)
        self.pid = self.proc.pid

    def rss_mb(self) -> float:
        return rss_mb(self.pid)

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self):
        stop_server(self.proc)
        self.log.close()


class Watch:
    """Samples the server's RSS every 0.1 s in a thread; ``peak`` is the largest growth seen."""

    def __init__(self, server: Server):
        self.server = server
        self.base = server.rss_mb()
        self.peak = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.server.rss_mb() - self.base)
            time.sleep(0.1)

    def close(self) -> float:
        self._stop.set()
        self._thread.join(2)
        return self.peak


def quiet_after(server: Server, limit: float) -> float | None:
    """Seconds until the server's CPU use stays below 15 % of a core for 0.75 s (None: not within ``limit``)."""
    quiet = seconds_until_quiet(server.pid, limit=limit, window=0.25, windows=3, busy=0.15)
    return None if quiet == float("inf") else quiet


VISIBLE = """() => {
  const texts = [];
  for (const sel of ["[data-testid='stException']", "[data-testid='stAlertContentError']",
                     "[data-testid='stAlertContentWarning']", "[data-testid='stAlertContentInfo']",
                     "[data-testid='stAlertContentSuccess']"]) {
    for (const el of document.querySelectorAll(sel)) texts.push(el.innerText.replace(/\\s+/g, ' ').trim());
  }
  return texts;
}"""
# While a script runs, Streamlit's status widget shows "Running..." and a Stop button.
RUNNING = ("() => { const w = document.querySelector('[data-testid=\"stStatusWidget\"]');"
           " return !!w && (w.innerText.includes('Running') || w.innerText.includes('Stop')); }")


def settle(page, server: Server, limit: float, since: float | None = None) -> tuple[float | None, bool]:
    """Wait until the script stops running and the CPU is quiet.

    Returns (seconds from ``since`` to the first moment the page showed no
    running script, after which the CPU was quiet; finished).
    """
    since = time.perf_counter() if since is None else since
    page.wait_for_timeout(300)
    while time.perf_counter() - since < limit:
        try:
            running = page.evaluate(RUNNING)
        except Exception:  # noqa: BLE001 - the page may be navigating
            running = True
        if not running:
            done = time.perf_counter() - since
            quiet = quiet_after(server, max(1.0, limit - done))
            if quiet is None:
                return None, False
            if not page.evaluate(RUNNING):
                return done + quiet, True
        page.wait_for_timeout(100)
    return None, False


def write_csv(path: Path, rows: int, formula: bool = False, full: bool = True) -> Path:
    with open(path, "w") as handle:
        if full:
            handle.write("tool,cell,role,setting,replicate,run,q,utility,privacy_loss,privacy_delta,metric,"
                         "lower_is_better,error\n")
            for i in range(rows):
                setting = "=cmd|' /C calc'!A0" if formula and i == 0 else f"q={i % 997}"
                handle.write(f"fbo,{i % 997},setting,\"{setting}\",0,{i // 997},{i % 997},0.{i % 89:02d},"
                             f"{1 + i % 13},1e-5,final metric,True,\n")
        else:
            handle.write("setting,utility,privacy_loss\n")
            for i in range(rows):
                handle.write(f"s{i},0.{i % 89:02d},{1 + i % 13}\n")
    return path


# ---------------------------------------------------------------- the cases
def case_url(name: str, path: str, **extra) -> dict:
    return dict(name=name, path=path, **extra)


CASES = [
    case_url("rce-scheduler", "/Tradeoff_explorer?executor=dask&scheduler=tcp://127.0.0.1:{scheduler}",
             click="Run sweep", finding=1),
    case_url("path-cache-dir", "/Tradeoff_explorer?tool=hype&p1=epsilon&v1=1&p2=none&refs=&runs=1&executor=local"
             "&base=" + urllib.parse.quote("mode = data\nclients = 20\nrepetitions = 50\ncache_dir = " + str(OUTSIDE)),
             click="Run sweep", finding=2, outside=True),
    case_url("path-data-dir", "/Tradeoff_explorer?tool=fbo&p1=q&v1=0.25&p2=none&refs=&runs=1&executor=local"
             "&base=" + urllib.parse.quote("dataset = landmine\nagents = 5\niterations = 2\ndata_dir = "
                                           + str(OUTSIDE / "etc")),
             click="Run sweep", finding=2, outside=True),
    case_url("teaching-agents-100k", "/Teaching_view?agents=100000", finding=3),
    case_url("fbo-n_init-20000", "/Federated_BO?n_init=20000", click="Run", finding=3),
    case_url("fbo-features-800-T300", "/Federated_BO?features=800&iterations=300", click="Run", finding=3),
    case_url("sweep-16-workers", "/Tradeoff_explorer?workers=16&runs=10&v1=0.1,0.15,0.2,0.25,0.3,0.35,0.4,0.5",
             click="Run sweep", finding=3),
    case_url("hype-data-719-clients", "/DP_HYPE?mode=data&clients=719&runs=2", click="Run", finding=3),
    case_url("sweep-hype-1e13-votes", "/Tradeoff_explorer?tool=hype&p1=epsilon&v1=1&p2=none&refs=&runs=1"
             "&base=" + urllib.parse.quote("clients = 10000\ncandidates = 1000\nrepetitions = 1000000"),
             click="Run sweep", finding=3),
    case_url("accountant-steps-1e5-close", "/Privacy_accountant?steps=100000", close_after=5, finding=4),
    case_url("upload-140MB-close", "/Tradeoff_explorer", upload=dict(rows=1_700_000), close_after=20, finding=4),
    # Two lines of 200 x 60 x 5 agent-iterations: within the old work limit as well.
    case_url("fbo-run-stop", "/Federated_BO?agents=200&features=150&iterations=60&runs=5", click="Run",
             stop_after=4, finding=4),
    case_url("fbo-run-close", "/Federated_BO?agents=200&features=150&iterations=60&runs=5", click="Run",
             close_after=4, finding=4),
    case_url("agents-1e999", "/Federated_BO?agents=1e999", finding=5),
    case_url("teaching-agents-1e999", "/Teaching_view?agents=1e999", finding=5),
    case_url("z-1e-200", "/Privacy_accountant?z=1e-200", finding=5),
    case_url("q-1e-300-z-1e300", "/Privacy_accountant?q=1e-300&z=1e300", finding=5),
    case_url("sigma-1e308", "/DP_HYPE?noise=sigma&sigma=1e308", click="Run", finding=5),
    case_url("epsilon-1e-300", "/DP_HYPE?epsilon=1e-300", finding=5),
    case_url("max-work-inf", "/Federated_BO", env=dict(DPBO_MAX_WORK="inf", DPBO_MAX_SECONDS="inf"), finding=5),
    case_url("upload-required-columns", "/Tradeoff_explorer", upload=dict(rows=20, full=False), finding=5),
    case_url("upload-formula-download", "/Tradeoff_explorer", upload=dict(rows=30, formula=True), download=True,
             finding=6),
]


def orphaned_workers(root: Path, limit: float, workdir: Path, base_env: dict) -> dict:
    """Kill a command-line sweep (SIGKILL) while its two worker processes compute; how long do they live on?"""
    cli = subprocess.Popen([sys.executable, "-m", "engine", "sweep", "--tool", "toy", "--grid", "sleep=50,51,52,53",
                            "--executor", "joblib", "--workers", "2", "--quiet", "--out", str(workdir / "o.parquet")],
                           cwd=root, env=base_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline, workers = time.time() + 60, []
    while time.time() < deadline and len(workers) < 2:
        workers = [p for p in psutil.Process(cli.pid).children(recursive=True)
                   if "resource_tracker" not in " ".join(p.cmdline())]
        time.sleep(0.2)
    time.sleep(3.0)                              # they are computing their cells now
    os.kill(cli.pid, signal.SIGKILL)
    cli.wait(10)
    start = time.perf_counter()
    while time.perf_counter() - start < limit:
        alive = [p for p in workers if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        if not alive:
            return dict(seconds=round(time.perf_counter() - start, 1), workers=len(workers), left=0)
        time.sleep(0.2)
    for proc in workers:
        proc.kill()
    return dict(seconds=None, workers=len(workers), left=len(alive))


def cache_growth(root: Path, workdir: Path, base_env: dict) -> dict:
    """Score tables of eight DP-HYPE data-mode seeds with DPBO_CACHE_MAX_MB=0.1: how large does the cache get?"""
    cache = workdir / "growth"
    env = dict(base_env, DPBO_CACHE_DIR=str(cache), DPBO_CACHE_MAX_MB="0.1")
    for seed in range(8):
        subprocess.run([sys.executable, "-m", "engine", "hype", "--mode", "data", "--dataset", "wine", "--clients",
                        "20", "--repetitions", "10", "--seed", str(seed)], cwd=root, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    files = [p for p in cache.rglob("*") if p.is_file()]
    return dict(files=len(files), mb=round(sum(p.stat().st_size for p in files) / 2**20, 2))


def run_case(case: dict, root: Path, limit: float, browser, workdir: Path, base_env: dict, label: str) -> dict:
    scheduler = FakeScheduler() if "{scheduler}" in case["path"] else None
    shutil.rmtree(OUTSIDE, ignore_errors=True)
    env = dict(base_env, **case.get("env", {}))
    server = Server(root, env)
    result = dict(case=case["name"], finding=case["finding"])
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    watch = Watch(server)
    try:
        path = case["path"].format(scheduler=scheduler.port if scheduler else 0)
        # A warm server, as a visitor meets it: the page's modules are imported by an earlier visit.
        page.goto(server.url + path.split("?")[0])
        settle(page, server, limit)
        watch.base, watch.peak = server.rss_mb(), 0.0
        start = time.perf_counter()
        page.goto(server.url + path)
        page.wait_for_selector("[data-testid='stApp']", timeout=60_000)
        settled, finished = settle(page, server, limit, since=start)
        if case.get("upload"):
            spec = case["upload"]
            csv = write_csv(workdir / f"{case['name']}.csv", spec["rows"], spec.get("formula", False),
                            spec.get("full", True))
            result["upload_mb"] = round(csv.stat().st_size / 2**20, 1)
            page.get_by_role("tab", name="Open a saved sweep table").click()
            start = time.perf_counter()
            page.locator("[data-testid='stFileUploaderDropzoneInput']").set_input_files(str(csv))
        if case.get("click"):
            button = page.get_by_role("button", name=case["click"], exact=True)
            button.wait_for(timeout=30_000)
            page.wait_for_timeout(300)
            start = time.perf_counter()
            if button.is_enabled():
                button.click()
            else:
                result["note"] = f"{case['click']} disabled"
        if case.get("stop_after") is not None:
            page.wait_for_timeout(case["stop_after"] * 1000)
            result["cpu_before_stop"] = server.cpu_seconds()
            page.locator("[data-testid='stMain']").get_by_role("button", name="Stop", exact=True).click()
            stopped = time.perf_counter()
            quiet = quiet_after(server, limit)
            result["busy_after"] = None if quiet is None else round(quiet, 2)
            result["seconds"] = round(stopped - start, 1)
            page.wait_for_timeout(1500)
            result["saw"] = page.evaluate(VISIBLE)
        elif case.get("close_after") is not None:
            page.wait_for_timeout(case["close_after"] * 1000)
            result["saw"] = page.evaluate(VISIBLE)
            page.close()
            closed = time.perf_counter()
            quiet = quiet_after(server, limit)
            result["busy_after"] = None if quiet is None else round(quiet, 2)
            result["seconds"] = round(closed - start, 1)
        else:
            if case.get("click") or case.get("upload"):
                settled, finished = settle(page, server, limit, since=start)
            result["seconds"] = round(settled, 1) if finished else None
            result["saw"] = page.evaluate(VISIBLE)
            if case.get("download"):
                result["download"] = download_first_cell(page)
            elif case.get("click") and finished:
                page.wait_for_timeout(500)
                result["saw"] = page.evaluate(VISIBLE)
    except Exception as err:  # noqa: BLE001 - a case that breaks the harness is reported, not fatal
        result["harness_error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
    finally:
        if not page.is_closed():
            try:
                result.setdefault("saw", page.evaluate(VISIBLE))
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"{label}-{case['name']}.png"), full_page=True)
            except Exception:  # noqa: BLE001 - the picture is a bonus
                pass
        result["traceback"] = any("Traceback" in s or "File \"" in s for s in result.get("saw", []))
        result["peak_mb"] = round(watch.close())
        result["limit"] = limit
        if scheduler is not None:
            result["scheduler_connections"] = scheduler.connections
            scheduler.close()
        if case.get("outside"):
            result["outside_files"] = sorted(str(p) for p in OUTSIDE.rglob("*"))[:5] if OUTSIDE.exists() else []
            shutil.rmtree(OUTSIDE, ignore_errors=True)
        context.close()
        server.stop()
    return result


def download_first_cell(page) -> str | None:
    page.get_by_role("button", name="Download CSV").first.wait_for(timeout=30_000)
    with page.expect_download(timeout=30_000) as info:
        page.get_by_role("button", name="Download CSV").first.click()
    text = Path(info.value.path()).read_text()
    lines = text.splitlines()
    header = lines[0].split(",")
    column = header.index("setting") if "setting" in header else 0
    for line in lines[1:]:
        if "cmd" in line:
            return line.split(",")[column] if column < len(line.split(",")) else line[:40]
    return None


def summary_line(result: dict) -> str:
    seconds = result.get("seconds")
    limit = result["limit"]
    time_text = f"> {limit:g} s" if seconds is None else f"{seconds:g} s"
    saw = "; ".join(result.get("saw") or []) or "-"
    extra = []
    if "busy_after" in result:
        extra.append("busy after: " + (f"> {limit:g} s" if result["busy_after"] is None else
                                       f"{result['busy_after']} s"))
    if "scheduler_connections" in result:
        extra.append(f"scheduler connections: {result['scheduler_connections']}")
    if "outside_files" in result:
        extra.append(f"files outside the cache: {len(result['outside_files'])}")
    if "download" in result:
        extra.append(f"downloaded cell: {result['download']!r}")
    if result.get("harness_error"):
        extra.append("harness: " + result["harness_error"])
    return (f"| {result['finding']} | {result['case']} | {time_text} | {result['peak_mb']:,} | "
            f"{'; '.join(extra) or '-'} | {saw[:220]} |")


def main() -> None:
    # A timeout's SIGTERM unwinds like an exception, so the servers and the browser are always stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=str(ROOT), help="the checkout to serve")
    parser.add_argument("--label", default=None, help="name of the results file (default: the root's name)")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--limit", type=float, default=90.0, help="seconds before a case is cut off")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for every server (repeatable)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    root = Path(args.root).resolve()
    chosen = [c for c in CASES if not args.cases or c["name"] in args.cases.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="dpbo-probe-"))
    base_env = dict(os.environ, DPBO_CACHE_DIR=str(workdir / "cache"), PYTHONPATH=str(root))
    for item in args.env:
        name, _, value = item.partition("=")
        base_env[name] = value
    results = []
    print(f"load before: {os.getloadavg()}", flush=True)
    if not args.cases or "orphaned-workers" in args.cases.split(","):
        result = dict(case="orphaned-workers", finding=6, limit=args.limit, peak_mb=0,
                      **orphaned_workers(root, args.limit, workdir, base_env))
        results.append(result)
        print(f"| 6 | orphaned-workers | killed sweep's {result['workers']} workers lived on "
              f"{'> %g s' % args.limit if result['seconds'] is None else '%g s' % result['seconds']} | - | - | - |",
              flush=True)
    if not args.cases or "cache-growth" in args.cases.split(","):
        result = dict(case="cache-growth", finding=6, limit=args.limit, peak_mb=0, **cache_growth(root, workdir,
                                                                                                  base_env))
        results.append(result)
        print(f"| 6 | cache-growth | 8 score tables with DPBO_CACHE_MAX_MB=0.1: {result['files']} files, "
              f"{result['mb']} MB | - | - | - |", flush=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for case in chosen:
            result = run_case(case, root, args.limit, browser, workdir, base_env, args.label or root.name)
            results.append(result)
            print(summary_line(result), flush=True)
        browser.close()
    out = save_results(f"bench_probe-{args.label or root.name}.json",
                       dict(root=str(root), load=os.getloadavg(), results=results), indent=1)
    shutil.rmtree(workdir, ignore_errors=True)
    print(f"written {out}")


if __name__ == "__main__":
    main()
