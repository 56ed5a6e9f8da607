"""Stepping a run's lines, in the server's process or in a walled worker (:mod:`engine.walls`).

:func:`step_lines` steps the lines of a run and hands snapshots and progress to
a channel; :func:`run_loop._produce <ui.kit.run_loop>` calls it in a thread of
the server, or, when heavy runs compute in workers
(:func:`engine.walls.use_workers`), :func:`walled` calls it in a worker whose
memory and CPU time the OS caps, and forwards the worker's messages (pickled
copies of the snapshots) to the page as they come. This module does not import
Streamlit, so a worker never does.
"""

from __future__ import annotations

import functools
import importlib
import logging
import pickle
import time
from typing import Iterator

from engine.cancel import Cancelled, CancelToken, cancellable
from engine.hosting import is_hosted
from engine.limits import HostLimits, answer_sentence
from engine.limits import answer as answers
from engine.limits.core import KNOB_NAMES, format_memory, format_seconds
from engine.validation import ConfigError
from engine.walls import MEMORY, Wall, WallHit, run_walled

REDRAW_SECONDS = 0.3      # live charts redraw at most this often (and after the first item)
LOG = logging.getLogger("dpbo.live_run")
QUIET = ("streamlit.runtime.caching.cache_data_api", "streamlit.runtime.caching.cache_resource_api",
         "streamlit.runtime.scriptrunner_utils.script_run_context")


def by_name(module: str, qualname: str):
    """In a worker: an object of an importable module (how cached page functions travel)."""
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def failure_message(err: BaseException) -> str:
    """What a visitor sees of an unexpected error: its type and text locally, nothing internal when hosted."""
    if is_hosted():
        return "an internal error (the server's log has the details)"
    return f"{type(err).__name__}: {err}"


def step_lines(lines, snapshot, progress, interleave, channel, token: CancelToken,
               redraw: float = REDRAW_SECONDS) -> None:
    iterators: list[Iterator | None] = [None] * len(lines)
    latest: list = [None] * len(lines)
    counts = [0] * len(lines)
    total = sum(line.steps for line in lines)
    active = list(range(len(lines)))
    draws, last_draw, behind = 0, 0.0, False
    while active:
        for k in list(active) if interleave else active[:1]:
            token.check()
            if iterators[k] is None:
                iterators[k] = iter(lines[k].start())
            try:
                latest[k] = next(iterators[k])
            except StopIteration:
                active.remove(k)
                continue
            counts[k] += 1
            behind = True
            now = time.perf_counter()
            if draws == 0 or now - last_draw >= redraw:
                channel.put("draw", [snapshot(item) if item is not None else None for item in latest])
                channel.wait_drawn(token)
                draws, last_draw, behind = draws + 1, time.perf_counter(), False
            bar = progress(latest, counts) if progress else (sum(counts) / max(total, 1), f"{sum(counts)} of {total}")
            channel.put("progress", bar)
    channel.put("done", [snapshot(item) if item is not None else None for item in latest], behind)


class _Sent:
    """The worker's side of the channel: every message goes to the server at once (snapshots are copies)."""

    def __init__(self, send):
        self.send = send

    def put(self, *message) -> None:
        self.send(message)

    def wait_drawn(self, token: CancelToken) -> None:
        token.check()


class AnswerTooLarge(Exception):
    """What a worker was about to send back is over the answer budget (:data:`engine.limits.ANSWER_MB`)."""

    def __init__(self, size: int):
        super().__init__(f"an answer of {size} bytes")
        self.size = size


def bounded(send, budget: int):
    """The worker's ``send``, each message pickled here and refused over ``budget`` bytes (the server checks the
    size again before it unpickles anything)."""
    def put(message) -> None:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        if len(data) > budget:
            raise AnswerTooLarge(len(data))
        send(("packed", data))
    return put


def unpacked(message: tuple, budget: int, field: str | None) -> tuple:
    """A worker's message as it sent it: a packed one unpickled after its size is checked; an answer over the
    budget raised as the visitor's ConfigError naming ``field``."""
    if message[0] == "packed":
        if len(message[1]) > budget:
            raise ConfigError(answer_sentence(len(message[1]), KNOB_NAMES.get(field, field)), field)
        message = pickle.loads(message[1])
    if message[0] == "answer":
        raise ConfigError(answer_sentence(message[1], KNOB_NAMES.get(field, field)), field)
    return message


def answer_budget() -> int:
    """Bytes one message from a worker may have (:data:`engine.limits.answer.ANSWER_MB`, read now)."""
    return int(answers.ANSWER_MB * 1e6)


