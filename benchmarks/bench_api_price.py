"""What the API's price check costs: the time ``dpbo`` spends pricing a call before it starts, against the call.

Every run function of ``dpbo`` prices its work (``dpbo.price``: the command line's price) and checks it against
``dpbo.Limits`` (reading this machine's free memory) before anything heavy starts. This script times that check
alone (``engine.api.common.priced(price)``, the median of many repeats) and the whole call, for a spread of calls:
a researcher's own function (small and default-sized), the default synthetic task, a DP-HYPE run, and an epsilon;
and the CPU time a default-sized run of a researcher's own function spends with and without each agent's
standardisation of its observations.
Run it against a checkout from before the check too (``PYTHONPATH=<that checkout> python benchmarks/bench_api_price.py
--no-save``): there it times the calls only (the "call" column is the before figure; no check, no overhead).

Usage::

    python -m benchmarks.bench_api_price [--repeats 200]

Prints a table and writes ``benchmarks/results/bench_api_price.json``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import dpbo
from benchmarks import save_results


def bowl(x):
    return float(np.sum((x - 0.3) ** 2))


def batch(X):
    return np.sum((X - 0.3) ** 2, axis=1)


BOX = [(0.0, 1.0), (0.0, 1.0)]
CASES = [
    ("own function, 10 agents x 20 iterations x 5 runs",
     dpbo.FboConfig(agents=10, iterations=20, runs=5), dict(objective=bowl, box=BOX, minimise=True)),
    ("own vectorised function, the default 200 agents x 40 iterations x 5 runs",
     dpbo.FboConfig(), dict(objective=batch, box=BOX, minimise=True, vectorised=True)),
    ("synthetic task, 50 agents x 20 iterations x 3 runs", dpbo.FboConfig(agents=50, iterations=20, runs=3), {}),
    ("DP-HYPE, 250 clients x 500 repetitions", dpbo.HypeConfig(repetitions=500), None),
    ("epsilon, RDP, 40 releases", None, None),
]


def _call(config, own):
    if isinstance(config, dpbo.HypeConfig):
        return lambda: dpbo.run_hype(config)
    if config is None:
        return lambda: dpbo.epsilon(q=0.25, z=1.0, steps=40, delta=1e-5)
    return lambda: dpbo.run_fbo(config, **own)


def _check(config, own):
    """The check the call makes before it starts (None where this checkout has none)."""
    try:
        from engine.api.common import priced
        from engine.limits import accountant_cost
    except ImportError:
        return None
    if config is None:
        return lambda: priced(accountant_cost(40, ("rdp",), curve=False, points=1, z=1.0), dpbo.Limits())
    if isinstance(config, dpbo.HypeConfig):
        return lambda: priced(dpbo.price(config), dpbo.Limits())
    keep = {k: own[k] for k in ("objective", "box") if k in own}
    return lambda: priced(dpbo.price(config, **keep), dpbo.Limits())


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def standardisation_seconds(repeats: int = 2) -> dict | None:
    """CPU seconds of the default-sized run of a vectorised own function with and without each agent's
    standardisation of its observations (engine.fbo.agents), interleaved; None where this checkout has none."""
    from engine.fbo import run_fbo
    from engine.objectives.own import own_objective

    on = own_objective(batch, BOX, agents=200, vectorised=True)
    if not hasattr(on, "standardise"):
        return None
    off = type(on)(**{**{name: getattr(on, name) for name in on.__dataclass_fields__}, "standardise": False})
    seconds = {"standardised": [], "not standardised": []}
    for _ in range(repeats):
        for label, objective in (("standardised", on), ("not standardised", off)):
            start = time.process_time()
            run_fbo(dpbo.FboConfig(), objective)
            seconds[label].append(time.process_time() - start)
    return {label: min(values) for label, values in seconds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=200, help="repeats of the check (the call: 3)")
    parser.add_argument("--no-save", action="store_true", help="print only (e.g. run in another checkout)")
    args = parser.parse_args()
    rows = []
    for label, config, own in CASES:
        check = _check(config, own)
        check_s = _median_seconds(check, args.repeats) if check else None
        call_s = _median_seconds(_call(config, own), 3)
        rows.append({"case": label, "check_ms": None if check_s is None else 1e3 * check_s, "call_s": call_s,
                     "share": None if check_s is None else check_s / call_s})
        shown = "none" if check_s is None else f"{1e3 * check_s:8.3f} ms ({check_s / call_s:.2%})"
        print(f"{label:<75} check {shown:>22}   call {call_s:8.3f} s")
    standardisation = standardisation_seconds()
    if standardisation:
        print("default-sized own function, CPU seconds: " + ", ".join(f"{k} {v:.2f}" for k, v in
                                                                       standardisation.items()))
    if not args.no_save:
        save_results("bench_api_price.json", {"calls": rows, "standardisation_cpu_seconds": standardisation})


if __name__ == "__main__":
    main()
