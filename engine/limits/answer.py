"""What heavy work sends back to the server: bounded in bytes, its text in characters, its lists in items.

Work a visitor starts computes in a walled worker (:mod:`engine.walls`); the server holds only what the worker
sends back for the page: a run's records, an upload's facts and analysis, an export's bytes. A table of a few kB
can still unpack to hundreds of MB of text (2,000 settings, each labelled with a unique 60 kB string), so:

- every text a worker sends back for a page (a setting's label, a parameter's value, an error) is at most
  :data:`TEXT_CHARS` characters: :func:`short_text` keeps the start and a short hash, so distinct long texts stay
  distinct;
- a page lists at most :data:`SHOWN_ITEMS` failures one by one, and says how many more;
- one message from a worker is at most :data:`ANSWER_MB` (checked in the worker before it is sent, and again by
  the server when it arrives; :func:`answer_sentence` says so to the visitor);
- the price of an upload counts its answer (:func:`answer_mb`).

The sizing rule of docs/hosting.md counts this budget: a running job holds at most its worker's memory and two
answers in the server (the one drawn and the next one arriving).
"""

from __future__ import annotations

import hashlib

ANSWER_MB = 32.0            # one message from a walled worker to the server
TEXT_CHARS = 120            # characters of one text a worker sends back for a page
SHOWN_ITEMS = 10            # failures a page lists one by one
HASH_CHARS = 8


def short_text(value, limit: int = TEXT_CHARS):
    """``value`` unchanged when it is not text or fits ``limit`` characters; else its start, an ellipsis and a
    short hash of the whole (two long texts that differ only at the end stay different)."""
    if not isinstance(value, str) or len(value) <= limit:
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{value[:limit - HASH_CHARS - 4]}... {digest}"


def answer_mb(settings: int, columns: int, preview_rows: int) -> float:
    """The largest answer an upload of ``settings`` settings and ``columns`` columns sends back (MB): every
    setting's label and parameters (a few copies: the summary, the settings, the ties) and the preview's cells,
    each text at most :data:`TEXT_CHARS`."""
    text = TEXT_CHARS + 64          # a bounded string and its object
    per_setting = 4 * text + columns * text
    return (settings * per_setting + preview_rows * columns * text) / 1e6


def answer_sentence(size_bytes: int, field_words: str | None) -> str:
    """The visitor's sentence when a worker's answer is over :data:`ANSWER_MB`."""
    lower = f"Lower the {field_words} and run again." if field_words else "Lower the settings and run again."
    return (f"The result of this request is {_mb(size_bytes / 1e6)}, more than the {_mb(ANSWER_MB)} this server "
            f"sends back to a page at once, so it was stopped. {lower}")


def _mb(megabytes: float) -> str:
    return f"{megabytes:,.0f} MB" if megabytes >= 10 else f"{megabytes:.2g} MB"
