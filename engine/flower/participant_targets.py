"""The participant's attack (:mod:`engine.flower.participant`) on apps played in one process, with the truth.

Four targets (:data:`engine.flower.audit_config.PARTICIPANT_TARGETS`):

``dp-fts-de``
    The exported DP-FTS-DE app: the server's subsample and noise, and the agents' draws, come from secrets the
    participant does not hold (here the test-only secrets of :mod:`engine.flower.randomness`, derived from the
    audit's seed so the audit is reproducible; in a deployment the operating system's entropy).
``dp-fts-de-public-seed``
    Known broken, kept as the negative control: the app as it was exported before, the server's generator
    seeded by the run config's seed (:class:`PublicSeedStrategy`) and every agent's by (seed, 13, index, t)
    (:func:`public_seed_agent`). The attack must catch it.
``dp-hype``, ``dp-hype-public-seed``
    One DP-HYPE vote of the exported client (:class:`engine.flower.hype_client.VoteClient`, its noise from its
    own entropy) and of a known-broken client whose noise comes from the public seed
    (:class:`PublicSeedVoteClient`), summed as the server's secure sum returns it.

:func:`participant_audit` plays the app, hands the attacker only what a participant holds (the run config, its
own replies, the broadcasts or the noisy sum) and the app's code (the class the target names), and reports how
far what the attacker recovered is from the truth the audit kept aside.
"""

from __future__ import annotations

import contextlib
import io
import time

import numpy as np
from flwr.app import Context, Message

from engine.fbo.config import FboConfig
from engine.flower.audit import quiet_flower
from engine.flower.audit_config import PARTICIPANT_LABELS, ParticipantAudit
from engine.flower.fbo_client import agent_round
from engine.flower.fbo_strategy import DpFtsDeStrategy
from engine.flower.hype_client import VoteClient
from engine.flower.offline import run_offline
from engine.flower.participant import ParticipantAttack, attack_fbo, attack_hype
from engine.flower.public_seed import PublicSeedStrategy
from engine.flower.run_config import run_settings
from engine.flower.settings import fbo_run_config, hype_config, hype_run_config
from engine.flower.voter import simulated_losses
from engine.hype.config import HypeConfig
from engine.hype.voting import SecureSum, per_client_std, top_k_mask


def public_seed_agent(message: Message, context: Context, evaluate=None, secret=None) -> Message:
    """Known broken (the agent as exported before): its draws from (the run config's seed, 13, index, t), whatever
    secret the node holds."""
    seed = int(run_settings(context.run_config, "fbo").get("seed", 0))
    index, t = int(context.node_config.get("partition-id", 0)), int(message.content["config"]["iteration"])
    return agent_round(message, context, evaluate, rng=np.random.default_rng((seed, 13, index, t)))


class PublicSeedVoteClient(VoteClient):
    """Known broken: a DP-HYPE client whose share of the noise comes from (the run config's seed, index)."""

    def generator(self) -> np.random.Generator:
        return np.random.default_rng((int(self.settings.get("seed", 0)), 29, self.index))


SERVERS = {"dp-fts-de": DpFtsDeStrategy, "dp-fts-de-public-seed": PublicSeedStrategy}
AGENTS = {"dp-fts-de": agent_round, "dp-fts-de-public-seed": public_seed_agent}
CLIENTS = {"dp-hype": VoteClient, "dp-hype-public-seed": PublicSeedVoteClient}


def secrets(seed: int) -> tuple[str, str]:
    """The server's and the nodes' test-only secrets of an audit (never handed to the attacker)."""
    return f"participant-audit-server-{seed}", f"participant-audit-nodes-{seed}"


def _max_error(estimates, truths) -> float:
    return float(max((np.max(np.abs(np.asarray(e) - np.asarray(t))) for e, t in zip(estimates, truths)),
                     default=float("nan")))


def _fbo(config: ParticipantAudit) -> tuple[ParticipantAttack, list, dict]:
    fbo = FboConfig(algorithm="dp-fts-de", agents=config.agents, iterations=config.steps, q=config.q, z=config.z,
                    S=config.S, P=config.P, features=config.features, n_init=3, seed=config.seed, runs=1,
                    domain="continuous")
    server_secret, node_secret = secrets(config.seed)
    truth, own, vectors = [], [], {}
    server, agent = SERVERS[config.strategy], AGENTS[config.strategy]

    class Recording(server):            # the truth, which only the audit holds
        def release(self, server_round, replies):
            step = super().release(server_round, replies)
            truth.append(step.signal)
            vectors[server_round] = step.clipped_vectors
            return step

    def answer(message, context):
        reply = agent(message, context, secret=node_secret)
        if int(context.node_config["partition-id"]) == config.attacker:
            own.append(reply.content["omega"]["omega"].numpy().astype(float).ravel())
        return reply

    summary = run_offline(fbo, Recording, server_secret=server_secret, agent=answer)
    attack = attack_fbo(fbo_run_config(fbo), summary["broadcasts"], server, own=(config.attacker, own))
    recovered = [float(np.max(np.abs(v - vectors[r][agent]))) for (r, agent), v in attack.recovered.items()]
    return attack, truth, {"recovered_errors": recovered}


