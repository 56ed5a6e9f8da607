"""A federated BO run one iteration at a time, as a library user drives it: :class:`FboRun` and :class:`FboStep`.

``FboRun`` wraps a :class:`~engine.fbo.simulation.Simulation`: iterating it yields one :class:`FboStep` per
finished iteration (0 after the initial points, then 1..T), so a loop can read the curve, epsilon and the best
points so far, and stop by leaving the loop (``break``); ``run.result()`` is the result of the finished
iterations at any moment, also after a KeyboardInterrupt (Ctrl-C) or a time limit ended the loop.
``dpbo.run_fbo`` drives it with a callback and a progress line; ``dpbo.iterate_fbo`` returns it.

A step is the iteration's state, not a copy of the run: ``step.result()`` gives the result up to that
iteration whenever it is called (the records and queries of finished iterations never change).
"""

from __future__ import annotations

import time
from typing import Iterator

import numpy as np

from engine.cancel import TIME_LIMIT, Cancelled, CancelToken, guarded
from engine.fbo.records import FboResult, IterationRecord
from engine.fbo.simulation import Simulation
from engine.validation import ConfigError


class FboStep:
    """One finished iteration of a federated BO run (what a callback receives, what ``iterate_fbo`` yields).

    Attributes
    ----------
    iteration : int
        0 after the initial points, then 1..T.
    iterations : int
        T, the run's number of iterations.
    epsilon : float or None
        The privacy loss so far (None without DP).
    metric : float
        The metric after this iteration, mean over runs and agents (``curve[-1]``; ``metric_label`` says which).
    elapsed : float
        Seconds since the run started.
    """

    __slots__ = ("_run", "record", "iteration", "iterations", "elapsed", "_result")

    def __init__(self, run: "FboRun", record: IterationRecord, elapsed: float):
        self._run = run
        self.record = record
        self.iteration = int(record.iteration)
        self.iterations = int(run.iterations)
        self.elapsed = float(elapsed)
        self._result: FboResult | None = None

    @property
    def epsilon(self) -> float | None:
        return self.record.epsilon

    @property
    def metric(self) -> float:
        return self.record.mean

    @property
    def metric_label(self) -> str:
        return self._run.metric_label

    def result(self) -> FboResult:
        """The :class:`FboResult` up to this iteration: curve, epsilon, ``X``/``y`` history, ``best_x``..."""
        if self._result is None:
            self._result = self._run.simulation.result(upto=self.iteration)
        return self._result

    @property
    def curve(self) -> np.ndarray:
        """The metric after each iteration so far, mean over runs and agents, (iteration + 1,)."""
        return self.result().curve

    @property
    def best_value(self) -> np.ndarray:
        """Each agent's best value so far, (R, N) (``FboResult.best_value``)."""
        return self.result().best_value

    @property
    def best_x(self) -> np.ndarray:
        """Each agent's best point so far, (R, N, D), in the objective's units (``FboResult.best_x``)."""
        return self.result().best_x

    def __repr__(self) -> str:
        eps = "" if self.epsilon is None else f", epsilon={self.epsilon:.4g}"
        return f"FboStep(iteration={self.iteration} of {self.iterations}, {self.metric_label}={self.metric:.4g}{eps})"


class FboRun:
    """A federated BO run computed as it is iterated: one :class:`FboStep` per finished iteration.

    ``token`` (a :class:`~engine.cancel.CancelToken`; default: one without a deadline) stops the run at its
    next checkpoint, keeping the finished iterations: its deadline passed (``result().stopped`` is "time
    limit") or someone cancelled it, e.g. the first Ctrl-C (:func:`engine.cancel.interruptible`; "interrupted").
    A KeyboardInterrupt raised while an iteration computes ends the run the same way, and reaches the loop.
    ``plan`` is what the run will do and release before it starts (agents, delta, z, the epsilon curve, its
    price ``plan.cost``).
    """

    def __init__(self, simulation: Simulation, token: CancelToken | None = None):
        self.simulation = simulation
        self.plan = simulation.plan
        self.iterations = int(simulation.config.iterations)
        self.metric_label = simulation.metric_label
        self.token = CancelToken() if token is None else token
        self.stopped: str | None = None
        self._started: float | None = None

    @property
    def done(self) -> bool:
        """No more iterations will come: all T computed, or the run was stopped."""
        return self.simulation.done or self.stopped is not None

    def stop(self, reason: str = "callback") -> None:
        """End the run after the iterations finished so far (``result().stopped`` says ``reason``)."""
        if self.stopped is None and not self.simulation.done:
            self.stopped = reason

    def __iter__(self) -> Iterator[FboStep]:
        while not self.done:
            if self._started is None:
                self._started = time.monotonic()
            try:
                with guarded(self.token):
                    record = self.simulation.step()
            except Cancelled as error:
                if not self.token.cancelled:
                    raise
                self.stop("time limit" if error.reason == TIME_LIMIT else "interrupted")
                return
            except KeyboardInterrupt:
                self.stop("interrupted")
                raise
            except ConfigError as error:     # e.g. the objective returned text: raised here, not from the engine
                self.stop("error")
                raise error.with_traceback(None) from None
            yield FboStep(self, record, time.monotonic() - self._started)

    def result(self) -> FboResult:
        """The result of every finished iteration (all of them once the run is done, unless stopped)."""
        return self.simulation.result(stopped=self.stopped)
