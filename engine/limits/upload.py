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

from engine.limits.core import Cost, priced, with_margin

# Reading a CSV runs at about 30 MB/s (Parquet faster) and needs a few times the file in memory. Calibrated in
# the reference machine's seconds (benchmarks/bench_limits.py, its "upload-page" cases: the Trade-off explorer's
# walled read, facts and analysis of a file; docs/benchmarks.md): a row costs about 20 us (200,000 rows of 4
# columns: 4.3 s), a cell of a parameter column about 1.2 us (200,000 rows of 24 numbers: 9.8 s), an all-null
# cell 0.3 us (20,000 rows of 256 columns: 2.0 s), and every setting about 2.8 ms (its summary, twice, and its
# neighbours: 2,000 settings in 20,000 rows, 5.8 s), of which engine.sweep.analysis.pair_seconds prices 2 ms;
# the constants below are those figures rounded up: the estimates are 1.9 to 16 times these runs, the most for
# small tables, which are priced for the worst case of one setting per row (up to 2,000).
UPLOAD_BYTE_S = 4e-8
UPLOAD_ROW_S = 4e-5
UPLOAD_CELL_S = 1.5e-6
UPLOAD_SETTING_S = 2e-3      # per setting beyond pair_seconds' own: the page's summary and its parameters
UPLOAD_MEMORY_FACTOR = 8.0
# The frame while it is built from Arrow (the table, the blocks, their consolidation) and analysed: measured
# 2.1 times the frame (200,000 x 256 all-null cells: 896 MB peak for 410 MB of frame).
FRAME_MEMORY_FACTOR = 2.5
# Every row gains the table's own columns (role, cell, replicate, error, metric) and its setting's text, which a
# CSV's price (every cell a number) does not count: 200,000 rows of 4 columns took 99 MB above the interpreter.
UPLOAD_ROW_BYTES = 200
# pandas bytes of one cell: a number, a date or a missing value 8 (an object column holds a pointer to None);
# text an object pointer and a Python string (49 bytes and its characters, counted apart).
NUMBER_CELL = 8
TEXT_CELL = 8 + 49


def upload_cost(n_bytes: int, rows: int | None = None, *, cells: int | None = None,
                frame_bytes: int | None = None, settings: int = 0) -> Cost:
    """Cost of reading and summarising an uploaded table of ``n_bytes`` (``rows`` when known).

    ``cells`` (rows x columns) and ``frame_bytes`` (the pandas frame it becomes) price a table by what it
    becomes when its schema is known; without them the file's size stands for both. ``settings``: how many
    settings the page summarises (at most; their pairs are priced by the caller).
    """
    rows = int(rows) if rows is not None else int(n_bytes) // 40
    seconds = (0.3 + int(n_bytes) * UPLOAD_BYTE_S + rows * UPLOAD_ROW_S + int(cells or 0) * UPLOAD_CELL_S
               + int(settings) * UPLOAD_SETTING_S)
    memory = (60 + max(UPLOAD_MEMORY_FACTOR * int(n_bytes), FRAME_MEMORY_FACTOR * int(frame_bytes or 0)) / 1e6
              + rows * UPLOAD_ROW_BYTES / 1e6)
    return priced(with_margin("upload", seconds), memory, [("upload", n_bytes, 1e6, 1), ("rows", rows, 10_000, 1)])
