"""Opening a sweep table a visitor uploads: refused from its header or footer, priced, then read.

:func:`read_upload` is the one call a page makes. Before any parsing it reads
what the file says about itself (a Parquet file's footer: rows, columns and
their types, unpacked size; a CSV file's header line and its number of lines)
and refuses a file that would not fit with one sentence; then it prices
reading the table and comparing its settings (:func:`engine.limits.upload_cost`
plus :func:`engine.sweep.analysis.pair_seconds`) against the host's limits,
as the pandas frame it becomes (every cell, an all-null column as the object
column it is read as), and only then reads it. A column of lists, maps or
structures is refused from the schema: a sweep table holds one number or text
per cell. Text columns of a Parquet file are read as dictionaries, so a file
of a few kB whose rows repeat a long string is measured at its unpacked size
before pandas ever holds it. A CSV is priced from its header's columns and its
number of lines (every cell a number or missing value, text at the file's size).
"""

from __future__ import annotations

import csv
import io
import os
import struct
from pathlib import Path

import pandas as pd

from engine.cancel import Cancelled, checkpoint
from engine.limits import (TEXT_CHARS, Cost, HostLimits, answer_mb, check_rows, format_seconds, short_text,
                           upload_cost)
from engine.limits.upload import NUMBER_CELL, TEXT_CELL
from engine.sweep.analysis import pair_seconds
from engine.sweep.store import CSV_CHUNK_ROWS, MAX_SETTINGS, finish_table, table_format
from engine.validation import ConfigError

MAX_COLUMNS = 256               # a sweep table has its result columns and one column per tool parameter
HEADER_BYTES = 64 * 1024        # longest CSV header line read
MAX_FOOTER_BYTES = 1 << 20      # longest Parquet footer (its schema and row-group index) parsed
UNPACKED_PER_UPLOADED = 50      # a table may unpack to at most this many times the largest upload
PREVIEW_ROWS = 1_000            # rows of an uploaded table its worker sends back for the page to show


def read_upload(source, name: str | None = None, *, max_bytes: int | None = None,
                limits: HostLimits | None = None) -> pd.DataFrame:
    """Read an uploaded sweep table (CSV or Parquet by ``name``) after refusing and pricing it.

    ``max_bytes`` bounds the file (the page's upload size). Raises ConfigError
    with one sentence: a file too large, a header or footer that names too
    many columns, too many rows, too much unpacked data, or a price above the
    host's limits (``limits``, default: from the environment).
    """
    limits = HostLimits.from_env() if limits is None else limits
    name = Path(name or str(getattr(source, "name", source))).name
    kind = table_format(name)
    data = _bytes(source)
    if max_bytes is not None and len(data) > max_bytes:
        raise ConfigError(f"{name} is {len(data) / 1e6:,.1f} MB; this server reads tables of at most "
                          f"{max_bytes / 1e6:,.0f} MB.", "upload")
    try:
        if kind == "parquet":
            frame = _parquet(data, name, limits, max_bytes)
        else:
            frame = _csv(data, name, limits)
    except (ConfigError, Cancelled):
        raise
    except Exception as err:  # noqa: BLE001 - any unreadable file gets one sentence
        raise ConfigError(f"Could not read {name} as a sweep table ({type(err).__name__}).") from None
    return finish_table(frame, name)


