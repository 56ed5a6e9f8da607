"""A federation's round time with the exported README as written: its start, run and stop blocks, each in a shell
of its own, on 127.0.0.1 (TLS, SuperNode authentication, the gateway; OS entropy: no test secret).

    python benchmarks/flower_readme_rounds.py --agents 5 --iterations 10 --q 0.5 --z 1 --P 2

Prints one JSON line: the start block's seconds, the run block's, the ServerApp's round times, the releases and
epsilon, and the load average (1 minute) before and after: the machine is shared, so the figures mean little
without it. The README's ports are given through its own variables (free ports), its FLWR_HOME default lives under
a temporary HOME.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.fbo.config import FboConfig  # noqa: E402
from engine.flower.export import export_app  # noqa: E402
from tests.flower_loopback import readme_blocks, readme_federation  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--q", type=float, default=0.5)
    parser.add_argument("--z", type=float, default=1.0)
    parser.add_argument("--P", type=int, default=2)
    args = parser.parse_args(argv)
    config = FboConfig(agents=args.agents, iterations=args.iterations, q=args.q, z=args.z, P=args.P)
    with tempfile.TemporaryDirectory() as folder:
        app = Path(folder) / "app"
        export_app("fbo", config, app)
        load_before = os.getloadavg()
        started = time.perf_counter()
        with readme_federation(app, args.agents) as federation:
            start_seconds = time.perf_counter() - started
            summary, run_seconds = federation.run(app, 1800)
            _, _, stop = readme_blocks(app)
            subprocess.run(["bash", "-c", stop], cwd=app, env=federation.env, timeout=120)
        load_after = os.getloadavg()
    rounds = summary["round_seconds"]
    print(json.dumps({"agents": args.agents, "iterations": args.iterations, "status": summary["status"],
                      "randomness": summary["randomness"], "releases": summary["releases"],
                      "epsilon": summary["epsilon"], "delta": summary["delta"],
                      "start_block_seconds": round(start_seconds, 1), "run_block_seconds": round(run_seconds, 1),
                      "server_app_seconds": round(summary["seconds"], 1),
                      "round_seconds": [round(r, 1) for r in rounds],
                      "round_seconds_median": round(sorted(rounds)[len(rounds) // 2], 1),
                      "load_average_before": [round(x, 2) for x in load_before],
                      "load_average_after": [round(x, 2) for x in load_after]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
