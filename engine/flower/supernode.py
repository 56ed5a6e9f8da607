"""``python -m engine.flower.supernode [--poll SECONDS] [flower-supernode options]``: Flower's SuperNode, polling often.

A SuperNode of flwr 1.42 that finds no message sleeps 3 s before it asks the
SuperLink again, and waits for its ClientApp's reply in steps of 0.5 s
(``flwr/supernode/start_client_internal.py``, hard-coded), so every round of
an exported app waits seconds for nothing. This starts Flower's own
``flower-supernode`` with every sleep of that module capped at ``--poll``
seconds (0.5 by default); everything else, TLS and authentication included,
is Flower's code with the options given.
"""

from __future__ import annotations

import sys
import time

DEFAULT_POLL_SECONDS = 0.5


class _CappedTime:
    """The ``time`` module with ``sleep`` capped at ``poll`` seconds."""

    def __init__(self, poll: float):
        self.poll = poll

    def __getattr__(self, name):
        return getattr(time, name)

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, self.poll))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    poll = DEFAULT_POLL_SECONDS
    if "--poll" in args:
        at = args.index("--poll")
        try:
            poll = float(args[at + 1])
        except (IndexError, ValueError):
            print("--poll needs a number of seconds, e.g. --poll 0.5.", file=sys.stderr)
            return 2
        del args[at:at + 2]
    import flwr.supernode.start_client_internal as loop
    from flwr.supernode.cli import flower_supernode

    loop.time = _CappedTime(poll)
    sys.argv = ["flower-supernode", *args]
    return flower_supernode()


if __name__ == "__main__":
    sys.exit(main())