def in_worker(lines, snapshot, progress, interleave, redraw: float, deadline: float | None, send,
              budget: int | None = None) -> None:
    """The worker's whole run: step the lines under a cancel token with the host's deadline, report the end."""
    for name in QUIET:       # a worker has no Streamlit runtime: its caches are plain memory caches, as meant
        logging.getLogger(name).setLevel(logging.ERROR)
    token = CancelToken(deadline)
    put = send if budget is None else bounded(send, budget)
    try:
        with cancellable(token):
            step_lines(lines, snapshot, progress, interleave, _Sent(put), token, redraw)
    except Cancelled as err:
        send(("stopped", err.reason))
    except ConfigError as err:
        send(("refused", str(err), err.field))
    except AnswerTooLarge as err:
        send(("answer", err.size))
    except MemoryError:
        raise
    except Exception as err:  # noqa: BLE001 - a failing run must leave the page usable
        LOG.exception("A live run failed in its worker")
        send(("failed", failure_message(err)))


def wall_sentence(kind: str, field: str | None, limits: HostLimits | None = None) -> str:
    """The visitor's one sentence when a run crossed a wall, naming the knob to lower."""
    limits = HostLimits.from_env() if limits is None else limits
    knob = f"Lower the {KNOB_NAMES.get(field, field)} and run again." if field else "Lower the settings and run again."
    if kind == MEMORY:
        limit = f" ({format_memory(limits.max_memory_mb)})" if limits.max_memory_mb else ""
        return f"This run needed more memory than this server allows per run{limit} and was stopped. {knob}"
    seconds = limits.run_seconds
    limit = f" ({format_seconds(seconds)})" if seconds else ""
    return f"This run needed more computing time than this server allows per run{limit} and was stopped. {knob}"


def walled(lines, snapshot, progress, interleave, channel, token: CancelToken, cost,
           redraw: float = REDRAW_SECONDS) -> None:
    """Step ``lines`` in a walled worker, forwarding its messages to ``channel`` (the script thread's)."""
    budget = answer_budget()
    work = functools.partial(in_worker, lines, snapshot, progress, interleave, redraw,
                             None if token.deadline is None else max(token.deadline - time.monotonic(), 0.1),
                             budget=budget)
    try:
        for message in run_walled(work, token, Wall.from_limits()):
            kind, *payload = unpacked(message, budget, cost.field)
            if kind == "refused":
                raise ConfigError(payload[0], payload[1])
            channel.put(kind, *payload)
            if kind == "draw":
                channel.wait_drawn(token)
    except WallHit as hit:
        field = (cost.memory_field or cost.field) if hit.kind == MEMORY else cost.field
        raise ConfigError(wall_sentence(hit.kind, field), field) from None


def _call(fn, args, kwargs, send, budget: int | None = None, progress: bool = False) -> None:
    """In a worker: ``fn(*args, **kwargs)`` and its value, or its refusal or failure, as one message
    (``progress``: ``fn`` gets one more argument, a ``report(*values)`` whose calls reach the server as they come)."""
    put = send if budget is None else bounded(send, budget)
    try:
        if progress:
            args = (*args, lambda *values: put(("progress", *values)))
        put(("value", fn(*args, **kwargs)))
    except ConfigError as err:
        send(("refused", str(err), err.field))
    except AnswerTooLarge as err:
        send(("answer", err.size))
    except MemoryError:
        raise
    except Exception as err:  # noqa: BLE001 - the server raises it as one sentence
        LOG.exception("A walled call failed in its worker")
        send(("failed", failure_message(err)))


def call_walled(fn, args: tuple, kwargs: dict, token: CancelToken, *, field: str | None = None, progress=None):
    """``fn(*args, **kwargs)`` computed in a walled worker (light work that may still be large: an upload).

    A refusal is raised as its ConfigError, a failure as RuntimeError with the visitor's sentence, and a run
    over the wall, or an answer over :data:`engine.limits.ANSWER_MB`, as ConfigError naming ``field``.
    ``progress``: ``fn`` is called with one more argument, a ``report(*values)`` that calls ``progress(*values)``
    here as the worker reports (a table build's rows done).
    """
    budget = answer_budget()
    work = functools.partial(_call, fn, args, kwargs, budget=budget, progress=progress is not None)
    try:
        for message in run_walled(work, token, Wall.from_limits()):
            kind, *payload = unpacked(message, budget, field)
            if kind == "progress":
                progress(*payload)
                continue
            if kind == "value":
                return payload[0]
            if kind == "refused":
                raise ConfigError(payload[0], payload[1])
            raise RuntimeError(payload[0])
    except WallHit as hit:
        raise ConfigError(wall_sentence(hit.kind, field), field) from None
    raise RuntimeError("the worker ended without an answer")
