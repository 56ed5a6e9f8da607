"""What every public run function shares: its price check, its time limit, Ctrl-C and its progress line.

A run function prices its work (the command line's price, :mod:`engine.limits`) and refuses it above the
caller's :class:`~engine.limits.machine.Limits` before anything heavy starts (:func:`priced`), then computes
under a :class:`~engine.cancel.CancelToken` (:func:`engine.cancel.guarded`): the token's deadline is
``limits.seconds``, and the first Ctrl-C (SIGINT, in the main thread) cancels it, so the work stops at its next
checkpoint and the function returns what it finished, flagged; a second Ctrl-C raises KeyboardInterrupt at once.
"""

from __future__ import annotations

from engine.cancel import TIME_LIMIT, Cancelled, CancelToken
from engine.limits import Cost, format_seconds
from engine.limits.machine import Limits, deadline, refuse_above
from engine.validation import ConfigError

INTERRUPTED = "interrupted"
TIME_LIMITED = "time limit"
DEFAULT_LIMITS = Limits()


class PrivacyWarning(UserWarning):
    """A run's privacy setting is legal but weak (e.g. delta above 1/N); the message says what to change."""


def priced(cost: Cost, limits, what: str = "This run") -> Cost:
    """``cost`` if it fits ``limits`` (ConfigError naming the knob otherwise): the check before any work."""
    return refuse_above(cost, limits, what=what)


def token_for(limits) -> CancelToken:
    """A fresh token whose deadline is ``limits.seconds`` (none when None)."""
    return CancelToken(deadline(limits))


def stop_reason(error: Cancelled, token: CancelToken) -> str:
    """Why ``token``'s work stopped: "time limit" or "interrupted" (re-raises a cancellation that is not ours)."""
    if not token.cancelled:
        raise error
    return TIME_LIMITED if error.reason == TIME_LIMIT else INTERRUPTED


def time_limit_error(limits, what: str) -> ConfigError:
    seconds = deadline(limits)
    return ConfigError(f"{what} was stopped at limits.seconds = {format_seconds(seconds or 0)} before it had a "
                       "result to return: raise the limit (limits=None lifts it) or ask for less.", "limits")
