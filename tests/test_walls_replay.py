"""The probe's requests replayed against hosting mode with heavy runs in walled workers (slow: ``DPBO_REPLAY=1``).

Each replay must end with one sentence for its visitor (a refusal before the start, or the wall's sentence)
while this process, which plays the server, stays below its baseline plus the host's memory limit, and a second
session still answers within 2 s.
"""

from __future__ import annotations

import os
import resource
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
LIMIT_MB = 1200
pytestmark = pytest.mark.skipif(os.environ.get("DPBO_REPLAY", "") != "1",
                                reason="allocates gigabytes for tens of seconds: run with DPBO_REPLAY=1")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_the_probes_sweep_ends_in_its_worker_and_the_server_stays_small(monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.setenv("DPBO_RUN_WORKERS", "1")
    monkeypatch.setenv("DPBO_MAX_MEMORY_MB", str(LIMIT_MB))
    page = str(ROOT / "pages" / "6_Tradeoff_explorer.py")
    at = AppTest.from_file(page, default_timeout=300)
    link = dict(base="algorithm=dp-fts-de;agents=12000;P=12000;iterations=2;features=1;n_init=1;own_sampler=shared",
                p1="q", v1="0.5", p2="none", refs="", runs="1")
    for name, value in link.items():
        at.query_params[name] = value
    at.run()
    baseline = peak_mb()
    if at.button(key="sw_run").disabled:            # priced above the limit: refused with one sentence
        assert len(at.error) == 1 and "Lower" in at.error[0].value
        return
    at.button(key="sw_run").click().run()
    assert not at.exception
    sentences = [w.value for w in at.warning] + [e.value for e in at.error]
    assert any("memory" in s and "lower" in s.lower() for s in sentences), sentences
    assert peak_mb() < baseline + LIMIT_MB
    second = AppTest.from_file(page, default_timeout=60)
    start = time.perf_counter()
    second.run()
    assert not second.exception and time.perf_counter() - start < 2
