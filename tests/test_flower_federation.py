"""A real Flower federation on 127.0.0.1, started by the exported README's own commands (TLS and SuperNode
authentication on, no Ray): a SuperLink and three SuperNodes as processes.

The fixture exports both apps, runs the DP-FTS-DE README's start block as written (certificates, the SuperLink,
the wait until it answers, the keys' registration, the SuperNodes) and each test runs an app's README run block
(``flwr run . --stream``) against it; every wait is bounded and every process is stopped by its process group
(``tests/flower_loopback.py``). Skipped, with the reason, only where Flower is not installed (CI installs it
from requirements-dev.txt).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from engine.fbo.config import FboConfig
from engine.fbo.simulation import run_fbo
from engine.flower.export import export_app
from engine.flower.settings import fbo_config, fbo_run_config
from engine.fbo.plan import make_plan
from engine.hype.config import HypeConfig
from engine.hype.simulation import good_positions

NODES = 3
RUN_SECONDS = 300       # a bound on a run (the machine may be loaded), not a speed requirement
SPREAD_RUNS = 100       # engine runs whose min-max envelope the federation's curve must lie in
FBO = FboConfig(agents=NODES, iterations=2, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=2)
HYPE = HypeConfig(clients=NODES, candidates=6, good=1, sigma_loss=0.05, k=1, epsilon=200.0, seed=3)


@pytest.fixture(scope="module")
def loopback(tmp_path_factory):
    pytest.importorskip("flwr", reason="Flower (flwr) is not installed")
    from tests.flower_loopback import readme_federation

    root = tmp_path_factory.mktemp("federation")
    export_app("fbo", FBO, root / "fbo")
    export_app("hype", HYPE, root / "hype")
    with readme_federation(root / "fbo", NODES) as (run, env):
        yield run, env, root


def test_dp_fts_de_app_on_a_secured_loopback_federation(loopback):
    run, _, root = loopback
    summary, _ = run(root / "fbo", RUN_SECONDS)
    config = FBO
    assert summary["nodes"] == NODES and summary["rounds"] == config.iterations + 1
    assert summary["queries"] == NODES * (config.n_init + config.iterations)
    assert summary["releases"] == config.iterations
    plan = make_plan(fbo_config(fbo_run_config(config)))
    assert summary["epsilon"] == pytest.approx(plan.epsilon_after(config.iterations), rel=1e-12)
    assert summary["delta"] == pytest.approx(plan.delta) and plan.delta == 1e-5     # the small-federation delta
    # The curve (the agents' mean simple regret after each round) lies within the engine's run-to-run spread at
    # the same settings: the min-max envelope of SPREAD_RUNS simulated runs. A run drawn from the same law as
    # those runs falls outside it at a given iteration with probability 2 / (SPREAD_RUNS + 1) < 2 %; the
    # federation is seeded, so the check is deterministic (a federation whose agents ignored their queries, or
    # optimised another function, leaves the envelope).
    curve = np.array(summary["regret_mean"], dtype=float)
    runs = run_fbo(fbo_config(fbo_run_config(config)).replace(runs=SPREAD_RUNS)).run_curves   # (runs, T + 1)
    assert curve.shape == (config.iterations + 1,) and runs.shape == (SPREAD_RUNS, config.iterations + 1)
    low, high = runs.min(axis=0), runs.max(axis=0)
    assert np.all(high > low)                         # a spread, not one repeated run
    assert np.all((low <= curve) & (curve <= high)), (curve, low, high)


def test_dp_hype_app_on_a_secured_loopback_federation_uses_secagg(loopback):
    run, _, root = loopback
    summary, _ = run(root / "hype", RUN_SECONDS)
    assert summary["secure_aggregation"] is True and summary["reported"] == NODES
    # Every client votes for the one good candidate; noise of std sigma ~ 0.05 cannot move the winner.
    assert summary["sigma"] < 0.1
    assert summary["winner"] == int(good_positions(6, 1, 3).argmax())
    assert sum(summary["noisy_sum"]) == pytest.approx(NODES, abs=1.0)


def test_a_supernode_without_a_registered_key_is_refused(loopback):
    from tests.flower_loopback import free_ports, stop_groups

    _, env, root = loopback
    key = root / "unregistered"
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "384", "-N", "", "-f", str(key)], check=True,
                   timeout=60)
    # The README's SuperNode command with a key the SuperLink's operator never registered.
    args = [sys.executable, "-m", "engine.flower.supernode", "--superlink", f"127.0.0.1:{env['LINK_PORT']}",
            "--root-certificates", "certificates/ca.crt", "--auth-supernode-private-key", str(key),
            "--port", str(free_ports(1)[0]), "--max-retries", "1", "--max-wait-time", "30",
            "--node-config", f"partition-id=0 num-partitions={NODES}"]
    log = root / "unregistered.log"
    with open(log, "w") as out:     # a file, not a pipe: the node's SuperExec child would hold a pipe open
        node = subprocess.Popen(args, cwd=root / "fbo", env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            node.wait(timeout=180)
        finally:
            stop_groups([node])
    output = log.read_text()
    assert node.returncode != 0
    assert "Failed to activate SuperNode" in output, output[-2000:]


def node_pid(port: int) -> int:
    """The pid of the README's SuperNode serving ``port`` (a process this module's federation started)."""
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                args = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"engine.flower.supernode" in args and str(port).encode() in args:
                return int(proc.name)
    raise LookupError(f"No SuperNode on port {port}")


def test_a_supernode_killed_mid_run_leaves_the_rounds_going_and_epsilon_right(loopback):
    # Last in this module: it kills one of the federation's SuperNodes.
    run, env, root = loopback
    config = FboConfig(agents=NODES, iterations=2, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=5)
    folder = root / "dropout"
    export_app("fbo", config, folder)
    # The run config: a round waits 8 s for replies instead of 120 s. Each round after the kill waits that long for
    # the dead node; a live node slower than that on a busy machine is counted missing too, which the checks
    # below allow (the killed node must be among the missing, the rounds must go on, epsilon must not change).
    project = folder / "pyproject.toml"
    project.write_text(project.read_text().replace("reply_timeout = 120.0", "reply_timeout = 8.0"))
    result = {}
    runner = threading.Thread(target=lambda: result.update(zip(("summary", "seconds"), run(folder, RUN_SECONDS))))
    runner.start()
    end = time.monotonic() + RUN_SECONDS
    while time.monotonic() < end and "[ROUND 2/" not in ((folder / "run.log").read_text()
                                                          if (folder / "run.log").exists() else ""):
        time.sleep(0.5)
    os.kill(node_pid(int(env["NODE_PORT"]) + NODES - 1), signal.SIGKILL)      # agent N - 1 crashes
    runner.join(RUN_SECONDS + 30)
    summary = result["summary"]
    assert summary["rounds"] == config.iterations + 1 and summary["releases"] == config.iterations
    assert summary["nodes"] == NODES and NODES - 1 in summary["missing"][-1]      # the rounds went on without it
    plan = make_plan(fbo_config(fbo_run_config(config)))
    assert summary["epsilon"] == pytest.approx(plan.epsilon_after(config.iterations), rel=1e-12)
