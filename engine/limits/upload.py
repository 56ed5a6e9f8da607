"""The price of reading and summarising a table a visitor uploads (``upload_cost``).

The number of rows a host reads at most is a limit (:func:`engine.limits.core.check_rows`).
"""

from __future__ import annotations

from engine.limits.core import Cost, priced

# Reading a CSV runs at about 30 MB/s (Parquet faster) and needs a few times the file in memory; summarising
# a sweep table (one point per setting, the Pareto front, the figures) is about 20 us per row (50,000 rows:
# 0.37 s, estimated 1.3 s).
UPLOAD_BYTE_S = 4e-8
UPLOAD_ROW_S = 4e-5
UPLOAD_MEMORY_FACTOR = 8.0


def upload_cost(n_bytes: int, rows: int | None = None) -> Cost:
    """Cost of reading and summarising an uploaded table of ``n_bytes`` (``rows`` when known)."""
    rows = int(rows) if rows is not None else int(n_bytes) // 40
    seconds = 0.3 + int(n_bytes) * UPLOAD_BYTE_S + rows * UPLOAD_ROW_S
    memory = 60 + UPLOAD_MEMORY_FACTOR * int(n_bytes) / 1e6
    return priced(seconds, memory, [("upload", n_bytes, 1e6, 1), ("rows", rows, 10_000, 1)])
