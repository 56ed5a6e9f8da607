"""The price of reading and summarising a table a visitor uploads (``upload_cost``), as the frame it becomes.

A file's bytes say little about the pandas frame read from it: an all-null
Parquet column is stored in a few bytes and becomes an object column of 8
bytes a cell; a column of empty lists becomes a numpy array per cell. The price
therefore counts the frame (``frame_bytes``, from the schema and the row count:
:func:`frame_cell_bytes` per column) and every cell the analysis walks
(``cells``), besides the file.

The number of rows a host reads at most is a limit (:func:`engine.limits.core.check_rows`).
"""

from __future__ import annotations

from engine.limits.core import Cost, priced

# Reading a CSV runs at about 30 MB/s (Parquet faster) and needs a few times the file in memory; summarising
# a sweep table (one point per setting, the Pareto front, the figures) is about 20 us per row (50,000 rows:
# 0.37 s, estimated 1.3 s), and about 1 us per cell of its columns (200,000 rows of 256 mostly empty columns:
# 48 s measured, estimated 77 s).
UPLOAD_BYTE_S = 4e-8
UPLOAD_ROW_S = 4e-5
UPLOAD_CELL_S = 1.5e-6
UPLOAD_MEMORY_FACTOR = 8.0
# The frame while it is built from Arrow (the table, the blocks, their consolidation) and analysed: measured
# 2.1 times the frame (200,000 x 256 all-null cells: 896 MB peak for 410 MB of frame).
FRAME_MEMORY_FACTOR = 2.5
# pandas bytes of one cell: a number, a date or a missing value 8 (an object column holds a pointer to None);
# text an object pointer and a Python string (49 bytes and its characters, counted apart).
NUMBER_CELL = 8
TEXT_CELL = 8 + 49


def upload_cost(n_bytes: int, rows: int | None = None, *, cells: int | None = None,
                frame_bytes: int | None = None) -> Cost:
    """Cost of reading and summarising an uploaded table of ``n_bytes`` (``rows`` when known).

    ``cells`` (rows x columns) and ``frame_bytes`` (the pandas frame it becomes) price a table by what it
    becomes when its schema is known; without them the file's size stands for both.
    """
    rows = int(rows) if rows is not None else int(n_bytes) // 40
    seconds = 0.3 + int(n_bytes) * UPLOAD_BYTE_S + rows * UPLOAD_ROW_S + int(cells or 0) * UPLOAD_CELL_S
    memory = 60 + max(UPLOAD_MEMORY_FACTOR * int(n_bytes), FRAME_MEMORY_FACTOR * int(frame_bytes or 0)) / 1e6
    return priced(seconds, memory, [("upload", n_bytes, 1e6, 1), ("rows", rows, 10_000, 1)])
