"""A progress line for a long run started from Python: one line on stderr that rewrites itself.

``Progress(label, total)`` draws nothing for the first ``after`` seconds (a short run stays silent), then at
most every ``every`` seconds one line such as ``dp-fts-de: iteration 12 of 40, simple regret 0.0123,
epsilon 3.21 | 8 s, about 19 s left``, rewritten in place with a carriage return, which a terminal and a
Jupyter notebook both honour; :meth:`Progress.close` ends it with a newline and a last word. No dependency:
a carriage return is all a progress bar needs here.

By default (``enabled=None``) the line is drawn only where someone watches: stderr is a terminal, or the
code runs in a Jupyter kernel. ``enabled=False`` turns it off, ``True`` draws it anywhere (a log file).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

AFTER_SECONDS = 2.0      # a run shorter than this shows no line at all
EVERY_SECONDS = 0.25     # redraw at most this often


def watched(stream: TextIO) -> bool:
    """Whether someone watches ``stream``: a terminal, or a Jupyter kernel's output (ipykernel's stream)."""
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):      # a closed or minimal stream
        return False
    return type(stream).__module__.split(".")[0] == "ipykernel"


def duration(seconds: float) -> str:
    """``8 s``, ``2 min 5 s``, ``1 h 4 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


class Progress:
    """One self-rewriting line on ``stream`` (default stderr) for a run of ``total`` steps."""

    def __init__(self, label: str, total: int, *, enabled: bool | None = None, stream: TextIO | None = None,
                 after: float = AFTER_SECONDS, every: float = EVERY_SECONDS, unit: str = "iteration"):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = watched(self.stream) if enabled is None else bool(enabled)
        self.label, self.total, self.unit = label, int(total), unit
        self.after, self.every = float(after), float(every)
        self.started = time.monotonic()
        self._drawn_at: float | None = None
        self._width = 0

    def update(self, done: int, detail: str = "", *, first: int = 0) -> None:
        """``done`` steps of ``total`` finished (counting from ``first``); ``detail`` adds a few words."""
        now = time.monotonic()
        elapsed = now - self.started
        if not self.enabled or elapsed < self.after:
            return
        if self._drawn_at is not None and now - self._drawn_at < self.every and done < self.total:
            return
        counted = max(done - first, 0)
        left = ""
        if 0 < counted and done < self.total:
            left = f", about {duration(elapsed / counted * (self.total - done))} left"
        text = (f"{self.label}: {self.unit} {done} of {self.total}{f', {detail}' if detail else ''} | "
                f"{duration(elapsed)}{left}")
        self._write(text)
        self._drawn_at = now

    def _write(self, text: str) -> None:
        pad = max(self._width - len(text), 0)
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    def close(self, last: str | None = None) -> None:
        """End the line (if one was drawn), with ``last`` in place of the progress when given."""
        if self._drawn_at is None:
            return
        if last:
            self._write(f"{self.label}: {last}")
        self.stream.write("\n")
        self.stream.flush()
        self._drawn_at = None
