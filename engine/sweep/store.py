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


def read_table(source, name: str | None = None) -> pd.DataFrame:
    """Read a sweep table from a path or an uploaded file object (CSV or Parquet by name)."""
    name = name or str(getattr(source, "name", source))
    kind = table_format(name)
    try:
        frame = pd.read_parquet(source) if kind == "parquet" else pd.read_csv(source)
    except Exception as err:  # noqa: BLE001 - any unreadable file gets one sentence
        raise ConfigError(f"Could not read {Path(name).name} as a sweep table ({type(err).__name__}).") from None
    missing = [c for c in ("setting", "utility", "privacy_loss") if c not in frame.columns]
    if missing:
        raise ConfigError(f"{Path(name).name} is not a sweep table: it has no column {', '.join(missing)}.")
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
