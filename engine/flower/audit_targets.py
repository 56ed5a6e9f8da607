"""The audit's four built-in Flower strategies (needs Flower).

``flower-dp-fixed``
    Flower's ``DifferentialPrivacyServerSideFixedClipping`` around ``FedAvg``:
    round(q N) sampled clients reply (the sampling happens in
    ``configure_train``, outside the audited ``aggregate_train``), updates
    are clipped to S around the global model (zero here), averaged, and
    noise of std z S / m is added. Claim: Flower's own ``RdpAccountant``
    (no amplification, add/remove-one), the accountant the wrapper uses.
``dp-fts-de``
    The product's :class:`engine.flower.fbo_strategy.DpFtsDeStrategy` with
    P = 1 (so the canary's weight is phi_max): N agents reply, the strategy
    subsamples them with probability q inside ``aggregate_train``. Claim: the
    run plan's accountant (``accountant``).
``broken-clip-after-mean``
    FedAvg's average, then clipped to S, then the same noise as Flower's
    wrapper, with the same claim: one large reply moves the average by up to
    S instead of S / m, which the audit must catch.
``dp-fts-de-public-seed``
    The product's strategy as it was exported before
    (:class:`engine.flower.public_seed.PublicSeedStrategy`): every run starts its
    generator from the run config's public seed, so every run of the same
    config draws the same subsample and noise. The one-run audit's shadow
    statistic must catch it (:mod:`engine.flower.one_run`).
"""

from __future__ import annotations

import numpy as np
from flwr.app import Array, ArrayRecord, Message, MetricRecord, RecordDict
from flwr.serverapp.strategy import DifferentialPrivacyServerSideFixedClipping, FedAvg
from flwr.supercore.privacy_accounting import (
    GaussianPrivacyEvent,
    NeighboringRelation,
    PrivacyConfig,
    SamplingMethod,
)
from flwr.supercore.privacy_accounting.rdp_accountant import RdpAccountant
from flwr.supercore.task_identity import TaskIdentity

from engine.fbo.config import FboConfig
from engine.flower.audit_config import AuditTarget, StrategyAudit
from engine.flower.fbo_strategy import DpFtsDeStrategy
from engine.flower.public_seed import PublicSeedStrategy


def offline_identity() -> None:
    """Give Flower's task identity placeholder values where no Flower process set them (Messages need them)."""
    for name in ("run_id", "node_id", "task_id"):
        if getattr(TaskIdentity, "_" + name) is None:
            setattr(TaskIdentity, name, 0)


def offline_message(content: RecordDict, node: int) -> Message:
    """A reply-like Message built outside a running Flower app (the audit and the tests play the server)."""
    offline_identity()
    return Message(content=content, dst_node_id=int(node), message_type="train")


def sampled_clients(config: StrategyAudit) -> int:
    return max(2, int(round(config.q * config.agents)))


def flower_claim(config: StrategyAudit, m: int) -> float:
    """Flower's RDP accountant for ``steps`` releases of noise multiplier z (no amplification)."""
    accountant = RdpAccountant(PrivacyConfig(target_delta=config.delta, population_size=config.agents,
                                             neighboring_relation=NeighboringRelation.ADD_OR_REMOVE_ONE,
                                             sampling_method=SamplingMethod.NO_AMPLIFICATION))
    accountant.compose(GaussianPrivacyEvent(noise_multiplier=config.z, sample_size=m,
                                            population_size=config.agents), count=config.steps)
    return float(accountant.get_epsilon(config.delta))


def fedavg_reply(index: int, vector: np.ndarray) -> Message:
    content = RecordDict({"arrays": ArrayRecord([np.asarray(vector, dtype=float)]),
                          "metrics": MetricRecord({"num-examples": 1})})
    return offline_message(content, index + 1)


def first_array(arrays: ArrayRecord) -> np.ndarray:
    return arrays.to_numpy_ndarrays()[0].ravel()


def _seed_global(rng: np.random.Generator) -> None:
    # Flower's noise comes from numpy's global generator: seed it from the game's generator.
    np.random.seed(int(rng.integers(2 ** 32)))


