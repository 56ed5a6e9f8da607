"""What a finished run released and spent, read from its log: the last step of the README's run block.

``flwr run . federation --stream`` exits 0 whatever happened to the run (flwr 1.42), so the README's run block
ends with ``python -m engine.flower.outcome run.log``: one sentence on what the run released and so what epsilon
it spent, and an exit status that is 0 only for a run that completed. It reads the log alone (the ServerApp's
``RESULT`` summary, which says ``"status"``, and the ``RELEASE`` line the server logs after every release, which
still tell what was spent when the ServerApp was stopped before its summary) and needs no Flower.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

RESULT_PREFIX = "RESULT "
RELEASE_PREFIX = "RELEASE "
COMPLETED, FAILED = "completed", "failed"


def release_line(released: int, allowed: int, epsilon: float | None, delta: float | None) -> str:
    """The line the server logs after release ``released`` (of ``allowed``): the epsilon spent so far."""
    return RELEASE_PREFIX + json.dumps({"release": int(released), "of": int(allowed),
                                        "epsilon": None if epsilon is None else float(epsilon),
                                        "delta": None if delta is None else float(delta)})


def _records(text: str, prefix: str) -> list[dict]:
    out = []
    for line in text.splitlines():
        at = line.find(prefix + "{")
        if at >= 0:
            try:
                out.append(json.loads(line[at + len(prefix):]))
            except json.JSONDecodeError:
                continue
    return out


def run_id(text: str) -> str | None:
    found = re.search(r"Successfully started run (\d+)", text)
    return found.group(1) if found else None


def spent(epsilon, delta) -> str:
    if not epsilon:
        return "so no epsilon was spent"
    return f"so epsilon {epsilon:.4g} at delta {delta:.3g} was spent"


def outcome(text: str) -> tuple[int, str]:
    """(exit status, one sentence) for a run's log."""
    name = f"Run {run_id(text)}" if run_id(text) else "The run"
    results = _records(text, RESULT_PREFIX)
    if results:
        summary = results[-1]
        status = summary.get("status", COMPLETED)
        epsilon, delta = summary.get("epsilon"), summary.get("delta")
        if summary.get("tool") == "hype":
            released = (f"released the vote's winner (candidate {summary['winner']})"
                        if summary.get("winner") is not None else "released nothing")
        else:
            releases = int(summary.get("releases", 0) or 0)
            released = f"released {releases} broadcast{'s' if releases != 1 else ''}" if releases else \
                "released nothing"
        if status == COMPLETED:
            return 0, f"{name} completed: it {released}, {spent(epsilon, delta)}."
        why = summary.get("error") or "no reason given"
        return 1, f"{name} failed ({why}): it {released}, {spent(epsilon, delta)}."
    releases = _records(text, RELEASE_PREFIX)
    if releases:
        last = releases[-1]
        return 1, (f"{name} ended without its summary (its ServerApp stopped early); its log shows "
                   f"{last['release']} release{'s' if last['release'] != 1 else ''}, "
                   f"{spent(last['epsilon'], last['delta'])}.")
    if run_id(text) is None:
        return 1, "No run was started (flwr run's own message is in the log above): nothing was released."
    return 1, f"{name} ended without a summary and its log shows no release, so no epsilon was spent."


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("Give the run's log: python -m engine.flower.outcome run.log", file=sys.stderr)
        return 2
    path = Path(args[0])
    if not path.is_file():
        print(f"No run log at {path}.", file=sys.stderr)
        return 2
    status, sentence = outcome(path.read_text(encoding="utf-8", errors="replace"))
    print(sentence, file=sys.stdout if status == 0 else sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
