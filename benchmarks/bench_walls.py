"""Per-run overhead of the walled worker path (engine.walls) against the in-process path.

Presses Run on the Federated BO page with its default settings under Streamlit's AppTest, once per mode after a
warm-up run, and reports the page's own figures: seconds to the first chart and to the end of the run, and the
peak memory (RSS) of this process, which plays the server. ``--repeat`` runs per mode (default 3).

    python -m benchmarks.bench_walls [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FBO = str(ROOT / "pages" / "1_Federated_BO.py")


def press_run(workers: bool) -> tuple[float, float]:
    from streamlit.testing.v1 import AppTest

    os.environ["DPBO_RUN_WORKERS"] = "1" if workers else "0"
    at = AppTest.from_file(FBO, default_timeout=600)
    at.run()
    at.button(key="fbo_run").click().run()
    if at.exception:
        raise SystemExit(f"the run failed: {at.exception}")
    from ui.fbo.controls import RUN_KEY

    run = at.session_state[RUN_KEY]
    return run.first_chart, run.seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DPBO_DATA_DIR", str(ROOT / "data"))
    start = time.perf_counter()
    from engine.walls import warm_up
    warm_up(("ui.kit.cached",))     # as the server does when its heavy runs use workers
    press_run(True)                      # the forkserver's start and the caches are not part of a run's cost
    press_run(False)
    print(f"warm-up (forkserver start, caches): {time.perf_counter() - start:.1f} s")
    for workers in (False, True):
        figures = [press_run(workers) for _ in range(args.repeat)]
        first = statistics.median(f for f, _ in figures)
        total = statistics.median(t for _, t in figures)
        print(f"{'walled worker' if workers else 'in-process':>14}: first chart {first:.2f} s, total {total:.2f} s "
              f"(median of {args.repeat})")
    print(f"peak RSS of this process (the server): {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
