"""``python -m tests.browser.slow_sweep run app.py ...``: ``streamlit run`` whose sweeps' third cell computes until
the run's own time limit stops it (it checks the run's cancel token, as every engine loop does, and nothing else
ends it), so that a sweep meets the page's real limit at the same point on any machine. The other cells run as
they are. Used by tests/browser/test_sweep_page.py; the AppTest twin is in tests/test_app_sweep.py.
"""

from __future__ import annotations

import sys
import time

import engine.sweep.executors as executors
from engine.cancel import checkpoint

GUARD_SECONDS = 600      # a bound on the wait if no limit came (the test then fails on the sentence)
_real = executors.run_cell
_calls: list[str] = []


def _third_until_the_limit(tool, params, runs):
    _calls.append(tool)
    if len(_calls) == 3:
        end = time.monotonic() + GUARD_SECONDS
        while time.monotonic() < end:       # ended by the token's deadline: Cancelled(TIME_LIMIT)
            checkpoint()
            time.sleep(0.05)
        raise RuntimeError(f"no time limit stopped the cell in {GUARD_SECONDS} s")
    return _real(tool, params, runs)


executors.run_cell = _third_until_the_limit

if __name__ == "__main__":
    from streamlit.web.cli import main

    sys.exit(main(prog_name="streamlit"))
