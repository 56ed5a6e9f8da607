"""How conservative the host's cost model is: estimated against measured CPU time and peak memory
(peak resident size during the work minus the resident size before it).

Every case runs in a fresh process (so its peak memory is its own; :class:`Measurer`
forks each case from one process that has done the cases' imports instead, what
the tests use); the estimate is what ``engine.limits`` says before the run,
computed the way the pages and the CLI compute it. A ratio above 1 means the estimate is
conservative (it says more than the run took). ``tests/test_limits_conservative.py``
holds a few small cases of every tool to that; this script sweeps wider.

Usage::

    python -m benchmarks.bench_limits [--quick] [--tools fbo,hype]

Prints a table and writes ``benchmarks/results/bench_limits.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import save_results

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    ("fbo", dict(agents=50, iterations=30, runs=3)),
    ("fbo", dict(agents=200, iterations=40, runs=5)),
    ("fbo", dict(agents=200, iterations=40, runs=20)),
    ("fbo", dict(agents=50, iterations=30, runs=3, features=400)),
    ("fbo", dict(agents=100, iterations=5, runs=1, n_init=1000)),
    ("fbo", dict(agents=50, iterations=300, runs=3)),
    ("fbo", dict(agents=5000, iterations=5, runs=1)),
    ("fbo", dict(agents=200, iterations=40, runs=5, accountant="pld")),
    ("fbo", dict(algorithm="fts", agents=50, iterations=30, runs=3)),
    ("fbo", dict(agents=20, iterations=10, runs=2, alpha=0.5)),
    ("fbo", dict(agents=50, iterations=200, runs=2)),
    ("fbo", dict(agents=20, iterations=30, runs=2, own_features=1000)),
    ("fbo", dict(agents=50, iterations=30, runs=3, own_sampler="pathwise", refit_every=5)),
    ("fbo", dict(agents=200, iterations=40, runs=5, own_sampler="shared")),
    ("fbo", dict(algorithm="dp-fts-de", agents=8000, P=8000, iterations=5, runs=1, features=1, n_init=1,
                 own_sampler="shared")),
    ("audit", dict(agents=10000, P=10000, features=2, trials=100, steps=1)),
    ("audit", dict(trials=10_000_000)),
    ("audit-one-run", dict(canaries=10_000, steps=40)),
    ("audit-one-run", dict(canaries=100_000, steps=40)),
    ("audit-flower-one-run", dict(canaries=1000, steps=10)),
    ("teaching", dict(agents=100, P=2, t=3, q=0.5, z=1.0, S=11.0, seed=0)),
    ("teaching", dict(agents=20000, P=2, t=3, q=0.5, z=1.0, S=11.0, seed=0)),
    ("accountant", dict(steps=40, accountants=["ma", "rdp", "pld"])),
    ("accountant", dict(steps=1000, accountants=["ma", "rdp", "pld"])),
    ("accountant", dict(steps=100_000, accountants=["ma", "rdp", "pld"])),
    ("accountant", dict(steps=40, accountants=["pld"], z=0.3)),
    ("hype", dict(repetitions=2000)),
    ("hype", dict(repetitions=2000, candidates=1000)),
    ("hype", dict(repetitions=500, aggregation="secure-sum")),
    ("hype", dict(mode="data", dataset="wine", clients=30, repetitions=500)),
    ("hype", dict(mode="data", dataset="digits", clients=100, repetitions=1000)),
    ("hype-grid", dict()),
    ("hype-grid", dict(ks=[1, 3, 5, 10], epsilons=[0.1 * i for i in range(1, 51)], sigma_losses=[0.2])),
    ("pogpucb", dict(runs=20)),
    ("pogpucb", dict(runs=5, iterations=300)),
    ("upload", dict(rows=50_000)),
    # An upload as the Trade-off explorer opens it, in its walled worker: read, priced, its facts (the preview and
    # the downloads' bytes) and its analysis (engine.limits.upload_cost; the price read_upload checks).
    ("upload-page", dict(kind="csv", rows=50_000, settings=500)),
    ("upload-page", dict(kind="csv", rows=200_000, settings=100)),
    ("upload-page", dict(kind="csv", rows=20_000, settings=2000)),
    ("upload-page", dict(kind="parquet", rows=200_000, settings=50, extra=20)),
    ("upload-page", dict(kind="parquet", rows=20_000, settings=50, nulls=252)),
    ("sweep", dict(tool="hype", base=dict(repetitions=300), axes=[["epsilon", [0.5, 1.0]]], runs=2)),
    ("table", dict(dataset="landmine", agents=3)),
    ("table", dict(dataset="digits-svm", agents=3)),
    ("table", dict(dataset="breast-cancer-lr", agents=3)),
    ("table", dict(dataset="har-standin", agents=3)),
    ("table", dict(dataset="emnist-standin", agents=3)),
    # The stand-ins divide one data set among the agents: few agents score large shares of it.
    ("table", dict(dataset="digits-svm", agents=1)),
    ("table", dict(dataset="digits-svm", agents=10)),
    ("table", dict(dataset="emnist-standin", agents=1)),
    ("table", dict(dataset="emnist-standin", agents=20)),
    ("table", dict(dataset="breast-cancer-lr", agents=1)),
    # The settings advisor in one process (its workers' starts are priced apart): the default grid at N = 50
    # with its sensitivity rows, a 2-D proxy, landmine.
    ("advise", dict(agents=50, iterations=40, epsilon=4.0)),
    ("advise", dict(dataset="proxy", dimension=2, lengthscale=0.2, agents=20, iterations=20)),
    ("advise", dict(dataset="landmine", agents=15, iterations=20, sensitivity=False)),
]
QUICK = [0, 1, 12, 14, 15, 16, 18, 21, 24, 26, 27, 30]

# Runs one case in this child process: the work after the imports, its CPU time and the peak RSS it added
# (:func:`measured`).
CHILD = """
import json, sys
from benchmarks.bench_limits import measured
print(json.dumps(measured(sys.argv[1], json.loads(sys.argv[2]))))
"""


def _status(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))


def measured(tool: str, kw: dict) -> dict:
    """The case's work in this process, prepared first (imports done, inputs built): its CPU seconds, the peak
    resident size it added (MB) and the reference workload's seconds measured around it.

    The peak is the kernel's high-water mark (VmHWM), reset after the imports: ru_maxrss would also count the
    parent's memory the child saw between fork and exec. The reference workload runs just before and just after
    the work, in the same process, so that the CPU time can be told in reference-machine seconds.
    """
    work = work_of(tool, kw)
    before = reference_seconds()
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
    base = _status("VmRSS:")
    cpu = time.process_time()
    work()
    cpu = time.process_time() - cpu
    peak = (_status("VmHWM:") - base) / 1024
    return {"cpu_seconds": cpu, "peak_mb": peak, "reference_seconds": max(before, reference_seconds())}


# The CPU seconds the reference workload below takes on the machine the estimates' constants were measured on
# (2 cores, idle; the least of ten runs). CPU time is this machine's unit: a slower machine, or one whose
# cores are shared with other work (steal time, caches and memory bandwidth taken by others), spends more of it
# on the same work. A run's CPU time times REFERENCE_SECONDS / (the reference measured beside it) is the run
# told in the constants' seconds, a figure that carries over between machines and loads.
REFERENCE_SECONDS = 0.105


def reference_seconds() -> float:
    """CPU seconds of a fixed, small mix of the engine's kinds of work in this process: small dense solves on
    one BLAS thread, sorting and elementwise passes over fresh memory, and an interpreted loop."""
    import numpy as np

    from engine.blas import single_threaded_blas

    rng = np.random.default_rng(0)
    matrix = rng.standard_normal((60, 60)) + 60 * np.eye(60)
    with single_threaded_blas():
        for i in range(300):                                     # warm: the first calls load the kernel,
            np.linalg.solve(matrix, matrix[:, i % 60])
        np.sort(rng.standard_normal(400_000))                    # and the allocator's first large arrays
        started, total = time.process_time(), 0.0
        for i in range(1500):
            total += float(np.linalg.solve(matrix, matrix[:, i % 60]).sum())
        for i in range(2):
            fresh = rng.standard_normal(400_000) + i             # new pages every pass
            total += float(np.sort(fresh)[::1000].sum())
        count = 0
        for i in range(400_000):
            count += i * i % 7
        return time.process_time() - started


def in_reference_seconds(run: dict) -> float:
    """A measured run's CPU seconds in the reference machine's seconds (see REFERENCE_SECONDS)."""
    return run["cpu_seconds"] * REFERENCE_SECONDS / run["reference_seconds"]


def here_in_reference_seconds(seconds: float) -> float:
    """CPU seconds just measured on this machine, in the reference machine's seconds: the reference workload is
    run now, in this process (twice; the slower figure counts)."""
    return seconds * REFERENCE_SECONDS / max(reference_seconds(), reference_seconds())


def _upload_file(rows: int) -> Path:
    path = Path(tempfile.gettempdir()) / f"dpbo-bench-upload-{rows}.csv"
    if not path.exists():
        with open(path, "w") as handle:
            handle.write("setting,utility,privacy_loss,run\n")
            for i in range(rows):
                handle.write(f"q={i % 500},0.{i % 89:02d},{1 + i % 13},{i // 500}\n")
    return path


def _page_upload(kw: dict) -> Path:
    """A sweep table as a visitor uploads it: ``rows`` rows over ``settings`` settings, ``extra`` numeric columns
    and ``nulls`` all-null ones, as CSV or Parquet (``kind``); written once."""
    import numpy as np
    import pandas as pd

    rows, settings, kind = kw["rows"], kw["settings"], kw["kind"]
    nulls, extra = kw.get("nulls", 0), kw.get("extra", 0)
    path = Path(tempfile.gettempdir()) / f"dpbo-bench-page-upload-{rows}-{settings}-{nulls}-{extra}.{kind}"
    if not path.exists():
        index = np.arange(rows)
        frame = pd.DataFrame({"setting": [f"q={i}" for i in index % settings], "utility": (index % 89) / 100,
                              "privacy_loss": 1.0 + index % 13, "run": index // settings})
        columns = {f"extra{k}": np.sin(index + k) for k in range(extra)}
        columns.update({f"empty{k}": pd.Series([None] * rows, dtype=object) for k in range(nulls)})
        frame = pd.concat([frame, pd.DataFrame(columns, index=frame.index)], axis=1) if columns else frame
        frame.to_parquet(path, index=False) if kind == "parquet" else frame.to_csv(path, index=False)
    return path


def _page_upload_price(kw: dict):
    """The highest price :func:`engine.sweep.read_upload` checks for the case's file (it checks one to three)."""
    import engine.sweep.upload as upload
    from engine.limits import HostLimits

    path, seen = _page_upload(kw), []
    checked = upload._check_price  # noqa: SLF001 - the prices it checks, recorded
    upload._check_price = lambda name, cost, limits: seen.append(cost)  # noqa: SLF001
    try:
        upload.read_upload(str(path), limits=HostLimits(max_seconds=None, max_memory_mb=None, max_upload_rows=None))
    finally:
        upload._check_price = checked  # noqa: SLF001
    return max(seen, key=lambda cost: cost.seconds)