def flower_dp_fixed(config: StrategyAudit) -> AuditTarget:
    m = sampled_clients(config)
    strategy = DifferentialPrivacyServerSideFixedClipping(FedAvg(), noise_multiplier=config.z,
                                                          clipping_norm=config.S, num_sampled_clients=m)
    # The global model the replies are clipped around (configure_train's, which the game does not run);
    # the wrapper only reads it, so one record serves every trial.
    zero_model = ArrayRecord([np.zeros(config.features)])

    def reset(rng):
        strategy.current_arrays = zero_model
        _seed_global(rng)

    return AuditTarget(strategy=strategy, reply=fedavg_reply, release=first_array, reset=reset, accountant="rdp",
                       claim=lambda: flower_claim(config, m), used=1.0, clip=config.S, replies=m,
                       notes={"sampled_clients": m, "claim": "Flower RdpAccountant, no amplification"})


class BrokenClipAfterMean(FedAvg):
    """Deliberately wrong: clips the average instead of every reply, then adds the noise of Flower's wrapper."""

    def __init__(self, noise_multiplier: float, clipping_norm: float, num_sampled_clients: int):
        super().__init__()
        self.noise_multiplier, self.clipping_norm, self.num_sampled_clients = (noise_multiplier, clipping_norm,
                                                                               num_sampled_clients)

    def aggregate_train(self, server_round, replies):
        arrays, metrics = super().aggregate_train(server_round, replies)
        if arrays is None:
            return None, metrics
        mean = arrays.to_numpy_ndarrays()
        norm = float(np.sqrt(sum(float((a ** 2).sum()) for a in mean)))
        scale = min(1.0, self.clipping_norm / norm) if norm > 0 else 1.0
        std = self.noise_multiplier * self.clipping_norm / self.num_sampled_clients
        noisy = [a * scale + np.random.normal(0.0, std, a.shape) for a in mean]
        return ArrayRecord({k: Array(np.asarray(v)) for k, v in zip(arrays.keys(), noisy)}), metrics


def broken_clip_after_mean(config: StrategyAudit) -> AuditTarget:
    m = sampled_clients(config)
    strategy = BrokenClipAfterMean(config.z, config.S, m)
    return AuditTarget(strategy=strategy, reply=fedavg_reply, release=first_array, reset=_seed_global,
                       accountant="rdp", claim=lambda: flower_claim(config, m), used=1.0, clip=config.S, replies=m,
                       notes={"sampled_clients": m, "claim": "as Flower's wrapper (it claims the same)"})


def dp_fts_de(config: StrategyAudit, server=DpFtsDeStrategy) -> AuditTarget:
    fbo = FboConfig(algorithm="dp-fts-de", agents=config.agents, iterations=config.steps, features=config.features,
                    q=config.q, z=config.z, S=config.S, P=1, accountant=config.accountant, delta=config.delta,
                    runs=1, domain="continuous", seed=config.seed)
    strategy = server(fbo)
    public = server is PublicSeedStrategy

    def reply(index, vector):
        content = RecordDict({"omega": ArrayRecord({"omega": Array(np.asarray(vector, dtype=float))}),
                              "metrics": MetricRecord({"agent": index, "best": 0.0, "queries": 0})})
        return offline_message(content, index + 1)

    def reset(rng):
        # A fresh run as deployed: the server's private randomness from rng, or (the broken copy) the public seed.
        strategy.rng = np.random.default_rng(fbo.seed) if public else rng
        strategy.released, strategy.history, strategy.agent_nodes = 0, [], {}

    return AuditTarget(strategy=strategy, reply=reply, release=lambda arrays: arrays["broadcast"].numpy().ravel(),
                       reset=reset, claim=lambda: float(strategy.epsilon_for(config.steps)), used=config.q,
                       clip=config.S, notes={"claim": f"the run plan's {config.accountant} accountant"})


def dp_fts_de_public_seed(config: StrategyAudit) -> AuditTarget:
    return dp_fts_de(config, PublicSeedStrategy)


BUILTIN_FACTORIES = {"flower-dp-fixed": flower_dp_fixed, "dp-fts-de": dp_fts_de,
                     "broken-clip-after-mean": broken_clip_after_mean, "dp-fts-de-public-seed": dp_fts_de_public_seed}
