"""Where a sweep keeps its results: one small file per finished cell, merged into the table.

Next to the output ``sweep.parquet`` lives ``sweep.parquet.parts/``, holding
``<cell key>.parquet`` for every finished cell. Each part is written to a
temporary name, flushed and renamed, so a killed sweep leaves only whole
parts; a rerun with the same output reads them and runs only the missing cells.
The table itself is rewritten (atomically) from the parts.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from engine.cancel import Cancelled, checkpoint
from engine.validation import ConfigError

FORMATS = {".parquet": "parquet", ".pq": "parquet", ".csv": "csv"}


def table_format(path: str | os.PathLike) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ConfigError(f"The sweep output must end in .parquet or .csv, got {str(path)!r}.", "out")
    return FORMATS[suffix]


def _atomic_write(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_table(frame: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write a sweep table as Parquet or CSV (by extension), atomically."""
    path = Path(path)
    if table_format(path) == "parquet":
        _atomic_write(path, lambda handle: frame.to_parquet(handle, index=False))
    else:
        _atomic_write(path, lambda handle: handle.write(frame.to_csv(index=False).encode()))


REQUIRED_COLUMNS = ("setting", "utility", "privacy_loss")
MAX_SETTINGS = 2000          # settings one table may hold (the Pareto front compares every pair)
CSV_CHUNK_ROWS = 20_000      # rows parsed between two cancel checkpoints


def read_table(source, name: str | None = None, *, max_bytes: int | None = None,
               max_rows: int | None = None) -> pd.DataFrame:
    """Read a sweep table from a path or an uploaded file object (CSV or Parquet by name).

    Only :data:`REQUIRED_COLUMNS` must be there; the other columns a sweep
    writes get their defaults (one "setting" role, runs numbered in order, no
    errors). ``max_bytes`` and ``max_rows`` bound what is read (an upload);
    a CSV is parsed in chunks with a cancel checkpoint between them. Raises
    ConfigError (field ``rows`` for the limits) with one sentence.
    """
    name = Path(name or str(getattr(source, "name", source))).name
    kind = table_format(name)
    size = _size(source)
    if max_bytes is not None and size is not None and size > max_bytes:
        raise ConfigError(f"{name} is {size / 1e6:,.1f} MB; this server reads tables of at most "
                          f"{max_bytes / 1e6:,.0f} MB.", "upload")
    try:
        frame = _read_parquet(source, max_rows, name) if kind == "parquet" else _read_csv(source, max_rows, name)
    except (ConfigError, Cancelled):
        raise
    except Exception as err:  # noqa: BLE001 - any unreadable file gets one sentence
        raise ConfigError(f"Could not read {name} as a sweep table ({type(err).__name__}).") from None
    return finish_table(frame, name)


def finish_table(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """A table just read, checked to be a sweep table of at most :data:`MAX_SETTINGS` settings, with defaults."""
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ConfigError(f"{name} is not a sweep table: it has no column {', '.join(missing)}.")
    settings = frame["setting"].nunique(dropna=False)
    if settings > MAX_SETTINGS:
        raise ConfigError(f"{name} has {settings:,} settings; this page compares at most {MAX_SETTINGS:,}.", "rows")
    return with_defaults(frame)


def _size(source) -> int | None:
    if isinstance(source, (str, os.PathLike)):
        return os.path.getsize(source)
    getbuffer = getattr(source, "getbuffer", None)
    return getbuffer().nbytes if getbuffer is not None else None


def _too_many(name: str, max_rows: int) -> ConfigError:
    return ConfigError(f"{name} has more than {max_rows:,} rows, the most this server reads; upload a smaller "
                       "table.", "rows")


def _read_parquet(source, max_rows, name) -> pd.DataFrame:
    import pyarrow.parquet as pq

    rows = pq.ParquetFile(source).metadata.num_rows
    if max_rows is not None and rows > max_rows:
        raise _too_many(name, max_rows)
    if hasattr(source, "seek"):
        source.seek(0)
    return pd.read_parquet(source)


def _read_csv(source, max_rows, name) -> pd.DataFrame:
    chunks, rows = [], 0
    with pd.read_csv(source, chunksize=CSV_CHUNK_ROWS) as reader:
        for chunk in reader:
            checkpoint()
            rows += len(chunk)
            if max_rows is not None and rows > max_rows:
                raise _too_many(name, max_rows)
            chunks.append(chunk)
    return pd.concat(chunks, ignore_index=True) if chunks else pd.DataFrame()


def with_defaults(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every sweep column it lacks: the defaults of a one-role table without errors."""
    frame = frame.copy()
    order = pd.factorize(frame["setting"])[0]
    defaults = {
        "role": lambda: "setting",
        "cell": lambda: order,
        "replicate": lambda: 0,
        "run": lambda: frame.groupby(order).cumcount().to_numpy(),
        "error": lambda: None,
        "metric": lambda: "utility",
    }
    for column, value in defaults.items():
        if column not in frame.columns:
            frame[column] = value()
    return frame


class PartStore:
    """The per-cell part files of one sweep output."""

    def __init__(self, out: str | os.PathLike):
        self.out = Path(out)
        table_format(self.out)
        self.dir = self.out.with_name(self.out.name + ".parts")

    def path(self, key: str) -> Path:
        return self.dir / f"{key}.parquet"

    def keys(self) -> set[str]:
        if not self.dir.is_dir():
            return set()
        return {p.stem for p in self.dir.glob("*.parquet")}

    def load(self, key: str) -> pd.DataFrame | None:
        """The rows of a finished cell, or None when absent or unreadable (then it is run again)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            return pd.read_parquet(path)
        except Exception:  # noqa: BLE001 - a damaged part is treated as missing
            return None

    def write(self, key: str, rows: pd.DataFrame) -> None:
        _atomic_write(self.path(key), lambda handle: rows.to_parquet(handle, index=False))