def _grid(kw: dict):
    """A DP-HYPE grid case: (config, ks, epsilons, loss spreads); the paper's Fig. 2a grid by default."""
    from engine.hype import HypeConfig
    from engine.hype.sweeps import FIG2A_EPSILONS, FIG2A_KS, FIG2A_SIGMA_LOSSES

    settings = {k: v for k, v in kw.items() if k not in ("ks", "epsilons", "sigma_losses")}
    config = HypeConfig(**settings)
    ks = tuple(k for k in kw.get("ks", FIG2A_KS) if k <= config.p)
    return config, ks, tuple(kw.get("epsilons", FIG2A_EPSILONS)), tuple(kw.get("sigma_losses", FIG2A_SIGMA_LOSSES))


def work_of(tool: str, kw: dict):
    """The work of one case, prepared (imports done, inputs built) and ready to call."""
    if tool == "fbo":
        from engine.fbo import FboConfig, run_fbo
        from engine.objectives import build_objective

        config = FboConfig(**kw)
        return lambda: run_fbo(config, build_objective(config.dataset, n_agents=config.agents, alpha=config.alpha))
    if tool == "fbo-lines":
        from engine.fbo import FboConfig, Simulation
        from engine.objectives import build_objective

        configs = [FboConfig(**line) for line in kw["lines"]]

        def lines():
            # as the Federated BO page runs compared lines: one objective per task, every line's records kept
            objectives, results = {}, []
            for config in configs:
                key = (config.dataset, config.agents, config.alpha, config.objective_seed, config.domain)
                if key not in objectives:
                    objectives[key] = build_objective(config.dataset, n_agents=config.agents, alpha=config.alpha,
                                                      seed=config.objective_seed, domain=config.domain)
                sim = Simulation(config, objectives[key])
                for record in sim:
                    record.server_step = None
                results.append(sim.result())
            return results
        return lines
    if tool == "audit":
        from engine.audit import run_audit
        from engine.audit.config import ServerAudit, VoteAudit

        settings = {k: v for k, v in kw.items() if k != "mechanism"}
        config = (VoteAudit if kw.get("mechanism") == "hype-votes" else ServerAudit)(**settings)
        return lambda: run_audit(config)
    if tool == "audit-one-run":
        from engine.audit import OneRunAudit, run_one_run

        return lambda: run_one_run(OneRunAudit(**kw))
    if tool == "audit-flower-one-run":
        from engine.flower.one_run import StrategyOneRun, strategy_one_run

        return lambda: strategy_one_run(StrategyOneRun(**kw))
    if tool == "teaching":
        from engine.fbo.teaching import server_round, teaching_config

        return lambda: server_round(teaching_config(**kw))
    if tool == "accountant":
        from engine.privacy import epsilon, epsilon_curve

        def account():
            z = kw.get("z", 1.0)
            for acc in kw["accountants"]:
                epsilon_curve(0.25, z, kw["steps"], 1e-5, acc)
            epsilon(0.25, z, kw["steps"], 1e-5, "pld")
        return account
    if tool == "hype":
        from engine.hype import HypeConfig, run_hype

        return lambda: run_hype(HypeConfig(**kw))
    if tool == "hype-grid":
        from engine.hype.sweeps import evaluate_grid

        config, ks, epsilons, spreads = _grid(kw)
        return lambda: evaluate_grid(config, ks, epsilons=epsilons, sigma_losses=spreads)
    if tool == "pogpucb":
        from engine.pogpucb import PoConfig, run_pogpucb

        return lambda: run_pogpucb(PoConfig(**kw))
    if tool == "upload":
        from engine.sweep import read_table, summarise

        path = _upload_file(kw["rows"])
        return lambda: summarise(read_table(str(path)))
    if tool == "upload-page":
        import ui.kit.downloads  # noqa: F401 - imported before the work is measured
        import ui.kit.tables  # noqa: F401
        from ui.sweep.analysis import read_and_analyse

        os.environ.update(DPBO_MAX_SECONDS="none", DPBO_MAX_MEMORY_MB="none", DPBO_MAX_UPLOAD_ROWS="none")
        path = _page_upload(kw)
        data = path.read_bytes()
        return lambda: read_and_analyse(data, path.name, None)
    if tool == "table":
        # The objective table's work, agent by agent in this process (a build shares the agents among its
        # workers): the dataset's first ``agents`` rows of scores on its default grid.
        import importlib

        from engine.objectives.registry import DATASETS
        from engine.objectives.store import grid_size
        from engine.objectives.tasks import grid_candidates

        from engine.objectives.builds import _score_agent

        task = importlib.import_module(DATASETS[kw["dataset"]][0]).make_task(n_agents=kw["agents"])
        candidates = grid_candidates(task.dim, grid_size(task, None))
        return lambda: [_score_agent(task, agent, candidates) for agent in range(task.n_agents)]
    if tool == "advise":
        from engine.advise import AdviceRequest, advise_now
        from engine.executor import Executor

        request = AdviceRequest(**kw)
        return lambda: advise_now(request, executor=Executor("local"))
    if tool == "sweep":
        from engine.sweep import SweepSpec, run_sweep

        spec = SweepSpec.from_dict(kw)
        out = Path(tempfile.mkdtemp(prefix="dpbo-bench-sweep-")) / "sweep.parquet"
        return lambda: run_sweep(spec, out, executor="local")
    raise ValueError(tool)


