"""The hosting probe's four requests replayed against hosting mode, heavy work in walled workers.

Each replay ends with one sentence for its visitor (a refusal by price, or the wall's sentence naming the knob
to lower) while a second session's light page answers within 2 s, and this process, which plays the server
(every session's script runs in it), never holds more than its baseline plus the host's memory limit (its
resident size sampled by pid every 20 ms).

The probe's requests have become cheap since (compact sub-region weights, the teaching round in the run pool,
uploads priced before parsing, neighbour-only pairs), so they complete within the probe's 2 GB limit. Where a
test says "the wall under test", it replays the request with a price that says yes to everything (the blind
spot every cost model has somewhere) under a lower memory limit, so the run's worker must hit the wall and the
visitor must get the wall's sentence. The probe's original sizes at the probe's limit run under
``DPBO_REPLAY=1`` (tens of seconds each).
"""

from __future__ import annotations

import functools
import os

import numpy as np
import pandas as pd
import pytest

from tests.server_watch import RssWatch, hosted, light_seconds, page, sentences, wall_under_test, while_heavy

SLOW = pytest.mark.skipif(os.environ.get("DPBO_REPLAY", "") != "1",
                          reason="the probe's sizes at its limit take tens of seconds each: DPBO_REPLAY=1")
PROBE_LIMIT_MB = 2048
LIGHT_SECONDS = 2.0             # a light page beside a heavy run opens within this, or LIGHT_RATIO times its
LIGHT_RATIO = 4.0               # time alone, whichever is larger
WALL = "more memory than this server allows per run"
LIMIT_MB = 64                   # the host's memory limit where the wall is under test (the worker's wall: 128 MB)
UPLOAD_SECONDS = 11             # the upload is priced at about 10 s: accepted; its analysis is stopped at 22 s

FBO_OVER_P = dict(algorithms="dp-fts-de", vary="P", values="50,16000", agents="16000", iterations="3",
                  features="20", runs="1")
FBO_TINY = dict(algorithms="dp-fts-de", agents="4", iterations="2", features="5", runs="1")
SWEEP = dict(base="algorithm=dp-fts-de;agents=12000;P=12000;iterations=2;features=1;n_init=1;own_sampler=shared",
             p1="q", v1="0.5", p2="none", refs="", runs="1")
TEACHING = dict(agents="4000", P="1000", t="40")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))


def replay(request, warm, limit_mb: float, *, tab: int | None = None) -> tuple[list[str], float, RssWatch, bool]:
    """Play ``request`` (a session's whole visit) while another session opens a light page; returns what the
    visitor saw, the light page's seconds, the server's memory watch, and whether the two overlapped.

    ``warm`` (the request's page opened plainly) and the light page run once before: the baseline is a server
    that has served both pages, with their modules imported. ``tab``: the sentences of this tab only, and of
    the page outside its tabs."""
    warm()
    light_seconds()
    alone = light_seconds()         # the light page on this machine as it is now, with no heavy run beside it
    with RssWatch() as watch:
        at, seconds, overlapped = while_heavy(request, light_seconds)
    assert not at.exception, at.exception
    # Compared with the same page alone, measured just before on the same machine (a ratio carries over between
    # machines and loads): a heavy run computing in the server's own process would hold it for tens of seconds.
    assert seconds < max(LIGHT_RATIO * alone, LIGHT_SECONDS), (
        f"the second session's light page took {seconds:.2f} s ({alone:.2f} s alone)")
    assert watch.peak < watch.baseline + limit_mb, (watch.baseline, watch.peak)
    saw = sentences(at)
    if tab is not None:
        others = [text for k, block in enumerate(at.tabs) if k != tab for text in sentences(block)]
        saw = [text for text in saw if text not in others]
    assert overlapped, "the light page did not open while a walled worker computed"
    return saw, seconds, watch, overlapped


def press(name: str, query: dict, button: str):
    def visit():
        at = page(name, query, timeout=180)
        at.run()
        if not at.button(key=button).disabled:
            at.button(key=button).click().run()
        return at
    return visit


def opened(name: str, query: dict):
    def visit():
        at = page(name, query, timeout=180)
        at.run()
        return at
    return visit


def one_wall_sentence(saw: list[str], knob: str, wall: str = WALL) -> None:
    assert len(saw) == 1 and wall in saw[0], saw
    assert f"Lower the {knob}" in saw[0], saw[0]


# ---------------------------------------------------------------- (a) a Federated BO comparison over P
def test_a_comparison_over_P_past_its_wall_ends_alone_with_the_walls_sentence(monkeypatch):
    """The wall under test: two DP-FTS-DE lines over P (16,000 agents: well past the wall whatever the worker has
    imported before) accepted by a blind price at a 64 MB limit
    (the probe's 2 GB comparison took 15.2 GB in the server before the walls)."""
    wall_under_test(monkeypatch, LIMIT_MB)
    saw, seconds, watch, overlapped = replay(press("Federated_BO", FBO_OVER_P, "fbo_run"),
                                             press("Federated_BO", FBO_TINY, "fbo_run"), LIMIT_MB)
    one_wall_sentence(saw, "agents")
    print(f"\nfbo-over-P: server {watch.baseline:.0f} -> {watch.peak:.0f} MB, light page {seconds:.2f} s: {saw}")


