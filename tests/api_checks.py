"""What a researcher's session sees of the API, as facts: run from the checkout (tests/test_api_runs.py, in-process)
and where the engine was installed from its wheel (tests/test_install.py, as a script). Uses only ``dpbo`` and
NumPy; :func:`facts` returns plain JSON values, :func:`check` (in tests/test_api_runs.py) holds them to the API's
promises. Run as a script it prints the facts as one JSON line, then makes one bad call uncaught, so that its
stderr is what a user sees of a ConfigError.
"""

from __future__ import annotations

import json
import sys
import time
import traceback

import numpy as np

import dpbo

BOX = [(0.0, 1.0), (-2.0, 0.0)]
SMALL = dict(algorithm="dp-fts-de", agents=6, iterations=6, runs=2, features=20, P=2, n_init=4, seed=1)


def bowl(x):
    """Minimum 0 at (0.3, -1)."""
    return float((x[0] - 0.3) ** 2 + 0.5 * (x[1] + 1.0) ** 2)


def _returns(value):
    return lambda x: value


def _own_error(x):
    return 1 / 0


def _bad_calls() -> dict:
    """label -> a call with one bad input (each should be one ConfigError sentence naming its field)."""
    config = dpbo.FboConfig(**dict(SMALL, iterations=1, runs=1))
    run = dpbo.run_fbo
    return {
        "returns text": lambda: run(config, _returns("abc"), box=BOX),
        "returns a dict": lambda: run(config, _returns({"loss": 0.5}), box=BOX),
        "returns '0.5'": lambda: run(config, _returns("0.5"), box=BOX),
        "returns nan": lambda: run(config, _returns(float("nan")), box=BOX),
        "returns None": lambda: run(config, _returns(None), box=BOX),
        "box reversed": lambda: run(config, bowl, box=[(1, 0), (0, 1)]),
        "box text": lambda: run(config, bowl, box="0 to 1"),
        "no box": lambda: run(config, bowl),
        "optimum 'zero'": lambda: run(config, bowl, box=BOX, optimum="zero"),
        "noise -1": lambda: run(config, bowl, box=BOX, noise=-1),
        "noise nan": lambda: run(config, bowl, box=BOX, noise=float("nan")),
        "agents 1": lambda: run(dpbo.FboConfig(**dict(SMALL, agents=None)), bowl, box=BOX, agents=1),
        "agents mismatch": lambda: run(config, lambda x, a: bowl(x), box=BOX, agents=9, per_agent=True),
        "config q 1.5": lambda: dpbo.FboConfig(q=1.5),
        "config q text": lambda: dpbo.FboConfig(q="0.5"),
        "config delta 0": lambda: dpbo.FboConfig(delta=0.0),
        "default_delta 0": lambda: dpbo.default_delta(0),
        "epsilon steps text": lambda: dpbo.epsilon(q=0.25, z=1.0, steps="40", delta=1e-5),
        "calibrate_z unreachable": lambda: dpbo.calibrate_z(1e-9, q=0.25, steps=40, delta=1e-5),
        "limits text": lambda: run(config, bowl, box=BOX, limits="none"),
        "audit config text": lambda: dpbo.run_audit("fbo-server"),
    }


def _refusal(call) -> dict:
    started = time.perf_counter()
    try:
        call()
    except dpbo.ConfigError as refused:
        return {"field": refused.field, "sentence": str(refused), "seconds": time.perf_counter() - started}
    return {"field": None, "sentence": "", "seconds": time.perf_counter() - started}