def estimate(tool: str, kw: dict):
    """The cost the pages and the CLI check for this case."""
    from engine import limits

    if tool == "fbo":
        from engine.fbo import FboConfig
        from engine.fbo.plan import plan_cost

        return plan_cost(FboConfig(**kw))
    if tool == "fbo-lines":
        from engine.fbo import FboConfig
        from engine.fbo.plan import lines_cost

        return lines_cost([FboConfig(**line) for line in kw["lines"]])
    if tool == "audit":
        from engine.audit.config import ServerAudit, VoteAudit

        settings = {k: v for k, v in kw.items() if k != "mechanism"}
        return limits.audit_cost((VoteAudit if kw.get("mechanism") == "hype-votes" else ServerAudit)(**settings))
    if tool == "audit-one-run":
        from engine.audit import OneRunAudit

        return limits.one_run_cost(OneRunAudit(**kw))
    if tool == "audit-flower-one-run":
        return limits.flower_one_run_cost(kw["canaries"], kw["steps"])
    if tool == "teaching":
        from engine.fbo.teaching import teaching_config

        config = teaching_config(**kw)
        return limits.fbo_cost(config, config.agents)
    if tool == "accountant":
        return limits.accountant_cost(kw["steps"], kw["accountants"], points=1, z=kw.get("z", 1.0))
    if tool == "hype":
        from engine.hype import HypeConfig

        return limits.hype_cost(HypeConfig(**kw))
    if tool == "hype-grid":
        config, ks, epsilons, spreads = _grid(kw)
        return limits.hype_grid_cost(config, len(ks) * len(epsilons), len(spreads))
    if tool == "pogpucb":
        from engine.pogpucb import PoConfig

        return limits.pogpucb_cost(PoConfig(**kw))
    if tool == "upload":
        path = _upload_file(kw["rows"])
        return limits.upload_cost(path.stat().st_size, kw["rows"])
    if tool == "upload-page":
        return _page_upload_price(kw)
    if tool == "table":
        from engine.limits.fbo import objective_cost

        return objective_cost(kw["dataset"], kw["agents"])
    if tool == "advise":
        from engine.advise import AdviceRequest, request_cost
        from engine.executor import Executor

        return request_cost(AdviceRequest(**kw), executor=Executor("local"))
    if tool == "sweep":
        from engine.sweep import SweepSpec, spec_cost

        return spec_cost(SweepSpec.from_dict(kw), executor="local")
    raise ValueError(tool)