def short_cells(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` with every text cell (and column name) at most :data:`engine.limits.TEXT_CHARS` characters
    (:func:`engine.limits.short_text`: distinct texts stay distinct), and how many texts were shortened: what a
    walled worker keeps of an upload before anything it sends back for the page (labels, parameters, errors, the
    preview) is made from it."""
    out, shortened = frame, 0
    for column in frame.columns:
        dtype = frame[column].dtype
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype) or \
                isinstance(dtype, pd.CategoricalDtype):
            values = frame[column]
            long = values.map(lambda v: isinstance(v, str) and len(v) > TEXT_CHARS).astype(bool)
            if bool(long.any()):
                out = out.copy() if out is frame else out
                out[column] = out[column].astype(object)
                out.loc[long, column] = values[long].map(short_text)
                shortened += int(long.sum())
    renamed = {c: short_text(c) for c in out.columns if isinstance(c, str) and len(c) > TEXT_CHARS}
    return (out.rename(columns=renamed) if renamed else out), shortened + len(renamed)


def upload_price(n_bytes: int, rows: int | None, *, cells: int | None = None,
                 frame_bytes: int | None = None) -> Cost:
    """Reading a table of ``n_bytes`` (unpacked) and ``rows`` (``cells`` and the ``frame_bytes`` of the pandas
    frame it becomes, when known), and comparing its settings on the page."""
    settings = min(int(rows if rows is not None else n_bytes // 40), MAX_SETTINGS)
    cost = upload_cost(n_bytes, rows, cells=cells, frame_bytes=frame_bytes, settings=settings)
    columns = max(1, (cells or 0) // max(1, int(rows or 1))) if cells else MAX_COLUMNS
    # What the worker sends back (the page's facts and analysis, text bounded) is held by the server too.
    answer = answer_mb(settings, min(columns, MAX_COLUMNS), min(int(rows if rows is not None else settings),
                                                                PREVIEW_ROWS))
    return Cost(seconds=cost.seconds + pair_seconds(settings), memory_mb=cost.memory_mb + answer, field=cost.field,
                knobs=cost.knobs, memory_field=cost.memory_field, transient_mb=cost.transient_mb)


def _bytes(source) -> bytes:
    if isinstance(source, (str, os.PathLike)):
        return Path(source).read_bytes()
    getvalue = getattr(source, "getvalue", None)
    if getvalue is not None:
        return getvalue()
    return source.read()


def _too_many_columns(name: str, columns: int) -> ConfigError:
    return ConfigError(f"{name} has {columns:,} columns; a sweep table has at most {MAX_COLUMNS:,} (its results and "
                       "one column per parameter).", "upload")


def _csv(data: bytes, name: str, limits: HostLimits) -> pd.DataFrame:
    head = data[:HEADER_BYTES]
    end = head.find(b"\n")
    if end < 0 and len(data) > HEADER_BYTES:
        raise ConfigError(f"{name} has a header line longer than {HEADER_BYTES // 1024} kB; a sweep table's header "
                          "is a few hundred characters.", "upload")
    header = next(csv.reader([head[: end if end >= 0 else len(head)].decode("utf-8", "replace")]), [])
    if len(header) > MAX_COLUMNS:
        raise _too_many_columns(name, len(header))
    lines = data.count(b"\n") + 1          # at least the rows (a quoted line break counts one more)
    cells = lines * max(1, len(header))
    _check_price(name, upload_price(len(data), lines, cells=cells, frame_bytes=cells * NUMBER_CELL), limits)
    chunks, rows = [], 0
    with pd.read_csv(io.BytesIO(data), chunksize=CSV_CHUNK_ROWS) as reader:
        for chunk in reader:
            checkpoint()
            rows += len(chunk)
            check_rows(rows, limits, what=name)
            chunks.append(chunk)
    return pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame()


def _parquet(data: bytes, name: str, limits: HostLimits, max_bytes: int | None) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if len(data) >= 12 and data[-4:] == b"PAR1":
        footer = struct.unpack("<I", data[-8:-4])[0]
        if footer > MAX_FOOTER_BYTES:
            raise ConfigError(f"{name} describes {footer / 1e6:,.1f} MB of columns in its footer; a sweep table's "
                              f"is under {MAX_FOOTER_BYTES / 1e6:,.0f} MB.", "upload")
    parquet = pq.ParquetFile(io.BytesIO(data))
    meta = parquet.metadata
    if meta.num_columns > MAX_COLUMNS:
        raise _too_many_columns(name, meta.num_columns)
    check_rows(meta.num_rows, limits, what=name)
    schema = parquet.schema_arrow
    nested = [f for f in schema if pa.types.is_nested(f.type)]
    if nested:
        kind = nested[0].type
        what = ("structures" if pa.types.is_struct(kind) else "maps" if pa.types.is_map(kind)
                else "unions" if pa.types.is_union(kind) else "lists")
        raise ConfigError(f"{name} has a column of {what} ({nested[0].name[:40]}); a sweep table holds one number "
                          "or text per cell.", "upload")
    rows = meta.num_rows
    text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)]
    # The frame pandas builds: 8 bytes a number or missing value (an all-null column is an object column of
    # None), an object and a string per text cell; every cell walked by the analysis.
    frame = rows * sum(TEXT_CELL if f.name in text or pa.types.is_binary(f.type) or pa.types.is_dictionary(f.type)
                       else NUMBER_CELL for f in schema)
    cells = rows * len(schema)
    unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    _check_unpacked(name, unpacked, rows, limits, max_bytes, cells=cells, frame_bytes=frame)
    # Text read as dictionaries: a repeated long string costs its length once until it is measured.
    table = pq.ParquetFile(io.BytesIO(data), read_dictionary=text).read()
    checkpoint()
    decoded = table.nbytes
    for column in text:
        chunks = table.column(column).chunks
        # The length of every row's string, looked up through its dictionary index (nothing decoded).
        decoded += sum(int(pc.sum(pc.take(pc.binary_length(c.dictionary), c.indices)).as_py() or 0)
                       for c in chunks if len(c))
    _check_unpacked(name, decoded, rows, limits, max_bytes, cells=cells, frame_bytes=frame + decoded)
    del table
    return pd.read_parquet(io.BytesIO(data))      # as any other reader of the file sees it


def _check_unpacked(name: str, n_bytes: int, rows: int, limits: HostLimits, max_bytes: int | None, *,
                    cells: int | None = None, frame_bytes: int | None = None) -> None:
    if max_bytes is not None and n_bytes > UNPACKED_PER_UPLOADED * max_bytes:
        raise ConfigError(f"{name} unpacks to {n_bytes / 1e6:,.0f} MB; this server reads tables of at most "
                          f"{UNPACKED_PER_UPLOADED * max_bytes / 1e6:,.0f} MB once unpacked.", "upload")
    _check_price(name, upload_price(n_bytes, rows, cells=cells, frame_bytes=frame_bytes), limits)


def _check_price(name: str, cost: Cost, limits: HostLimits) -> None:
    """Refuse, in one sentence, a table whose reading and comparison would exceed the host's limits."""
    if limits.max_memory_mb is not None and cost.memory_mb > limits.max_memory_mb:
        raise ConfigError(f"{name} would need about {cost.memory_mb:,.0f} MB of memory to open, more than the "
                          f"{limits.max_memory_mb:,.0f} MB this server allows; upload a smaller table.", "upload")
    if limits.max_seconds is not None and cost.seconds > limits.max_seconds:
        raise ConfigError(f"{name} would take about {format_seconds(cost.seconds)} of computing to open, more than "
                          f"the {format_seconds(limits.max_seconds)} this server allows; upload a smaller table.",
                          "upload")


__all__ = ["HEADER_BYTES", "MAX_COLUMNS", "PREVIEW_ROWS", "read_upload", "short_cells", "upload_price"]