# ---------------------------------------------------------------- (b) the probe's sweep link
def test_the_probes_sweep_past_its_wall_ends_in_its_worker(monkeypatch):
    """The wall under test: the probe's sweep link (12,000 agents, P = 12,000) accepted by a blind price at a
    64 MB limit (a 128 MB wall); its one cell ends at the wall and the visitor reads the failed cell's sentence."""
    wall_under_test(monkeypatch, LIMIT_MB)
    saw, seconds, watch, overlapped = replay(press("Tradeoff_explorer", SWEEP, "sw_run"),
                                             opened("Tradeoff_explorer", {}), LIMIT_MB)
    assert len(saw) == 1 and "needed more memory than this server has" in saw[0], saw     # the failed cell's
    assert "lower the number of agents" in saw[0]
    print(f"\nsweep: server {watch.baseline:.0f} -> {watch.peak:.0f} MB, light page {seconds:.2f} s: {saw}")


# ---------------------------------------------------------------- (c) the teaching view's link
def test_the_teaching_views_link_past_its_wall_says_which_knob(monkeypatch):
    """The wall under test: ``Teaching_view?agents=4000&P=1000&t=40`` (7.9 GB in the server before the walls)
    accepted by a blind price at a 64 MB limit (a 128 MB wall): its round computes in the run pool's walled worker."""
    wall_under_test(monkeypatch, LIMIT_MB)
    saw, seconds, watch, overlapped = replay(opened("Teaching_view", TEACHING), opened("Teaching_view", {}),
                                             LIMIT_MB)
    one_wall_sentence(saw, "agents")
    print(f"\nteaching: server {watch.baseline:.0f} -> {watch.peak:.0f} MB, light page {seconds:.2f} s: {saw}")


# ---------------------------------------------------------------- (d) an uploaded table of 2,000 settings
def sweep_table(settings: int, runs: int = 2) -> bytes:
    """A sweep table as the page saves it: ``settings`` private settings of q, ``runs`` runs each."""
    rng = np.random.default_rng(0)
    q = np.repeat(np.arange(1, settings + 1) / (settings + 1), runs)
    frame = pd.DataFrame({"tool": "fbo", "cell": np.repeat(np.arange(settings), runs), "role": "setting",
                          "setting": [f"q={v:.6f}" for v in q], "replicate": 0, "run": np.tile(np.arange(runs),
                                                                                               settings),
                          "q": q, "utility": q + 0.1 * rng.standard_normal(len(q)), "privacy_loss": 1.0 / q,
                          "privacy_delta": 1e-5, "metric": "final metric", "lower_is_better": False, "error": None})
    return frame.to_csv(index=False).encode()


def upload(data: bytes):
    def visit():
        at = page("Tradeoff_explorer", timeout=180)
        at.run()
        at.file_uploader(key="sw_upload").upload("sweep-2000.csv", data, "text/csv").run()
        return at
    return visit


def test_an_uploaded_table_of_2000_settings_analysed_the_old_way_ends_at_its_wall(monkeypatch):
    """The wall under test (time): an uploaded table of 2,000 settings, priced as today (about 10 s), analysed
    the way the probe met it (all 1,999,000 pairs: 3.7 GB and 593 s of CPU in the server before). The analysis
    computes in a walled worker, is stopped at the host's time limit (twice ``DPBO_MAX_SECONDS``) and the visitor
    reads the time wall's sentence naming the file's size."""
    import ui.sweep.analysis as analysis

    hosted(monkeypatch, PROBE_LIMIT_MB, UPLOAD_SECONDS)
    monkeypatch.setattr(analysis, "analyse", functools.partial(analysis.analyse, max_settings=10**6))
    saw, seconds, watch, overlapped = replay(upload(sweep_table(2000)), opened("Tradeoff_explorer", {}),
                                             PROBE_LIMIT_MB, tab=1)
    one_wall_sentence(saw, "size of the file", "more computing time than this server allows per run (22 s)")
    print(f"\nupload: server {watch.baseline:.0f} -> {watch.peak:.0f} MB, light page {seconds:.2f} s: {saw}")


# ---------------------------------------------------------------- the probe's sizes at its limit
@SLOW
@pytest.mark.parametrize("visit", [press("Federated_BO", dict(FBO_OVER_P, agents="12000", values="1000,12000",
                                                               iterations="4"), "fbo_run"),
                                   press("Tradeoff_explorer", SWEEP, "sw_run"),
                                   opened("Teaching_view", TEACHING),
                                   upload(sweep_table(2000))], ids=["fbo-over-P", "sweep", "teaching", "upload"])
def test_the_probes_requests_at_its_limit_complete_or_end_with_one_sentence(monkeypatch, visit):
    hosted(monkeypatch, PROBE_LIMIT_MB)
    saw, seconds, watch, overlapped = replay(visit, lambda: None, PROBE_LIMIT_MB, tab=1)
    assert len(saw) <= 1, saw
    print(f"\nserver {watch.baseline:.0f} -> {watch.peak:.0f} MB, light page {seconds:.2f} s: {saw or 'completed'}")
