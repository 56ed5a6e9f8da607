"""``python -m tests.browser.gated_build run app.py ...``: ``streamlit run`` whose objective table builds store their
first two agents' rows (from the second on, the page can say the time left), then wait before storing the third
until the file named by ``DPBO_TEST_BUILD_GATE`` exists. A test sees a build under way
for as long as it needs (a second visitor joining it, a click while it runs) on any machine, fast or busy, then
opens the gate and watches the build finish and the run start by itself. The wait checks the build's cancel
token, as every engine loop does. Used by tests/browser/test_table_build.py.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import engine.objectives.builds as builds
from engine.cancel import checkpoint

GUARD_SECONDS = 600      # a bound on the wait if the gate never opens (the test then fails on its own wait)
_real = builds.save_row
_stored: dict[str, int] = {}


def _third_row_waits_for_the_gate(path, agent, row):
    key = str(path)
    _stored[key] = _stored.get(key, 0) + 1
    if _stored[key] == 3:
        gate = Path(os.environ["DPBO_TEST_BUILD_GATE"])
        end = time.monotonic() + GUARD_SECONDS
        while not gate.exists() and time.monotonic() < end:
            checkpoint()
            time.sleep(0.05)
    return _real(path, agent, row)


builds.save_row = _third_row_waits_for_the_gate

if __name__ == "__main__":
    from streamlit.web.cli import main

    sys.exit(main(prog_name="streamlit"))
