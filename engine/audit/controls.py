"""The negative controls: the server round broken in the ways deployed DP code breaks, the claim unchanged.

Each control calls the engine's own :func:`engine.fbo.server.aggregate_batch` (through the module, so a patched
mechanism is still the one audited) and breaks one thing around it; an audit must catch every one of them, the
one-run audit where it can (:mod:`engine.audit.one_run`) and else the many-trial one. Halving the noise is the
configurations' ``noise_scale`` (0.5), not a control here.

``no-subsampling``
    Every agent is used in every round while the claim still counts on amplification by q; everything else is as
    written (weights phi / q, noise z phi_max S / q): the round runs with q = 1 and its signal and noise are then
    divided by the configured q.
``reused-noise``
    Release t adds the noise release 1 drew, t = 1..T (one draw per run): the differences of two releases carry
    no noise at all.
``public-seed``
    The server's subsample and noise come from a generator seeded by the public configuration (the run's seed),
    as the exported DP-FTS-DE strategy did before (``engine.flower.public_seed.PublicSeedStrategy``):
    every run of the same configuration draws the same subsample and noise, which anyone holding the
    configuration regenerates (:func:`public_generator`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.fbo import server

CONTROLS = ("none", "no-subsampling", "reused-noise", "public-seed")
CONTROL_LABELS = {"none": "the mechanism as it is", "no-subsampling": "no subsampling (every agent, every round)",
                  "reused-noise": "noise reused across releases", "public-seed": "noise from the public seed"}
PUBLIC_STREAM = 17       # the stream the exported server used with the run's seed


def public_generator(seed: int) -> np.random.Generator:
    """The generator a public-seed server starts every run with (and what anyone holding its config can build)."""
    return np.random.default_rng((int(seed), PUBLIC_STREAM))


class Round:
    """One run's server rounds under ``control``: :meth:`release` is called for t = 1..T in order.

    ``rng`` draws the honest rounds (and the subsample of the reused-noise control). ``public_seed`` seeds the
    public-seed control's generator, which every run starts again (a fresh ServerApp with the same config).
    ``rows_are_runs``: each row of the batch is an independent run of one world (the many-trial game, whose rows
    hold the same input), rather than one agent row of a single run (the one-run game): a public-seed server then
    gives every row the same subsample and noise, so one row is computed and repeated.
    """

    def __init__(self, control: str, rng: np.random.Generator, public_seed: int = 0, rows_are_runs: bool = True):
        self.control, self.rng, self.rows_are_runs = control, rng, rows_are_runs
        self.public = public_generator(public_seed) if control == "public-seed" else None
        self.first_noise = {}

    def release(self, vectors: np.ndarray, weights, *, q: float, z: float, S: float, sampling: str, slot: int = 0):
        """Release t of this run (``slot``: which part of the release, when a release is drawn in parts)."""
        if self.control == "public-seed":
            if not self.rows_are_runs:
                return server.aggregate_batch(vectors, weights, q=q, z=z, S=S, rng=self.public, private=True,
                                              sampling=sampling)
            one = server.aggregate_batch(vectors[:1], weights, q=q, z=z, S=S, rng=self.public, private=True,
                                         sampling=sampling)
            rows = vectors.shape[0]
            return dataclasses.replace(one, **{name: np.broadcast_to(getattr(one, name), (rows,) + getattr(
                one, name).shape[1:]) for name in ("vectors", "selected", "clipped", "clipped_vectors", "signal",
                                                    "noise", "broadcast")})
        if self.control == "no-subsampling":
            step = server.aggregate_batch(vectors, weights, q=1.0, z=z, S=S, rng=self.rng, private=True,
                                          sampling=sampling)
            return dataclasses.replace(step, signal=step.signal / q, noise=step.noise / q,
                                       broadcast=step.broadcast / q, noise_std=step.noise_std / q)
        step = server.aggregate_batch(vectors, weights, q=q, z=z, S=S, rng=self.rng, private=True,
                                      sampling=sampling)
        if self.control == "reused-noise":
            noise = self.first_noise.setdefault(slot, step.noise)
            return dataclasses.replace(step, noise=noise, broadcast=step.signal + noise)
        return step