def measure(tool: str, kw: dict, env: dict | None = None) -> dict:
    """CPU seconds and peak MB of the case's work, in a fresh process."""
    environment = dict(os.environ, **(env or {}))
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
    proc = subprocess.run([sys.executable, "-c", CHILD, tool, json.dumps(kw)], cwd=ROOT, capture_output=True,
                          text=True, env=environment)
    if proc.returncode:
        raise RuntimeError(f"{tool} {kw} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# The fork server of :class:`Measurer`: it imports what any case imports before its work (every module
# :func:`work_of` names), then forks one child per case, which runs :func:`measured` and writes its result.
SERVER = """
from benchmarks.bench_limits import serve
serve()
"""
# What a case may set in its child's environment: read when the work runs, not when a module is imported (a BLAS
# kernel or a thread count is read at import: a case that sets one needs a fresh process, :func:`measure`).
CALL_TIME_ENV = ("DPBO_CACHE_DIR", "DPBO_DATA_DIR")
LINE_BYTES = 4000           # a child's line, written at once (a pipe keeps writes below 4096 bytes whole)


def preloads() -> list[str]:
    """Every module :func:`work_of` imports (for any tool), in the order it names them."""
    import ast
    import inspect

    names: list[str] = []
    for node in ast.walk(ast.parse(inspect.getsource(work_of))):
        modules = ([node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                   else [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
        names += [name for name in modules if name not in names]
    return names


def serve() -> None:
    """Run :class:`Measurer`'s server: requests ``[id, tool, kw, env]`` on stdin, one line each; replies
    ``[id, {"ok": measured} | {"error": text}]`` on stdout as each case's child finishes."""
    import importlib
    import select
    import traceback

    for name in preloads():
        try:
            importlib.import_module(name)
        except ImportError:         # an optional extra (Flower) this environment lacks: its cases fail alone
            pass

    def reply(ident, payload) -> None:
        line = json.dumps([ident, payload])
        if len(line) > LINE_BYTES:
            line = json.dumps([ident, {"error": str(payload)[-LINE_BYTES // 2:]}])
        os.write(1, (line + "\n").encode())

    children: dict[int, object] = {}
    pending, reading = b"", True
    while reading or children:
        ready = select.select([0], [], [], 0.05)[0] if reading else []
        if ready:
            chunk = os.read(0, 65536)
            reading = bool(chunk)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                ident, tool, kw, env = json.loads(line)
                pid = os.fork()
                if pid == 0:            # the child: this case alone, then out without the server's exit handlers
                    code = 1
                    try:
                        os.environ.update(env)
                        reply(ident, {"ok": measured(tool, kw)})
                        code = 0
                    except BaseException:  # noqa: BLE001 - any failure is the case's answer, the server goes on
                        reply(ident, {"error": traceback.format_exc()})
                    finally:
                        os._exit(code)
                children[pid] = ident
        for pid in list(children):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                ident = children.pop(pid)
                if os.WIFSIGNALED(status):
                    reply(ident, {"error": f"the case's process was killed by signal {os.WTERMSIG(status)}"})


class Measurer:
    """:func:`measure` without an interpreter's start and the imports per case: each case runs in a child forked
    from one server process that has imported what the cases import before their work (as the hosted server's
    walled workers are forked from a process that imported the engine, engine.executor.walled). What is measured
    is the same: the work alone, after its imports, in a process of its own (its peak memory its own). Cases may
    run at once, from several threads. The environment is this process's; a case may set only
    :data:`CALL_TIME_ENV` (what the work reads when it runs)."""

    def __init__(self):
        import itertools
        import threading

        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), environment.get("PYTHONPATH")]))
        self._errors = tempfile.TemporaryFile()
        self._server = subprocess.Popen([sys.executable, "-c", SERVER], cwd=ROOT, env=environment,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._errors)
        self._ids, self._lock = itertools.count(), threading.Lock()
        self._waiting: dict[int, list] = {}
        self._reader = threading.Thread(target=self._read, name="measurer-replies", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self._server.stdout:
            ident, payload = json.loads(line)
            with self._lock:
                slot = self._waiting.get(ident)
            if slot is not None and not slot[0].is_set():
                slot[1] = payload
                slot[0].set()
        with self._lock:                # the server is gone: every case still waiting gets its last words
            self._errors.seek(0)
            words = self._errors.read().decode(errors="replace")[-2000:]
            for slot in self._waiting.values():
                if not slot[0].is_set():
                    slot[1] = {"error": f"the measuring server exited: {words}"}
                    slot[0].set()

    def measure(self, tool: str, kw: dict, env: dict | None = None) -> dict:
        """:func:`measure`'s result for the case, measured in a forked child."""
        import threading

        extra = sorted(set(env or {}) - set(CALL_TIME_ENV))
        if extra:
            raise ValueError(f"{', '.join(extra)} must be set before a process imports: use measure().")
        with self._lock:
            ident = next(self._ids)
            slot = self._waiting[ident] = [threading.Event(), None]
            if self._server.poll() is not None:
                raise RuntimeError("the measuring server has exited")
            self._server.stdin.write((json.dumps([ident, tool, kw, dict(env or {})]) + "\n").encode())
            self._server.stdin.flush()
        slot[0].wait()
        with self._lock:
            del self._waiting[ident]
        if "error" in slot[1]:
            raise RuntimeError(f"{tool} {kw} failed:\n{slot[1]['error'][-2000:]}")
        return slot[1]["ok"]

    def close(self) -> None:
        with self._lock:
            if self._server.stdin and not self._server.stdin.closed:
                self._server.stdin.close()
        try:
            self._server.wait(timeout=600)
        except subprocess.TimeoutExpired:
            self._server.kill()
            self._server.wait()
        self._reader.join(timeout=10)
        self._server.stdout.close()
        self._errors.close()

    def __enter__(self) -> "Measurer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few cases only")
    parser.add_argument("--tools", default="", help="comma-separated tools (default: all)")
    args = parser.parse_args()
    cases = [CASES[i] for i in QUICK] if args.quick else CASES
    if args.tools:
        cases = [c for c in cases if c[0] in args.tools.split(",")]
    cache = tempfile.mkdtemp(prefix="dpbo-bench-cache-")
    rows = []
    print(f"load: {os.getloadavg()}")
    for tool, kw in cases:
        cost = estimate(tool, kw)
        measured = measure(tool, kw, env={"DPBO_CACHE_DIR": cache})
        row = dict(tool=tool, config=kw, estimated_seconds=round(cost.seconds, 3),
                   measured_cpu_seconds=round(measured["cpu_seconds"], 3),
                   reference_cpu_seconds=round(in_reference_seconds(measured), 3),
                   estimated_mb=round(cost.memory_mb, 1),
                   measured_peak_mb=round(measured["peak_mb"], 1))
        rows.append(row)
        print(f"{tool:10s} {json.dumps(kw)[:70]:70s} seconds {row['estimated_seconds']:8.2f} est / "
              f"{row['measured_cpu_seconds']:7.2f} cpu ({row['reference_cpu_seconds']:6.2f} reference)   "
              f"memory {row['estimated_mb']:9.1f} est / "
              f"{row['measured_peak_mb']:7.1f} MB", flush=True)
    save_results("bench_limits.json", dict(load=os.getloadavg(), rows=rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
