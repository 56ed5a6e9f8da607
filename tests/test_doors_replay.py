"""The second hosting probe's doors replayed at its sizes under its limits (``DPBO_MAX_SECONDS=30``,
``DPBO_MAX_MEMORY_MB=2048``), hosting mode with heavy work in walled workers: each ends in one sentence (or its
answer) within the request's one deadline, and this process, which plays the server (every session's script runs
in it), never holds more than its baseline plus the host's memory limit.

The command-line rows (the export of a million agents, ``--config`` files, ``/dev/zero``) are replayed in
``tests/test_cli_doors.py`` and ``tests/test_typed_settings.py``; the links' digits in the latter. The page's
export after the probe's run of 50,000 agents runs under ``DPBO_REPLAY=1`` (about 30 s); the export's gate is
also held by ``tests/test_page_gate.py``.
"""

from __future__ import annotations

import io
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.server_watch import RssWatch, hosted, page, sentences

SLOW = pytest.mark.skipif(os.environ.get("DPBO_REPLAY", "") != "1",
                          reason="a run of 50,000 agents in its walled worker takes about 30 s: DPBO_REPLAY=1")
PROBE_SECONDS = 30
PROBE_LIMIT_MB = 2048
SERVER_GROWTH_MB = 200               # the export of 50,000 agents' objective in the server grew it by ~800 MB
DEADLINE = 2 * PROBE_SECONDS           # one request's wall-clock deadline (RUN_TIME_FACTOR x DPBO_MAX_SECONDS)


@pytest.fixture(autouse=True)
def probe(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    hosted(monkeypatch, PROBE_LIMIT_MB, PROBE_SECONDS)


def _parquet(rows: int, columns: dict) -> bytes:
    base = {"setting": pa.array([f"q={i % 50}" for i in range(rows)]), "utility": pa.array(np.linspace(0, 1, rows)),
            "privacy_loss": pa.array(np.ones(rows))}
    buffer = io.BytesIO()
    pq.write_table(pa.table({**base, **columns}), buffer)
    return buffer.getvalue()


def _upload(name: str, data: bytes):
    at = page("Tradeoff_explorer", timeout=DEADLINE + 30)
    at.run()
    with RssWatch() as watch:
        at.file_uploader(key="sw_upload").upload(name, data, "application/octet-stream").run()
    assert not at.exception, at.exception
    assert watch.peak < watch.baseline + PROBE_LIMIT_MB, (watch.baseline, watch.peak)
    return [text for text in sentences(at.tabs[1])], watch


@pytest.mark.parametrize("name, columns, says", [
    ("nulls.parquet", lambda rows: {f"empty{i}": pa.nulls(rows) for i in range(253)},
     "nulls.parquet would take about "),
    ("lists.parquet", lambda rows: {f"list{i}": pa.array([[]] * rows, type=pa.list_(pa.int64()))
                                    for i in range(253)},
     "lists.parquet has a column of lists (list0); a sweep table holds one number or text per cell."),
], ids=["253-all-null-columns", "253-empty-list-columns"])
def test_the_probes_uploads_end_in_one_sentence_at_once(name, columns, says):
    """200,000 rows x 256 columns, 253 all-null (3.9 MB): +1,537 MB in the server against about 100 MB priced,
    and the sentence 97 s after the upload; 30,000 rows with 253 empty-list columns (0.7 MB): +1,379 MB against
    309 MB priced. Now priced from the schema before parsing, in the one walled call of the request."""
    rows = 200_000 if name == "nulls.parquet" else 30_000
    saw, watch = _upload(name, _parquet(rows, columns(rows)))
    assert len(saw) == 1 and saw[0].startswith(says), saw
    if name == "nulls.parquet":     # refused by its price (its minutes are the price model's), before it is read
        assert saw[0].endswith("of computing to open, more than the 30 s this server allows; upload a smaller "
                               "table."), saw
    print(f"\n{name}: server {watch.baseline:.0f} -> {watch.peak:.0f} MB: {saw}")


def test_an_uploaded_table_never_reaches_the_server(monkeypatch):
    """The probe's upload spent 13 s unpickling a 410 MB table in the server between its walled read and its walled
    analysis. Now the worker that reads the file sends back what the page shows (counts, each setting's
    parameters, a preview of at most PREVIEW_ROWS rows) and the analysis: no frame of the
    table's length is ever unpickled in the server, and the page still shows the whole table's facts."""
    import pandas as pd

    from ui.sweep.analysis import PREVIEW_ROWS

    rows = 5 * PREVIEW_ROWS
    unpickled: list[int] = []
    setstate = pd.DataFrame.__setstate__

    def recorded(frame, state):
        setstate(frame, state)
        unpickled.append(len(frame))

    monkeypatch.setattr(pd.DataFrame, "__setstate__", recorded)
    frame = pd.DataFrame({"setting": [f"q={i % 40}" for i in range(rows)], "utility": np.linspace(0, 1, rows),
                          "privacy_loss": 1.0 + np.arange(rows) % 40, "run": np.arange(rows) // 40})
    at = page("Tradeoff_explorer", timeout=DEADLINE + 30)
    at.run()
    at.file_uploader(key="sw_upload").upload("t.csv", frame.to_csv(index=False).encode(), "text/csv").run()
    assert not at.exception and not sentences(at.tabs[1]), sentences(at.tabs[1])
    assert unpickled and max(unpickled) <= PREVIEW_ROWS, unpickled      # the summary and the preview only
    assert {metric.label: metric.value for metric in at.metric}["rows (cell x run)"] == f"{rows:,}".replace(",", "")
    assert at.session_state["sw_result"]["table"] is None
    assert any(f"Showing the first {PREVIEW_ROWS:,} of the {rows:,} rows" in str(c.value) for c in at.caption)


@SLOW
def test_the_flower_export_after_the_probes_run_is_built_behind_the_wall():
    """The probe's run (``agents=50000&features=1&n_init=1&P=1&iterations=1&runs=1&algorithms=dp-fts-de``) and
    its "Export as a Flower app": 13.5 s and about 800 MB of the server's own memory after the walled run ended.
    Now the run config describes the objective (nothing built) and the zip is built through the gate."""
    at = page("Federated_BO", dict(agents="50000", features="1", n_init="1", P="1", iterations="1", runs="1",
                                   algorithms="dp-fts-de"), timeout=DEADLINE + 60)
    at.run()
    with RssWatch() as watch:
        at.button(key="fbo_run").click().run()
    assert not at.exception, at.exception
    assert watch.peak < watch.baseline + PROBE_LIMIT_MB, (watch.baseline, watch.peak)
    # The server holds the run's records and a zip of a few kB, never the run's objective (400 MB of values).
    assert watch.peak - watch.baseline < SERVER_GROWTH_MB, (watch.baseline, watch.peak)
    assert not [e.value for e in at.error], [e.value for e in at.error]
    run = at.session_state["fbo_run_state"]
    zips = [value for key, value in run.cache.items() if isinstance(key, tuple) and key[0] == "flower"]
    assert len(zips) == 1 and zips[0][:2] == b"PK"
    assert not [c.value for c in at.caption if str(c.value).startswith("Flower export:")]
    print(f"\nexport: server {watch.baseline:.0f} -> {watch.peak:.0f} MB")
