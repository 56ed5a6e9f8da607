"""Walled work returns bounded answers, and every walled job waits for its place: the pieces, without a server.

Text a worker sends back for a page is at most ``TEXT_CHARS`` characters (distinct texts stay distinct); an
upload's facts and analysis of 300 settings labelled with unique 60 kB strings fit in well under a megabyte; the
upload's price counts its answer; a worker's answer over ``ANSWER_MB`` ends in the visitor's sentence (checked in
the worker, and by the server before it unpickles); kept analyses stay within ``KEPT_MB``; a page's table build
waits for a place in the run pool and says so; the served app closes the metrics endpoint in hosting mode and turns
an uncaught error into one sentence; 5,000 typed digits are a sentence. About 10 s (one walled worker, one upload of
300 settings analysed in this process).
"""

from __future__ import annotations

import asyncio
import pickle
import threading

import pandas as pd
import pytest

from benchmarks.bench_visitors import long_labels
from engine.limits import TEXT_CHARS, answer_mb, short_text, upload_cost
from engine.validation import ConfigError


def test_long_texts_are_shortened_and_stay_distinct():
    a, b = "x" * 5000 + "a", "x" * 5000 + "b"
    assert len(short_text(a)) == TEXT_CHARS and short_text(a) != short_text(b)
    assert short_text("q=0.25") == "q=0.25" and short_text(3) == 3


def test_every_text_cell_and_column_name_of_an_upload_is_bounded():
    from engine.sweep.upload import short_cells

    long = "y" * 1000
    frame = pd.DataFrame({"setting": pd.Categorical([long + "1", long + "2"]), "utility": [0.1, 0.2],
                          "error": pd.array([long, None], dtype="string"), long: [1, 2]})
    out, shortened = short_cells(frame)
    assert shortened == 4                       # two labels, one error, one column name
    assert out["setting"].nunique() == 2 and all(len(c) <= TEXT_CHARS for c in out.columns)
    assert all(len(v) <= TEXT_CHARS for v in out["setting"]) and len(out.loc[0, "error"]) <= TEXT_CHARS
    assert out["utility"].tolist() == [0.1, 0.2]


def test_an_uploads_answer_is_bounded_whatever_its_labels_and_its_price_counts_it():
    from engine.sweep.upload import upload_price
    from ui.sweep.analysis import analyse, read_and_analyse

    facts, analysis = read_and_analyse(long_labels(300), "long.parquet", 20 * 2**20, "utility", analyse)
    answer = len(pickle.dumps((facts, analysis)))
    assert answer < 1e6, answer                 # 300 labels of 60 kB: 18 MB of text in the file's table
    assert facts.shortened == 300 and all(len(setting) <= TEXT_CHARS for _, setting in facts.settings)
    assert answer / 1e6 <= answer_mb(300, 3, 300)      # what the price counts covers what is sent back
    price = upload_price(10**6, 300, cells=900, frame_bytes=10**5)
    assert price.memory_mb == pytest.approx(upload_cost(10**6, 300, cells=900, frame_bytes=10**5,
                                                        settings=300).memory_mb + answer_mb(300, 3, 300))


def _big(size: int) -> bytes:
    return b"x" * size


def test_a_workers_answer_over_the_budget_is_the_visitors_sentence(monkeypatch):
    import engine.limits.answer
    from engine.cancel import CancelToken
    from ui.kit.run_worker import call_walled, unpacked

    monkeypatch.setattr(engine.limits.answer, "ANSWER_MB", 0.01)         # 10 kB
    assert call_walled(_big, (1000,), {}, CancelToken(30), field="upload") == b"x" * 1000
    with pytest.raises(ConfigError) as refused:
        call_walled(_big, (100_000,), {}, CancelToken(30), field="upload")
    assert refused.value.field == "upload" and "more than the 0.01 MB this server sends back" in str(refused.value)
    assert str(refused.value).endswith("Lower the size of the file and run again.")
    with pytest.raises(ConfigError):            # the server checks the size too, before it unpickles anything
        unpacked(("packed", pickle.dumps(b"x" * 20_000)), 10_000, "upload")


