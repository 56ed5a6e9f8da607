"""What a federation's participants, its server and an outsider can and cannot do, checked without a network.

Secret randomness (the server's subsample and noise, the agents' and clients' own draws), the participant's
attack on it, rogue replies, the failed run's summary and its exit status, SecAgg+ with a client lost before or
during the vote, and the gateway's filter. The same properties on a real loopback federation are in
tests/test_flower_federation.py.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import io
import json
import logging
import math
import os
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("flwr", reason="Flower (flwr) is not installed")

from flwr.app import Array, ArrayRecord, Context, Message, MetricRecord, RecordDict  # noqa: E402
from flwr.server import LegacyContext, ServerConfig  # noqa: E402
from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow  # noqa: E402
from flwr.serverapp import Grid  # noqa: E402

from engine.fbo.config import FboConfig  # noqa: E402
from engine.fbo.plan import make_plan  # noqa: E402
from engine.flower import apps, outcome  # noqa: E402
from engine.flower.audit_config import ParticipantAudit  # noqa: E402
from engine.flower.audit_targets import offline_identity, offline_message  # noqa: E402
from engine.flower.fbo_strategy import DpFtsDeStrategy  # noqa: E402
from engine.flower.hype_client import make_client_app  # noqa: E402
from engine.flower.hype_strategy import DropoutTolerantSecAggPlus, SecAggHypeStrategy  # noqa: E402
from engine.flower.offline import OfflineGrid, run_offline  # noqa: E402
from engine.flower.participant_targets import participant_audit  # noqa: E402
from engine.flower.randomness import SERVER_SECRET_ENV  # noqa: E402
from engine.flower.settings import fbo_config, fbo_run_config, hype_config, hype_run_config, run_settings  # noqa: E402
from engine.flower.voter import QUANTIZATION_RANGE, secagg_plan  # noqa: E402
from engine.hype.config import HypeConfig  # noqa: E402
from engine.hype.simulation import good_positions  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMALL = FboConfig(agents=3, iterations=2, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=2)
# The issue's run: DP-FTS-DE with 5 agents, 10 iterations, q = 0.5, z = 1, P = 2.
ISSUE = dict(agents=5, steps=10, q=0.5, z=1.0, P=2)


@contextlib.contextmanager
def quiet():
    logging.disable(logging.INFO)            # Flower logs every round
    try:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            yield out
    finally:
        logging.disable(logging.NOTSET)


# ---------------------------------------------------------------------------------------------- secret randomness
def test_two_runs_of_the_same_config_release_different_broadcasts_unless_a_test_secret_is_set(monkeypatch):
    monkeypatch.delenv(SERVER_SECRET_ENV, raising=False)
    with quiet():
        first, second = run_offline(SMALL), run_offline(SMALL)
        secret = dict(server_secret="server's own", node_secret="nodes' own")
        again, same = run_offline(SMALL, **secret), run_offline(SMALL, **secret)
        other = run_offline(SMALL, server_secret="another", node_secret="nodes' own")
    assert first["randomness"] == second["randomness"] == "os-entropy"
    assert len(first["broadcasts"]) == SMALL.iterations
    for a, b in zip(first["broadcasts"], second["broadcasts"]):
        assert not np.allclose(a, b)                       # the same run config, different noise
    assert again["randomness"] == "test-secret" and again["broadcasts"] == same["broadcasts"]
    assert not np.allclose(other["broadcasts"][0], again["broadcasts"][0])
    # Nothing the nodes receive carries a secret: the run config has the seed and the settings only.
    assert not any("secret" in name for name in fbo_run_config(SMALL))
    monkeypatch.setenv(SERVER_SECRET_ENV, "server's own")         # the SuperLink's environment, as a test sets it
    from_env = DpFtsDeStrategy(fbo_config(fbo_run_config(SMALL)))
    assert from_env.randomness == "test-secret"
    assert np.array_equal(from_env.rng.random(4), DpFtsDeStrategy(SMALL, secret="server's own").rng.random(4))


# ---------------------------------------------------------------------------------------------- the participant
@pytest.mark.parametrize("app", ["fbo", "hype"])
def test_a_participant_regenerates_the_public_seed_noise_and_not_the_secret_noise(app):
    broken, fixed = (("dp-fts-de-public-seed", "dp-fts-de") if app == "fbo"
                     else ("dp-hype-public-seed", "dp-hype"))
    settings = ISSUE if app == "fbo" else dict(agents=5, candidates=10, k=2, epsilon=1.0)
    caught = participant_audit(ParticipantAudit(strategy=broken, **settings))
    # The app as it was: every release explained, the noiseless aggregate (vote count) to rounding.
    assert caught["regenerated"] and caught["explained"] == caught["releases"] == (10 if app == "fbo" else 1)
    assert caught["aggregate_error"] <= 1e-12 * max(1.0, caught["aggregate_scale"]), caught
    assert all(error <= 1e-12 for error in caught["recovered_errors"])
    passed = participant_audit(ParticipantAudit(strategy=fixed, **settings))
    # The fixed app: the attacker's own check fails in every release and its guess is off by the noise's size.
    assert not passed["regenerated"] and passed["explained"] == 0 and not passed["recovered"], passed
    assert passed["aggregate_error"] > 1.0


def test_the_participant_recovers_an_agent_selected_alone():
    # With q = 0.3 and 4 agents, some releases select exactly one other agent: its clipped vector comes out.
    result = participant_audit(ParticipantAudit(strategy="dp-fts-de-public-seed", agents=4, steps=10, q=0.3,
                                                P=1, seed=4))
    assert result["regenerated"] and result["recovered"], result
    assert max(result["recovered_errors"]) <= 1e-12


WRONG_GUESSES = 2000


def test_a_wrong_guess_passes_every_check_as_often_as_its_chance_says_and_is_never_conclusive(monkeypatch):
    # SMALL (M = 8, 2 releases: the smallest ball-to-noise ratio the tests use) played with a secret: a wrong
    # guess of the server's entropy passes every release's check by chance, here about one guess in 400. Each
    # guess states that probability (``chance``, given its subsample and the broadcasts), so the guesses that
    # pass are a Poisson-binomial count with mean the sum of the chances: a chance computed too small (a verdict
    # that claims more than it has) makes far more pass than it says.
    from scipy.stats import poisson

    from engine.flower.participant import CONCLUSIVE, attack_fbo

    monkeypatch.delenv(SERVER_SECRET_ENV, raising=False)
    with quiet():
        run = run_offline(SMALL, server_secret="server's own", node_secret="nodes' own")
    run_config = fbo_run_config(SMALL)
    holder = attack_fbo(run_config, run["broadcasts"], lambda config: DpFtsDeStrategy(config, secret="server's own"))
    assert holder.regenerated and holder.chance <= CONCLUSIVE and max(holder.ratios) <= 1.0
    guesses = [attack_fbo(run_config, run["broadcasts"], DpFtsDeStrategy) for _ in range(WRONG_GUESSES)]
    expected = sum(guess.chance for guess in guesses)
    passed = sum(guess.passed for guess in guesses)
    assert 0.5 < expected < 50, expected                  # the setting makes passing by chance happen
    # (A Poisson-binomial count exceeds this Poisson quantile with probability below 1e-9.)
    assert passed <= poisson.ppf(1 - 1e-9, expected), (passed, expected)
    assert all(guess.chance > 0 for guess in guesses)
    # A guess is conclusive only when its chance is at most 1e-6: two of 2,000 has probability below 2e-6.
    assert sum(guess.regenerated for guess in guesses) <= 1


def test_every_check_passing_by_too_large_a_chance_is_inconclusive(monkeypatch, capsys):
    # The public-seed app's attack passes every check; with the bar for a conclusive verdict set below zero
    # (below any chance: at M = 50 it underflows to 0) the same attack is called inconclusive, on the command line
    # (a warning) and in the record.
    from engine.cli import main
    from engine.flower import participant

    argv = ["audit", "--mechanism", "flower", "--attacker", "participant", "--agents", "3", "--steps", "2",
            "--strategy", "dp-fts-de-public-seed"]
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["regenerated"] and 0.0 <= record["chance"] <= participant.CONCLUSIVE, record
    monkeypatch.setattr(participant, "CONCLUSIVE", -1.0)
    assert main(argv) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert not record["regenerated"] and record["inconclusive"] and record["explained"] == record["releases"] == 2
    assert captured.err.startswith("warning: Inconclusive: the participant's check passed in all 2 releases, but "
                                   f"a wrong guess would pass it with probability {record['chance']:.2g}")

def test_the_participants_attack_from_the_command_line(capsys):
    from engine.cli import main

    argv = ["audit", "--mechanism", "flower", "--attacker", "participant", "--agents", "3", "--steps", "2"]
    assert main([*argv, "--strategy", "dp-fts-de-public-seed"]) == 0
    captured = capsys.readouterr()
    record = json.loads(captured.out)
    assert record["regenerated"] and record["attacker"] == "participant"
    assert captured.err.startswith("warning: The participant regenerated the noise")
    assert main([*argv, "--strategy", "dp-fts-de"]) == 0
    captured = capsys.readouterr()
    assert not json.loads(captured.out)["regenerated"] and captured.err == ""
    for extra, said in ((["--strategy", "dp-hype", "--trials", "200"], "--trials does not apply"),
                        (["--strategy", "os:getcwd"], "strategy must be one of"),
                        (["--strategy", "dp-fts-de", "--P", "7"], "at most N")):
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert said in err and len(err.splitlines()) == 1 and "Traceback" not in err


# ---------------------------------------------------------------------------------------------- rogue replies
def _reply(agent, vector, node, metrics=True):
    content = {"omega": ArrayRecord({"omega": Array(np.asarray(vector, dtype=float))})}
    if metrics:
        content["metrics"] = MetricRecord({"agent": agent, "best": 0.0, "queries": 1})
    return Message(content=RecordDict(content), reply_to=offline_message(RecordDict(), node))


def test_a_rogue_reply_is_ignored_and_logged_and_the_round_goes_on(capsys):
    config = FboConfig(agents=3, P=1, features=4, iterations=3, q=1.0, z=1.0, S=2.0, seed=3, runs=1,
                       domain="continuous")
    rogue, honest = DpFtsDeStrategy(config, secret=5), DpFtsDeStrategy(config, secret=5)
    vectors = np.random.default_rng(4).normal(size=(3, 4))
    good = [_reply(n, vectors[n], 11 + n) for n in range(3)]
    bad = [_reply(7, vectors[0], 20), _reply(-1, vectors[0], 21), _reply(1, vectors[0] * 9, 22),
           _reply(2, np.ones(5), 13), _reply(0, vectors[0], 23, metrics=False)]
    arrays, _ = rogue.aggregate_train(1, good[:2] + bad[:2] + [bad[3], good[2], bad[2], bad[4]])
    expected, _ = honest.aggregate_train(1, good)
    assert np.array_equal(arrays["broadcast"].numpy(), expected["broadcast"].numpy())
    assert rogue.history[-1]["missing"] == [] and rogue.history[-1]["replies"] == 3
    out = capsys.readouterr().out
    for said in ("node 20 names agent 7, outside 0..2", "node 21 names agent -1, outside 0..2",
                 "node 22 names agent 1, which another reply of this round already named",
                 "agent 2 (node 13) sent 5 numbers, expected 4", "node 23 sent a reply without an agent index"):
        assert f"Reply not used: {said}" in out, said


# ---------------------------------------------------------------------------------------------- failed runs
class FailingGrid(OfflineGrid):
    """The offline grid whose ``fail_at``-th round of messages fails (a network or SuperLink failure)."""

    def __init__(self, run_config, n_nodes, fail_at):
        super().__init__(run_config, n_nodes, node_secret="n")
        self.rounds, self.fail_at = 0, fail_at

    def send_and_receive(self, messages, *, timeout=None):
        messages = list(messages)
        self.rounds += bool(messages)          # the evaluate half of a round sends none
        if self.rounds == self.fail_at:
            raise ConnectionError("the SuperLink went away")
        return super().send_and_receive(messages, timeout=timeout)


def _context(run_config: dict) -> Context:
    return Context(run_id=1, node_id=0, state=RecordDict(), run_config=dict(run_config), node_config={})


def test_a_failed_run_says_what_it_released_and_spent_and_fails():
    offline_identity()
    run_config = fbo_run_config(SMALL)
    plan = make_plan(fbo_config(run_config))
    with quiet() as out, pytest.raises(apps.RunFailed, match="the SuperLink went away"):
        apps.run_fbo(FailingGrid(run_config, 3, fail_at=3), _context(run_config))   # fails in round 3
    status, sentence = outcome.outcome(out.getvalue())
    assert status == 1 and "failed (ConnectionError: the SuperLink went away)" in sentence
    assert f"released 2 broadcasts, so epsilon {plan.epsilon_after(2):.4g}" in sentence
    with quiet() as out, pytest.raises(apps.RunFailed):
        apps.run_fbo(FailingGrid(run_config, 3, fail_at=1), _context({**run_config, "q": 5.0}))   # before any
    status, sentence = outcome.outcome(out.getvalue())
    assert status == 1 and "q must be in" in sentence and "released nothing, so no epsilon was spent" in sentence
    with quiet() as out:
        apps.run_fbo(FailingGrid(run_config, 3, fail_at=99), _context(run_config))
    status, sentence = outcome.outcome("Successfully started run 42\n" + out.getvalue())
    assert status == 0 and sentence.startswith("Run 42 completed: it released 2 broadcasts")


def test_the_outcome_of_a_log_without_a_summary_comes_from_its_release_lines(tmp_path, capsys):
    lines = "Successfully started run 7\n" + "\n".join(outcome.release_line(r, 5, 1.5 * r, 1e-5) for r in (1, 2))
    assert outcome.outcome(lines) == (1, "Run 7 ended without its summary (its ServerApp stopped early); its log "
                                         "shows 2 releases, so epsilon 3 at delta 1e-05 was spent.")
    assert outcome.outcome("Successfully started run 7\n") == (1, "Run 7 ended without a summary and its log shows "
                                                                  "no release, so no epsilon was spent.")
    assert outcome.outcome("SuperLink connection 'federation' not found")[1].startswith("No run was started")
    (tmp_path / "run.log").write_text(lines)
    assert outcome.main([str(tmp_path / "run.log")]) == 1 and "2 releases" in capsys.readouterr().err
    assert outcome.main([str(tmp_path / "none.log")]) == 2


# ---------------------------------------------------------------------------------------------- SecAgg+ dropouts
class SecAggGrid(Grid):
    """DP-HYPE's clients behind Flower's SecAgg+ mod, in this process; client n answers its first ``lost[n]``
    messages and then none, while the SuperLink keeps listing it (its heartbeat has not expired)."""

    def __init__(self, run_config: dict, clients: int, lost: dict[int, int]):
        self.app = make_client_app()
        self.contexts = {n + 1: Context(run_id=1, node_id=n + 1, state=RecordDict(), run_config=dict(run_config),
                                        node_config={"partition-id": n, "num-partitions": clients})
                         for n in range(clients)}
        self.left = {node: lost.get(node - 1, 99) for node in self.contexts}
        self._run = SimpleNamespace(run_id=1)

    def set_run(self, run):
        pass

    @property
    def run(self):
        return self._run

    def create_message(self, *args, **kwargs):
        raise NotImplementedError

    def get_node_ids(self):
        return list(self.contexts)

    def push_messages(self, messages):
        raise NotImplementedError

    def pull_messages(self, message_ids):
        raise NotImplementedError

    def send_and_receive(self, messages, *, timeout=None):
        replies = []
        for message in messages:
            node = message.metadata.dst_node_id
            if self.left[node] > 0:
                self.left[node] -= 1          # each message its own copy, as one sent over the network
                replies.append(self.app(copy.deepcopy(message), self.contexts[node]))
        return replies


HYPE = HypeConfig(clients=5, candidates=6, good=1, sigma_loss=0.05, k=1, epsilon=200.0, seed=3)


# Noise planned for one dropout in five: the vote is unmasked with at least ceil((1 - xi) n) = 3 masked votes.
HYPE_TOLERANT = dataclasses.replace(HYPE, xi=0.4)


def secagg_vote(workflow, lost: dict[int, int], hype: HypeConfig = HYPE_TOLERANT):
    offline_identity()
    run_config = hype_run_config(hype)
    config = hype_config(run_settings(run_config, "hype"))
    plan = secagg_plan(config.sigma, config.clients, config.p, config.k, config.delta, config.xi)
    strategy = SecAggHypeStrategy(config, config.sigma)
    legacy = LegacyContext(context=_context(run_config), config=ServerConfig(num_rounds=1), strategy=strategy)
    extra = ({"min_reports": math.ceil((1 - config.xi) * config.clients - 1e-9)}
             if workflow is DropoutTolerantSecAggPlus else {})
    flow = workflow(num_shares=1.0, reconstruction_threshold=apps.RECONSTRUCTION_THRESHOLD, max_weight=1.0,
                    clipping_range=plan.clipping_range, quantization_range=QUANTIZATION_RANGE, **extra)
    with quiet():
        try:
            DefaultWorkflow(fit_workflow=flow)(SecAggGrid(run_config, config.clients, lost), legacy)
        except KeyError:          # Flower's own workflow: a client asked for shares it never received
            pass
    return strategy, flow


# lost: client -> the SecAgg+ messages it answers before it is lost (0: before the vote; 1: during the key
# shares; 2: during the masked votes; 3: during the unmasking).
@pytest.mark.parametrize("lost", [{4: 0}, {4: 1}, {4: 2}, {4: 3}, {3: 0, 4: 2}])
def test_secagg_plus_survives_clients_lost_before_or_during_the_vote(lost):
    strategy, _ = secagg_vote(DropoutTolerantSecAggPlus, lost)
    reporting = HYPE.clients - sum(1 for answered in lost.values() if answered < 3)
    winner = int(good_positions(6, 1, 3).argmax())
    assert strategy.winner == winner and strategy.reported == reporting
    # The unmasked sum is the reporting clients' votes (one each, for the good candidate) plus small noise.
    assert strategy.noisy_sum[winner] == pytest.approx(reporting, abs=0.5)
    assert np.all(np.abs(np.delete(strategy.noisy_sum, winner)) < 0.5)
    spent = strategy.spent()
    # At least the (1 - xi) n reports the noise is planned for: never more epsilon than the plan.
    assert spent["epsilon"] <= spent["epsilon_planned"] * (1 + 1e-9)
    if reporting == HYPE.clients:
        assert spent["epsilon"] < spent["epsilon_planned"]        # more noise than the plan needs


@pytest.mark.parametrize("lost", [{4: 0}, {4: 2}])
def test_a_vote_with_fewer_masked_votes_than_its_noise_is_planned_for_is_not_unmasked(lost):
    # xi = 0: the noise is planned for all five clients; four would carry less noise than planned, so the sum is
    # never unmasked: no winner, nothing released, nothing spent (never above the plan).
    strategy, flow = secagg_vote(DropoutTolerantSecAggPlus, lost, HYPE)
    assert strategy.winner is None and strategy.noisy_sum is None
    assert "fewer than the 5 whose noise" in flow.halted and "nothing was released" in flow.halted
    assert strategy.spent()["epsilon"] == 0.0


def test_flowers_own_secagg_plus_loses_the_vote_to_a_client_lost_before_its_key_shares():
    # Why the exported app uses DropoutTolerantSecAggPlus: Flower 1.42's workflow wants the shares of a client
    # that never sent any.
    for lost in ({4: 0}, {4: 1}):
        strategy, _ = secagg_vote(SecAggPlusWorkflow, lost)
        assert strategy.winner is None, lost


def test_too_many_lost_clients_stop_the_vote_with_nothing_spent():
    strategy, flow = secagg_vote(DropoutTolerantSecAggPlus, {2: 1, 3: 1, 4: 1})   # 2 of 5 left, threshold 3
    assert strategy.winner is None and "threshold" in flow.halted
    assert strategy.spent()["epsilon"] == 0.0


# ---------------------------------------------------------------------------------------------- the gateway
class Upstream(BaseHTTPRequestHandler):
    """A stand-in SuperLink for the gateway's unit test: echoes what it received."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        payload = json.dumps({"path": self.path, "body": body.decode(), "key": self.headers.get("flwr-public-key"),
                              "host": self.headers.get("Host")}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_the_gateway_forwards_the_fleet_api_and_refuses_the_rest(tmp_path, capsys):
    import http.client

    from engine.flower.deploy import certificate_script
    from engine.flower.gateway import FleetGateway

    (tmp_path / "make_certificates.sh").write_text(certificate_script(0))
    subprocess.run(["bash", str(tmp_path / "make_certificates.sh"), "127.0.0.1", "0"], check=True, timeout=120,
                   capture_output=True)
    certs = tmp_path / "certificates"
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(certs / "server.pem", certs / "server.key")
    upstream.socket = tls.wrap_socket(upstream.socket, server_side=True)
    gateway = FleetGateway(("127.0.0.1", 0), ("127.0.0.1", upstream.server_address[1]), str(certs / "server.pem"),
                           str(certs / "server.key"), str(certs / "ca.crt"))
    servers = [upstream, gateway]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        agent = http.client.HTTPSConnection("127.0.0.1", gateway.server_address[1], timeout=30,
                                            context=ssl.create_default_context(cafile=str(certs / "ca.crt")))

        def post(path, body=b"x", headers=None):
            agent.request("POST", path, body=body, headers=headers or {})
            response = agent.getresponse()
            return response.status, response.read()

        status, body = post("/v1/fleet/pull-messages", b"\x01\x02 protobuf", {"flwr-public-key": "AbC="})
        echoed = json.loads(body)
        assert status == 200 and echoed["path"] == "/v1/fleet/pull-messages"
        assert echoed["body"] == "\x01\x02 protobuf" and echoed["key"] == "AbC="      # signed headers kept
        for path in ("/v1/control/register-node", "/v1/control/start-run", "/v1/fleet/register-node",
                     "/v1/fleet/unregister-node", "/v1/runtime/pull-messages", "/v1/fleet/../control/start-run"):
            assert post(path)[0] == 404, path
        assert post("/v1/fleet/push-messages")[0] == 200      # the same kept-alive connection goes on
        agent.request("GET", "/v1/fleet/get-run")
        response = agent.getresponse()
        assert response.status == 405 and response.read()
        assert gateway.refused == 7
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    err = capsys.readouterr().err
    assert "gateway: refused POST /v1/control/start-run from 127.0.0.1" in err


def test_the_gateway_refuses_bad_options_in_one_sentence(capsys):
    from engine.flower.gateway import main

    assert main(["--listen", "nowhere", "--superlink", "127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.startswith("The gateway cannot start: --listen must be HOST:PORT")
    assert main(["--listen", "127.0.0.1:0", "--certfile", os.devnull]) == 2