def facts() -> dict:
    out: dict = {}
    config = dpbo.FboConfig(**SMALL)
    result = dpbo.run_fbo(config, bowl, box=BOX, minimise=True, optimum=0.0, progress=False)
    best = result.best()
    out["run"] = {
        "X": list(result.X.shape), "y": list(result.y.shape), "best_x": list(result.best_x.shape),
        "best_value": list(result.best_value.shape), "epsilon": list(result.epsilon.shape),
        "epsilon_type": type(result.epsilon).__name__, "frame": list(result.to_frame().shape),
        "frame_columns": list(result.to_frame().columns), "stopped": result.stopped, "complete": result.complete,
        "best_is_a_query": bool(np.any(np.all(result.X[best.run, best.agent] == best.x, axis=1))),
        "best_value_is_min": bool(best.value == result.values.min()),
        "best_x_in_box": bool(np.all((result.best_x[..., 0] >= 0) & (result.best_x[..., 1] <= 0))),
        "y_is_bowl_of_X": bool(np.allclose(result.y, np.apply_along_axis(bowl, 3, result.X))),
        "json_best": result.to_json()["best"]["value"] == best.value,
    }
    full_X = result.X

    stopped = dpbo.run_fbo(config, bowl, box=BOX, minimise=True, callback=lambda step: step.iteration == 3)
    out["callback"] = {"stopped": stopped.stopped, "curve": len(stopped.curve), "queries": stopped.X.shape[2],
                       "same_queries": bool(np.array_equal(stopped.X, full_X[:, :, :stopped.X.shape[2]]))}

    calls = [0]
    per_iteration = SMALL["runs"] * SMALL["agents"]
    interrupt_at = per_iteration * (SMALL["n_init"] + 3) + 5      # in the middle of iteration 4

    def interrupted(x):
        calls[0] += 1
        if calls[0] == interrupt_at:
            raise KeyboardInterrupt
        return bowl(x)

    kept = dpbo.run_fbo(config, interrupted, box=BOX, minimise=True, optimum=0.0)
    out["interrupt"] = {"stopped": kept.stopped, "curve": len(kept.curve), "queries": kept.X.shape[2],
                        "same_curve": bool(np.array_equal(kept.curve, result.curve[:len(kept.curve)])),
                        "same_queries": bool(np.array_equal(kept.X, full_X[:, :, :kept.X.shape[2]]))}

    steps = []
    run = dpbo.iterate_fbo(config, bowl, box=BOX, minimise=True)
    for step in run:
        steps.append([step.iteration, step.best_value.shape[0], step.epsilon is not None])
        if step.iteration == 2:
            break
    out["iterate"] = {"steps": steps, "curve": len(run.result().curve)}

    out["refused_run"] = _refusal(lambda: dpbo.run_fbo(dpbo.FboConfig(runs=10**6)))
    out["refused_accounting"] = _refusal(lambda: dpbo.epsilon(q=0.25, z=1.0, steps=10**9, delta=1e-5,
                                                              accountant="pld"))
    out["refused_time"] = _refusal(lambda: dpbo.run_fbo(dpbo.FboConfig(agents=2000, iterations=200),
                                                        limits=dpbo.Limits(seconds=1)))
    out["price"] = {"memory_mb": dpbo.price(dpbo.FboConfig(runs=10**6)).memory_mb}

    bad = {}
    for label, call in _bad_calls().items():
        try:
            call()
            bad[label] = {"raised": None}
        except dpbo.ConfigError as error:
            frames = traceback.extract_tb(error.__traceback__)
            bad[label] = {"raised": type(error).__name__, "field": error.field, "sentence": str(error),
                          "frames": [[frame.filename, frame.name] for frame in frames]}
    out["bad"] = bad
    try:
        dpbo.run_fbo(dpbo.FboConfig(**dict(SMALL, iterations=1, runs=1)), _own_error, box=BOX)
        out["own_error"] = None
    except ZeroDivisionError:
        out["own_error"] = "ZeroDivisionError"
    functions = [name for name in dpbo.__all__ if not isinstance(getattr(dpbo, name), type)]
    out["typed"] = {name: str(getattr(dpbo, name).__annotations__.get("return")) for name in functions}
    return out


if __name__ == "__main__":
    print(json.dumps(facts()))
    sys.stdout.flush()
    dpbo.run_fbo(dpbo.FboConfig(**dict(SMALL, iterations=1, runs=1)), bowl, box=BOX, noise=-1)   # uncaught