def _hype(config: ParticipantAudit) -> tuple[ParticipantAttack, list, dict]:
    hype = HypeConfig(clients=config.agents, candidates=config.candidates, good=1, k=config.k,
                      epsilon=config.epsilon, seed=config.seed)
    run_config = hype_run_config(hype)
    settings = run_settings(run_config, "hype")
    cfg = hype_config(settings)
    client = CLIENTS[config.strategy]
    _, node_secret = secrets(config.seed)
    instructions = {"candidates": cfg.p, "k": cfg.k, "std": per_client_std(cfg.sigma, cfg.clients, cfg.xi)}
    channel, clean, own = SecureSum(), np.zeros(cfg.p), None
    for index in range(cfg.clients):
        voter = client(index, settings, None, secret=node_secret)
        vote = voter.fit([np.zeros(cfg.p)], instructions)[0][0]
        channel.add(vote)
        mask = top_k_mask(simulated_losses(index, cfg.p, cfg.good, cfg.sigma_loss, cfg.seed), cfg.k).astype(float)
        clean += mask
        if index == config.attacker:
            own = mask

    def generator(seed, index):          # the client app's own code, with what the participant holds
        return client(index, {**settings, "seed": seed}, None).generator()

    attack = attack_hype(run_config, channel.result(), list(range(cfg.clients)), generator,
                         own=(config.attacker, own))
    return attack, [clean], {}


def participant_audit(config: ParticipantAudit) -> dict:
    """Play the target's app in this process, attack it as participant ``config.attacker``; the JSON record.

    ``aggregate_error``: the largest error of the attacker's noiseless aggregate (DP-FTS-DE, every release) or
    clean vote count (DP-HYPE) against the truth; ``regenerated``: the attacker's own check passed in every
    release (it needs no truth) and ``chance``, the probability that a wrong guess passes them all, is at most
    :data:`engine.flower.participant.CONCLUSIVE`; ``recovered``: other agents' vectors it recovered, with
    their errors.
    """
    start = time.perf_counter()
    with quiet_flower(), contextlib.redirect_stdout(io.StringIO()):      # the rounds' logs: the result is the record
        attack, truth, extra = (_fbo if config.app == "fbo" else _hype)(config)
    error = _max_error(attack.estimates, truth)
    scale = float(max((np.max(np.abs(t)) for t in truth), default=0.0))
    broken = attack.regenerated
    what = "aggregate of every release" if config.app == "fbo" else "vote count"
    count = len(attack.recovered)
    others = "" if not count else f" and {count} clipped vector{'s' if count > 1 else ''} of other agents"
    releases = f"{attack.releases} release{'s' if attack.releases != 1 else ''}"
    if broken:
        verdict = (f"The participant regenerated the noise: it recovered the noiseless {what} to {error:.1e} (entries "
                   f"up to {scale:.3g}){others}: the stated epsilon protects no one from the other participants "
                   f"(a wrong guess passes its check with probability "
                   f"{f'{attack.chance:.1e}' if attack.chance > 0 else 'below 1e-300'}).")
    elif attack.passed:
        verdict = (f"Inconclusive: the participant's check passed in all {releases}, but a wrong guess would pass "
                   f"it with probability {attack.chance:.2g}; more releases or features decide it. Its guess of the "
                   f"noiseless {what.split(' of ')[0]} is off by up to {error:.3g} from the truth.")
    else:
        verdict = (f"The participant could not regenerate the noise: its check failed in "
                   f"{attack.releases - attack.explained} of {releases}; its best guess of the noiseless "
                   f"{what.split(' of ')[0]} is off by up to {error:.3g}.")
    return {"mechanism": "flower", "attacker": "participant", "strategy": config.strategy,
            "label": PARTICIPANT_LABELS[config.strategy], "app": config.app, "agents": config.agents,
            "releases": attack.releases, "explained": attack.explained, "regenerated": broken,
            "chance": attack.chance, "inconclusive": attack.passed and not broken,
            "aggregate_error": error, "aggregate_scale": scale,
            "recovered": [{"release": r, "agent": a} for r, a in attack.recovered],
            "recovered_errors": extra.get("recovered_errors", []), "verdict": verdict,
            "seconds": time.perf_counter() - start}
