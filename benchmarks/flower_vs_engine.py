"""Seeded DP-FTS-DE federations on 127.0.0.1, run by the exported README as written, against the engine.

Exports one app per seed (the settings of ``CONFIG``), starts one federation with the README's start block (TLS,
SuperNode authentication, the gateway, three SuperNodes, the test-only secrets in its environment), runs every
app's README run block against it in turn, and writes
the ServerApps' summaries and their comparison with the engine's runs (``engine.flower.compare``) to ``--out``
(default ``data/flower/loopback-runs.json``, which ``tests/test_flower_compare.py`` reads).

    python benchmarks/flower_vs_engine.py --runs 20
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.fbo.config import FboConfig  # noqa: E402
from engine.flower.compare import compare_federation  # noqa: E402
from engine.flower.export import export_app  # noqa: E402
from tests.flower_loopback import TEST_SECRETS, readme_federation  # noqa: E402

NODES = 3
CONFIG = FboConfig(agents=NODES, iterations=3, P=1, features=8, n_init=3, q=0.5, z=1.0)
FIRST_SEED = 1000
OUT = ROOT / "data" / "flower" / "loopback-runs.json"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=FIRST_SEED)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--add", action="store_true",
                        help="run the given seeds and add them to the runs already in --out")
    args = parser.parse_args(argv)
    # Stopped with SIGTERM (e.g. by `timeout`): leave through the federation's clean-up, which stops its processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    seeds = list(range(args.first_seed, args.first_seed + args.runs))
    started, load = time.time(), os.getloadavg()[0]
    summaries = []
    with tempfile.TemporaryDirectory() as folder:
        apps = []
        for seed in seeds:
            app = Path(folder) / f"seed-{seed}"
            export_app("fbo", CONFIG.replace(seed=seed), app)
            apps.append(app)
        # The test-only secrets (engine.flower.randomness) make each seed's run reproducible offline
        # (engine.flower.offline.run_offline with the same secrets). The stored file's runs of 2026-11-27 ran
        # before the secrets existed: their server and agents drew from the public seed.
        with readme_federation(apps[0], NODES, secrets=TEST_SECRETS) as (run, _):
            for seed, app in zip(seeds, apps):
                summary, seconds = run(app, 600)
                summary.update(seed=seed, wall_seconds=seconds)
                summaries.append(summary)
                print(f"seed {seed}: {seconds:.1f} s, regret {summary['regret_mean']}", flush=True)
    provenance = []
    if args.add:
        before = json.loads(args.out.read_text())
        summaries, seeds = before["summaries"] + summaries, before["seeds"] + seeds
        provenance = before["provenance"] if isinstance(before["provenance"], list) else [before["provenance"]]
    comparison = compare_federation(summaries, CONFIG)
    record = {"config": {k: v for k, v in CONFIG.to_dict().items() if k != "seed"}, "seeds": seeds,
              "summaries": summaries, "comparison": comparison,
              "provenance": provenance + [{
                             "command": "python benchmarks/flower_vs_engine.py " + " ".join(argv or sys.argv[1:]),
                             "date": datetime.date.today().isoformat(),
                             "wall_seconds": round(time.time() - started, 1),
                             "load_average_at_start": round(load, 2), "machine": platform.machine(),
                             "seeds": seeds[-args.runs:],
                             "federation": f"{NODES} SuperNodes, TLS and SuperNode authentication, 127.0.0.1"}]}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1, default=float) + "\n")
    print(json.dumps({"same": comparison["same"], "out": str(args.out)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
