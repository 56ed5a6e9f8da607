"""A real Flower federation on 127.0.0.1, started by the exported README's own commands (TLS and SuperNode
authentication on, the SuperLink on loopback behind the gateway, no Ray): a SuperLink, the gateway and three
SuperNodes as processes.

The fixture exports both apps and runs the DP-FTS-DE README's start block as written (certificates, the SuperLink,
the gateway, the wait until it answers, the keys' registration, the SuperNodes), with the test-only secrets of
``engine.flower.randomness`` in its environment so the runs are reproducible; each test runs an app's README run
block (``flwr run . federation --stream`` and the outcome line) in a shell of its own. Every wait is bounded and
every process is stopped by its process group (``tests/flower_loopback.py``). Skipped, with the reason, only where
Flower is not installed (CI installs it from requirements-dev.txt). The tests that kill SuperNodes come last.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from engine.fbo.config import FboConfig
from engine.fbo.plan import make_plan
from engine.fbo.simulation import run_fbo
from engine.flower.export import export_app
from engine.flower.settings import fbo_config, fbo_run_config
from engine.hype.config import HypeConfig
from engine.hype.simulation import good_positions

NODES = 3
RUN_SECONDS = 300       # a bound on a run (the machine may be loaded), not a speed requirement
SPREAD_RUNS = 100       # engine runs whose min-max envelope the federation's curve must lie in
FBO = FboConfig(agents=NODES, iterations=2, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=2)
# Noise planned for one dropout in three (xi = 1/3): a vote with two masked votes is unmasked at the planned epsilon.
HYPE = HypeConfig(clients=NODES, candidates=6, good=1, sigma_loss=0.05, k=1, epsilon=200.0, seed=3, xi=1 / 3)
# A SecAgg+ stage waits this long for its answers (the run config's reply_timeout) in the dropout votes: a lost
# client costs one such wait; a healthy one answered in 5-21 s at load 10-15 on the 2-core machine.
VOTE_STAGE_SECONDS = 45.0


@pytest.fixture(scope="module")
def loopback(tmp_path_factory):
    pytest.importorskip("flwr", reason="Flower (flwr) is not installed")
    from tests.flower_loopback import TEST_SECRETS, readme_federation

    root = tmp_path_factory.mktemp("federation")
    export_app("fbo", FBO, root / "fbo")
    export_app("hype", HYPE, root / "hype")
    with readme_federation(root / "fbo", NODES, secrets=TEST_SECRETS) as federation:
        yield federation, root


@pytest.fixture(scope="module")
def fbo_run(loopback):
    """The DP-FTS-DE app's run (its summary), shared by the tests that read it.

    A fourth SuperNode runs beside the README's three: a key the operator registered whose node claims agent
    index 0, which node 0 holds (the run config's seed and the nodes' secret make its replies node 0's own, so
    whichever of the two the server binds to agent 0 the run is the same). It leaves after this run.
    """
    from tests.flower_loopback import stop_groups

    federation, root = loopback
    rogue = root / "rogue"
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "384", "-N", "", "-f", str(rogue)], check=True,
                   timeout=60)
    assert federation.flwr("supernode", "register", f"{rogue}.pub", "federation").returncode == 0
    node = federation.start_node(NODES, key=str(rogue), partition=0, log_name="rogue.log")
    end = time.monotonic() + 120
    while time.monotonic() < end and "SuperNode ID" not in (root / "fbo" / "rogue.log").read_text():
        time.sleep(0.5)
    try:
        summary, _ = federation.run(root / "fbo", RUN_SECONDS)
    finally:
        stop_groups([node])       # SIGTERM: the node signs off, the SuperLink lists it offline
    return summary


def _with_timeout(folder, seconds: float) -> None:
    project = folder / "pyproject.toml"
    project.write_text(project.read_text().replace("reply_timeout = 120.0", f"reply_timeout = {seconds}"))


def test_dp_fts_de_app_on_a_secured_loopback_federation(loopback, fbo_run):
    from engine.flower.offline import run_offline
    from tests.flower_loopback import TEST_SECRETS

    federation, root = loopback
    summary, config = fbo_run, FBO
    assert summary["status"] == "completed" and summary["randomness"] == "test-secret"
    assert summary["nodes"] == NODES + 1 and summary["rounds"] == config.iterations + 1     # the rogue node too
    assert all(missing == [] for missing in summary["missing"])
    # Two nodes claimed agent 0 in every round: one of them is not used, and it is said, and the run went on.
    assert re.search(r"Reply not used: .*agent 0", federation.output(root / "fbo"))
    assert summary["queries"] == NODES * (config.n_init + config.iterations)
    assert summary["releases"] == config.iterations
    plan = make_plan(fbo_config(fbo_run_config(config)))
    assert summary["epsilon"] == pytest.approx(plan.epsilon_after(config.iterations), rel=1e-12)
    assert summary["delta"] == pytest.approx(plan.delta) and plan.delta == 1e-5     # the small-federation delta
    # The README's last line: what the run released and spent, and exit status 0 for a completed run.
    assert f"completed: it released 2 broadcasts, so epsilon {plan.epsilon_after(2):.4g}" in \
        federation.output(root / "fbo")
    # The curve (the agents' mean simple regret after each round) lies within the engine's run-to-run spread at
    # the same settings: the min-max envelope of SPREAD_RUNS simulated runs. A run drawn from the same law as
    # those runs falls outside it at a given iteration with probability 2 / (SPREAD_RUNS + 1) < 2 %; the
    # federation is reproducible (its test-only secrets), so the check is deterministic.
    curve = np.array(summary["regret_mean"], dtype=float)
    runs = run_fbo(fbo_config(fbo_run_config(config)).replace(runs=SPREAD_RUNS)).run_curves   # (runs, T + 1)
    assert curve.shape == (config.iterations + 1,) and runs.shape == (SPREAD_RUNS, config.iterations + 1)
    low, high = runs.min(axis=0), runs.max(axis=0)
    assert np.all(high > low)                         # a spread, not one repeated run
    assert np.all((low <= curve) & (curve <= high)), (curve, low, high)
    # The same secrets replay the federation in one process: the same subsamples, broadcasts and curve.
    logging.disable(logging.INFO)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            offline = run_offline(config, server_secret=TEST_SECRETS["DPBO_FLOWER_SERVER_SECRET"],
                                  node_secret=TEST_SECRETS["DPBO_FLOWER_NODE_SECRET"])
    finally:
        logging.disable(logging.NOTSET)
    assert offline["selected"] == summary["selected"]
    assert np.allclose(offline["broadcasts"], summary["broadcasts"], rtol=1e-9, atol=1e-12)
    assert np.allclose(offline["regret_mean"], summary["regret_mean"], rtol=1e-9)


def test_a_participant_cannot_regenerate_the_federations_noise(fbo_run):
    # The participant's attack on the broadcasts every node received, knowing the run config (seed included),
    # the app's code and its own replies: without the server's secret it does not regenerate the noise (a wrong
    # guess can pass a release's check by chance at these few features, but is called regenerated only when that
    # chance is at most 1e-6), and its guess of the aggregate is off by the noise. The
    # same attack holding the server's secret (what the server's environment has, which no node is sent)
    # recovers the noiseless aggregate to rounding: the attack works, the secret is what it lacks.
    from engine.flower.fbo_strategy import DpFtsDeStrategy
    from engine.flower.participant import attack_fbo
    from engine.flower.participant_targets import PublicSeedStrategy
    from tests.flower_loopback import TEST_SECRETS

    run_config = fbo_run_config(FBO)
    broadcasts = fbo_run["broadcasts"]
    secret = TEST_SECRETS["DPBO_FLOWER_SERVER_SECRET"]
    holder = attack_fbo(run_config, broadcasts, lambda config: DpFtsDeStrategy(config, secret=secret))
    assert holder.regenerated and holder.explained == FBO.iterations
    for name, factory in (("the app's code", DpFtsDeStrategy), ("the public seed", PublicSeedStrategy)):
        participant = attack_fbo(run_config, broadcasts, factory)
        assert not participant.regenerated and participant.explained < FBO.iterations, name
        error = max(np.max(np.abs(a - b)) for a, b in zip(participant.estimates, holder.estimates))
        assert error > 1.0, name            # off by the noise (std z S / q = 22 per coordinate here)


CANARIES = 2            # canary SuperNodes beside the README's three (the ports after theirs are free)
CANARY_PLAN_SEED = 8    # the auditor's draw here: the first canary in, the second out


def test_a_one_run_audit_of_the_federation_with_canary_supernodes(loopback):
    # The operator adds canary SuperNodes (their own keys, registered), each started with the node config the
    # canary plan gives it (canary=in: it replies along its own axis at the clip bound; canary=out: the zero
    # vector), runs the exported app as usual and audits the broadcasts of the ServerApp's summary. Two canaries
    # cannot prove any epsilon (even two right guesses are not unlikely enough at 95 %), which the record says;
    # what the live run shows is that the deployment's path is the audited one: the same secrets replay it in one
    # process (the canaries' replies through the app's own client code) with the same broadcasts and scores.
    from engine.flower.canary import app_run_config, live_one_run, plan_canaries
    from engine.flower.fbo_client import agent_round
    from engine.flower.fbo_strategy import DpFtsDeStrategy
    from engine.flower.offline import run_offline
    from tests.flower_loopback import TEST_SECRETS, stop_groups

    federation, root = loopback
    plan = plan_canaries(NODES, CANARIES, seed=CANARY_PLAN_SEED)
    assert sorted(plan["canaries"].values()) == ["in", "out"]
    config = FboConfig(agents=NODES + CANARIES, iterations=1, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=7)
    folder = root / "canaries"
    export_app("fbo", config, folder)
    nodes = []
    try:
        for index, node_config in plan["node_configs"].items():
            key = root / f"canary_{index}"
            subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "384", "-N", "", "-f", str(key)], check=True,
                           timeout=60)
            assert federation.flwr("supernode", "register", f"{key}.pub", "federation").returncode == 0
            nodes.append(federation.start_node(int(index), key=str(key), node_config=node_config,
                                               log_name=f"canary-{index}.log"))
        end = time.monotonic() + 120
        logs = [root / "fbo" / f"canary-{index}.log" for index in plan["node_configs"]]
        while time.monotonic() < end and not all("SuperNode ID" in log.read_text() for log in logs):
            time.sleep(0.5)
        assert all("SuperNode ID" in log.read_text() for log in logs), [log.read_text()[-1500:] for log in logs]
        summary, _ = federation.run(folder, RUN_SECONDS)
    finally:
        stop_groups(nodes)       # SIGTERM: the canaries sign off before the next tests sample the nodes
    assert summary["status"] == "completed" and summary["nodes"] == NODES + CANARIES
    assert summary["releases"] == 1 and all(missing == [] for missing in summary["missing"])
    record = live_one_run(app_run_config(folder), summary, plan, shadow=DpFtsDeStrategy)
    assert (record["canaries"], record["included"], record["releases"]) == (CANARIES, 1, 1)
    assert record["epsilon_claimed"] == pytest.approx(make_plan(config).epsilon_after(1), rel=1e-12)
    assert record["epsilon_lower"] == 0.0 == record["most_provable"] and "2 canaries" in record["note"]
    assert not record["violation"] and set(record["scores"]) == {"llr", "shadow"}

    def answer(message, context):
        state = plan["canaries"].get(str(int(context.node_config["partition-id"])))
        if state is not None:
            context.node_config["canary"] = state
        return agent_round(message, context, secret=TEST_SECRETS["DPBO_FLOWER_NODE_SECRET"])

    logging.disable(logging.INFO)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            offline = run_offline(config, server_secret=TEST_SECRETS["DPBO_FLOWER_SERVER_SECRET"], agent=answer)
    finally:
        logging.disable(logging.NOTSET)
    assert np.allclose(offline["broadcasts"], summary["broadcasts"], rtol=1e-9, atol=1e-12)
    replayed = live_one_run(app_run_config(folder), dict(offline, delta=summary["delta"]), plan)
    assert np.allclose(replayed["scores"]["llr"], record["scores"]["llr"], rtol=1e-9)


def test_dp_hype_app_on_a_secured_loopback_federation_uses_secagg(loopback):
    federation, root = loopback
    summary, _ = federation.run(root / "hype", RUN_SECONDS)
    assert summary["status"] == "completed"
    assert summary["secure_aggregation"] is True and summary["reported"] == NODES
    # Every client votes for the one good candidate; noise of std sigma ~ 0.05 cannot move the winner.
    assert summary["sigma"] < 0.1
    assert summary["winner"] == int(good_positions(6, 1, 3).argmax())
    assert sum(summary["noisy_sum"]) == pytest.approx(NODES, abs=1.0)
    # The noise is planned for one dropout (xi = 1/3); all three reported, so the sum carries more noise than
    # planned and the vote spends less than its plan.
    assert summary["epsilon"] < summary["epsilon_planned"]


def test_a_supernode_without_a_registered_key_is_refused(loopback):
    from tests.flower_loopback import free_ports, stop_groups

    federation, root = loopback
    env = federation.start_env
    key = root / "unregistered"
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "384", "-N", "", "-f", str(key)], check=True,
                   timeout=60)
    # The README's SuperNode command, through the gateway, with a key the SuperLink's operator never registered.
    args = [sys.executable, "-m", "engine.flower.supernode", "--superlink", f"127.0.0.1:{env['FLEET_PORT']}",
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


def test_a_node_holding_only_ca_crt_can_neither_register_itself_nor_start_a_run(loopback):
    # Someone with the federation's ca.crt and the gateway's address (all an agent's machine has) and a Flower
    # home of their own: the gateway serves the Fleet API only, so Control (register, run, list) is refused.
    federation, root = loopback
    before = federation.flwr("supernode", "ls", "federation", "--format", "json")
    assert before.returncode == 0, before
    home = root / "outsider"
    home.mkdir()
    (home / "config.toml").write_text(
        '[superlink]\ndefault = "federation"\n\n[superlink.federation]\n'
        f'address = "127.0.0.1:{federation.env["FLEET_PORT"]}"\n'
        f'root-certificates = "{root / "fbo" / "certificates" / "ca.crt"}"\n')
    subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "384", "-N", "", "-f", str(home / "key")], check=True,
                   timeout=60)
    registered = federation.flwr("supernode", "register", str(home / "key.pub"), "federation", home=home)
    started = federation.flwr("run", ".", "federation", home=home)
    listed = federation.flwr("supernode", "ls", "federation", home=home)
    for done in (registered, started, listed):
        assert done.returncode != 0 and "404" in done.stdout + done.stderr, done
    gateway_log = (root / "fbo" / "federation.log").read_text()
    for path in ("/v1/control/register-node", "/v1/control/start-run", "/v1/control/list-nodes"):
        assert f"gateway: refused POST {path} from 127.0.0.1" in gateway_log, path
    # The operator, on the SuperLink's loopback, still controls it: the nodes it registered (the three, the rogue
    # one, and the canaries when their test ran first), none of them the outsider's.
    nodes = federation.flwr("supernode", "ls", "federation", "--format", "json")
    assert nodes.returncode == 0 and nodes.stdout.count('"node-id"') == before.stdout.count('"node-id"'), \
        nodes.stdout[-1000:]
    assert nodes.stdout.count('"node-id"') >= NODES + 1, nodes.stdout[-1000:]


def test_a_failed_run_exits_non_zero_and_says_nothing_was_spent(loopback):
    # A run whose ServerApp fails before any release (here its run config: q outside (0, 1]): flwr run alone
    # exits 0; the README's run block exits 1 and says what was released and spent.
    federation, root = loopback
    folder = root / "failing"
    export_app("fbo", FBO, folder)
    project = folder / "pyproject.toml"
    project.write_text(project.read_text().replace("q = 0.5", "q = 5.0"))
    summary, _, status = federation.run_block(folder, RUN_SECONDS)
    assert status == 1 and summary["status"] == "failed" and summary["releases"] == 0 and summary["epsilon"] == 0
    assert "failed (ConfigError: q must be in" in federation.output(folder)
    assert "released nothing, so no epsilon was spent." in federation.output(folder)


@pytest.mark.parametrize("when", ["before", "during"])
def test_dp_hype_survives_a_supernode_killed_before_or_during_the_vote(loopback, when):
    # Node N - 1 crashes (SIGKILL) just before the run: the SuperLink still lists it until its heartbeat expires,
    # so it is sampled and lost before its key shares went out (what Flower's own workflow did not survive), and
    # the setup stage waits VOTE_STAGE_SECONDS for it. Or it is stopped (SIGTERM: it signs off at once, no wait)
    # once SecAgg+'s setup stage has its answers, and is lost during the key shares or the masked votes. The
    # vote goes on with the other two, at the reconstruction threshold (2 of 3), and its epsilon is that of the
    # noise the two reporting clients added. The node is started again afterwards.
    federation, root = loopback
    folder = root / f"hype-{when}"
    export_app("hype", HYPE, folder)
    _with_timeout(folder, VOTE_STAGE_SECONDS)
    killed = []

    def kill_during(text: str) -> None:
        if not killed and "SecAgg+ setup:" in text:
            federation.kill_node(NODES - 1, signal.SIGTERM)
            killed.append(time.monotonic())

    if when == "before":
        federation.kill_node(NODES - 1)
        killed.append(time.monotonic())
    try:
        summary, _ = federation.run(folder, RUN_SECONDS, on_line=kill_during if when == "during" else None)
    finally:
        federation.start_node(NODES - 1)
    assert killed, "the vote ended before the node could be killed"
    assert summary["status"] == "completed" and summary["reported"] == NODES - 1, summary
    assert summary["winner"] == int(good_positions(6, 1, 3).argmax())
    assert sum(summary["noisy_sum"]) == pytest.approx(NODES - 1, abs=1.0)
    # xi = 1/3: the two reporting clients' noise is the planned sigma, so the vote spends exactly its plan.
    assert summary["epsilon"] == pytest.approx(summary["epsilon_planned"], rel=1e-9)
    output = federation.output(folder)
    assert "completed: it released the vote's winner" in output
    if when == "before":
        # Either the SuperLink still listed the dead node when the vote sampled its clients, and it was lost before
        # its key shares went out (where Flower's own workflow stopped: "Not enough shares to recover secret"),
        # or its heartbeat had expired by then (the ServerApp's start can take a minute on a loaded machine) and it
        # was not sampled. tests/test_flower_security.py holds the first case on every run.
        assert ("lost before their key shares went out" in output) != ("SecAgg+ setup: 2 of 2 clients" in output)


def test_a_supernode_killed_mid_run_leaves_the_rounds_going_and_epsilon_right(loopback):
    # Last but one in this module: it kills one of the federation's SuperNodes.
    federation, root = loopback
    config = FboConfig(agents=NODES, iterations=2, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=5)
    folder = root / "dropout"
    export_app("fbo", config, folder)
    # The run config: a round waits 8 s for replies instead of 120 s. Each round after the kill waits that long for
    # the dead node; a live node slower than that on a busy machine is counted missing too, which the checks
    # below allow (the killed node must be among the missing, the rounds must go on, epsilon must not change).
    _with_timeout(folder, 8.0)
    killed = []

    def kill_in_round_2(text: str) -> None:
        if not killed and "[ROUND 2/" in text:
            federation.kill_node(NODES - 1)          # agent N - 1 crashes
            killed.append(True)

    summary, _ = federation.run(folder, RUN_SECONDS, on_line=kill_in_round_2)
    assert killed and summary["status"] == "completed"
    assert summary["rounds"] == config.iterations + 1 and summary["releases"] == config.iterations
    assert NODES - 1 in summary["missing"][-1]      # the rounds went on without it
    plan = make_plan(fbo_config(fbo_run_config(config)))
    assert summary["epsilon"] == pytest.approx(plan.epsilon_after(config.iterations), rel=1e-12)


def test_the_readme_stop_block_stops_the_federation(loopback):
    # Its own shell, as written: the SuperNodes first, then the gateway and the SuperLink.
    from tests.flower_loopback import readme_blocks, wait_port

    federation, root = loopback
    _, _, stop = readme_blocks(root / "fbo")
    done = subprocess.run(["bash", "-c", stop], cwd=root / "fbo", env=federation.env, timeout=60)
    assert done.returncode == 0
    ports = [int(federation.env[name]) for name in ("LINK_PORT", "FLEET_PORT")]

    def running() -> list:
        nodes = []
        for index in range(NODES + 1):         # the README's nodes, node N - 1 started again, the rogue's port
            with contextlib.suppress(LookupError):
                nodes.append(federation.node_pid(index))
        return [port for port in ports if wait_port(port, 0.3)] + nodes

    end = time.monotonic() + 60
    while time.monotonic() < end and running():
        time.sleep(0.5)
    assert not running()
