"""Uploaded sweep tables are refused from their header or footer, priced, and only then read."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import engine.sweep.upload as upload
from engine.limits import HostLimits
from engine.sweep import read_upload
from engine.validation import ConfigError

OPEN = HostLimits(max_seconds=None, max_memory_mb=None, max_upload_rows=None)


def _table(rows: int = 6) -> pd.DataFrame:
    return pd.DataFrame({"setting": [f"q={i % 3}" for i in range(rows)], "q": [i % 3 for i in range(rows)],
                         "utility": np.linspace(0, 1, rows), "privacy_loss": 1.0})


def _parquet(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def _never(*args, **kwargs):
    raise AssertionError("the file was parsed before it was refused")


def _one_sentence(err: ConfigError) -> str:
    text = str(err)
    assert text.endswith(".") and "\n" not in text and text.count(". ") == 0, text
    return text


def test_a_small_table_reads_like_read_table():
    frame = _table()
    for name, data in (("t.csv", frame.to_csv(index=False).encode()), ("t.parquet", _parquet(frame))):
        table = read_upload(io.BytesIO(data), name, limits=OPEN)
        assert list(table["setting"]) == list(frame["setting"])
        assert {"role", "cell", "run", "error"} <= set(table.columns)


def test_a_csv_with_too_many_columns_is_refused_from_its_header(monkeypatch):
    monkeypatch.setattr(upload.pd, "read_csv", _never)
    wide = ",".join(["setting", "utility", "privacy_loss"] + [f"c{i}" for i in range(2_000)]) + "\n" \
        + ",".join(["a", "1", "1"] + ["0"] * 2_000) + "\n"
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(wide.encode()), "wide.csv", limits=OPEN)
    assert "2,003 columns" in _one_sentence(err.value)


def test_a_csv_whose_header_never_ends_is_refused(monkeypatch):
    monkeypatch.setattr(upload.pd, "read_csv", _never)
    endless = ("setting," + ",".join(f"c{i}" for i in range(30_000))).encode()
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(endless), "endless.csv", limits=OPEN)
    assert "header line longer than" in _one_sentence(err.value)


def test_a_parquet_file_with_too_many_columns_is_refused_from_its_footer(monkeypatch):
    wide = pd.concat([_table(1), pd.DataFrame({f"c{i}": [0.0] for i in range(300)})], axis=1)
    monkeypatch.setattr(upload, "_check_unpacked", _never)
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(_parquet(wide)), "wide.parquet", limits=OPEN)
    assert "columns" in _one_sentence(err.value)


def test_a_parquet_file_with_too_many_rows_is_refused_from_its_footer(monkeypatch):
    monkeypatch.setattr(upload, "_check_unpacked", _never)
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(_parquet(_table(50))), "long.parquet",
                    limits=HostLimits(max_seconds=None, max_memory_mb=None, max_upload_rows=40))
    assert "more than 40 rows" in _one_sentence(err.value)


def test_a_tiny_parquet_file_of_a_repeated_long_string_is_refused_at_its_unpacked_size():
    rows = 20_000
    frame = pd.DataFrame({"setting": ["q=1"] * rows, "utility": 0.5, "privacy_loss": 1.0,
                          "note": ["x" * 2048] * rows})
    data = _parquet(frame)
    assert len(data) < 100_000                     # 40 MB of text, a few kB on disk
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(data), "strings.parquet",
                    limits=HostLimits(max_seconds=None, max_memory_mb=200, max_upload_rows=None))
    assert "MB of memory to open" in _one_sentence(err.value)
    # The same file under a larger allowance is read, the text intact.
    table = read_upload(io.BytesIO(data), "strings.parquet", limits=OPEN)
    assert table["note"].iloc[-1] == "x" * 2048


def test_reading_and_comparing_is_priced_before_parsing(monkeypatch):
    monkeypatch.setattr(upload.pd, "read_csv", _never)
    data = _table(2_000).to_csv(index=False).encode()
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(data), "t.csv",
                    limits=HostLimits(max_seconds=0.2, max_memory_mb=None, max_upload_rows=None))
    assert "of computing to open" in _one_sentence(err.value)


# ---------------------------------------------------------------- priced by the frame the file becomes
PROBE = HostLimits(max_seconds=30, max_memory_mb=2048)       # the probe's DPBO_MAX_SECONDS and DPBO_MAX_MEMORY_MB


def _arrow_parquet(rows: int, columns: dict) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = {"setting": pa.array([f"q={i % 3}" for i in range(rows)]), "utility": pa.array(np.linspace(0, 1, rows)),
            "privacy_loss": pa.array(np.ones(rows))}
    buffer = io.BytesIO()
    pq.write_table(pa.table({**base, **columns}), buffer)
    return buffer.getvalue()


def test_the_probes_all_null_columns_are_priced_as_the_object_columns_they_become(monkeypatch):
    """200,000 rows x 256 columns, 253 all-null (3.9 MB): priced at about 100 MB from Arrow's bytes (an all-null
    column counts none), read into 1.5 GB of object columns and analysed for a minute. Now priced from the schema
    and the row count, as the frame (8 bytes a missing value) and every cell the analysis walks, and refused before
    it is parsed at the probe's limits."""
    import pyarrow as pa

    rows = 200_000
    data = _arrow_parquet(rows, {f"empty{i}": pa.nulls(rows) for i in range(253)})
    assert len(data) < 5e6
    monkeypatch.setattr(upload.pd, "read_parquet", _never)
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(data), "nulls.parquet", limits=PROBE)
    assert "would take about" in _one_sentence(err.value) and "the 30 s this server allows" in str(err.value)
    seen = []
    monkeypatch.setattr(upload, "_check_price", lambda name, cost, limits: seen.append(cost))
    with pytest.raises(ConfigError, match="AssertionError"):          # priced, then stopped at the parse
        read_upload(io.BytesIO(data), "nulls.parquet", limits=OPEN)
    frame_mb = rows * 256 * 8 / 1e6                       # what pandas holds: a pointer (or a number) per cell
    assert min(c.memory_mb for c in seen) >= 2 * frame_mb, [c.memory_mb for c in seen]


def test_the_probes_columns_of_empty_lists_are_refused_from_the_schema(monkeypatch):
    """30,000 rows with 253 columns of empty lists (0.7 MB): +1,379 MB against 309 MB priced. A sweep table holds
    one number or text per cell: refused from the schema, before anything is read."""
    import pyarrow as pa

    rows = 30_000
    empty = pa.array([[]] * rows, type=pa.list_(pa.int64()))
    data = _arrow_parquet(rows, {f"list{i}": empty for i in range(253)})
    monkeypatch.setattr(upload.pd, "read_parquet", _never)
    with pytest.raises(ConfigError) as err:
        read_upload(io.BytesIO(data), "lists.parquet", limits=OPEN)
    assert _one_sentence(err.value) == ("lists.parquet has a column of lists (list0); a sweep table holds one "
                                        "number or text per cell.")