def test_kept_analyses_stay_within_their_budget(monkeypatch):
    import ui.sweep.analysis as analysis

    monkeypatch.setattr(analysis, "_KEPT", type(analysis._KEPT)())  # noqa: SLF001
    small = analysis.TableAnalysis(pd.DataFrame({"setting": ["a" * 100] * 1000}), [], False, {})
    size = analysis.analysis_mb(small)
    monkeypatch.setattr(analysis, "KEPT_MB", 2.5 * size)
    for key in "abc":
        analysis._keep(key, small)  # noqa: SLF001
    assert list(analysis._KEPT) == ["b", "c"]  # noqa: SLF001
    monkeypatch.setattr(analysis, "KEPT_MB", 0.5 * size)
    analysis._keep("d", small)  # noqa: SLF001
    assert "d" not in analysis._KEPT  # noqa: SLF001


def test_a_pages_table_build_waits_for_a_place_in_the_pool_and_says_so(monkeypatch):
    import ui.kit.run_pool as run_pool
    from engine.objectives.builds import BuildRegistry
    from ui.kit.table_build import pooled_build

    pool = run_pool.RunPool(1)
    monkeypatch.setattr(run_pool, "POOL", pool)
    holder = pool.join(1)
    assert pool.try_start(holder)                            # another visitor's run holds the only place
    computing = threading.Event()

    def build(report):
        computing.set()
        report(1, 1)
        return "table"

    registry = BuildRegistry()
    running = registry.start("key", build, runner=pooled_build(run_pool.Visitor("tab"), walled=False))
    deadline = threading.Event()
    while not running.snapshot().waiting and not deadline.wait(0.01):
        pass
    assert running.snapshot().waiting and not computing.is_set()
    pool.leave(holder)
    assert running.wait(30) == "table" and not running.snapshot().waiting
    assert pool.running == 0 and pool.waiting == 0


def test_the_served_app_closes_the_metrics_in_hosting_mode_only(monkeypatch):
    from ui.kit.serving import ClosedPaths

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})

    def status(path: str) -> int:
        sent = []

        async def send(message):
            sent.append(message)
        # In a thread of its own: a test worker that drove a browser before may have an event loop running here.
        worker = threading.Thread(target=lambda: asyncio.run(ClosedPaths(app)({"type": "http", "path": path}, None,
                                                                              send)))
        worker.start()
        worker.join(30)
        return sent[0]["status"]

    monkeypatch.setenv("DPBO_HOSTED", "1")
    assert status("/_stcore/metrics") == 404 and status("/base/_stcore/metrics/") == 404
    assert status("/_stcore/health") == 200
    monkeypatch.setenv("DPBO_HOSTED", "0")
    assert status("/_stcore/metrics") == 200


def test_an_uncaught_error_is_one_sentence_when_hosted(monkeypatch):
    from ui.kit.serving import on_script_error

    monkeypatch.setenv("DPBO_HOSTED", "0")
    assert on_script_error(ValueError("cannot convert float NaN to integer")) is None    # Streamlit's own box
    monkeypatch.setenv("DPBO_HOSTED", "1")
    assert on_script_error(ValueError("cannot convert float NaN to integer")) is True    # ours instead


def test_five_thousand_typed_digits_are_a_sentence():
    from engine.sweep.values import parse_lines, parse_value

    with pytest.raises(ConfigError, match="a number of 5,000 characters"):
        parse_value("5" * 5000)
    with pytest.raises(ConfigError):
        parse_lines("agents = " + "9" * 5000)


def test_the_served_app_freezes_its_modules_out_of_the_collectors_walks():
    """serve.py imports what the pages import and freezes it (ui.kit.serving.settle_heap): afterwards a full
    collection walks what sessions make, not the modules (most of the heap). In a process of its own."""
    import subprocess
    import sys

    from ui.kit.serving import drawn_kinds, page_imports

    kinds = drawn_kinds()         # the trace types ui/ makes, not Figure or layout objects
    assert {"Scatter", "Bar", "Heatmap"} <= set(kinds) and not {"Figure", "Layout"} & set(kinds), kinds
    names = page_imports()
    assert {"streamlit", "ui.kit.routes", "engine.fbo.presets"} <= set(names), names
    assert not any(name.startswith(".") for name in names)
    code = ("import gc, sys; from ui.kit.serving import settle_heap; frozen = settle_heap(); "
            "print(frozen, len(gc.get_objects()), 'engine.fbo.presets' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    frozen, walked, imported = out.stdout.split()
    assert imported == "True"
    # Before the freeze the collector walked every one of them (about 170,000); after it, a few per cent at most.
    assert int(frozen) > 100_000 and int(walked) < int(frozen) // 20, (frozen, walked)
