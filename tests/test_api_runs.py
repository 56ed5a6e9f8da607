"""A researcher's run from Python (``dpbo``): best points and the query history, a callback and an iterator that stop
early, Ctrl-C and the time limit keeping the finished iterations, prices equal to the command line's and refusals
before any work, one ConfigError sentence from the call made for every bad input, any function's scale and box,
the configurations' generated docs and the progress line. The same facts from the installed wheel:
tests/test_install.py. About 15 s in all (the subprocess with a real Ctrl-C: 3 s)."""

from __future__ import annotations

import inspect
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dpbo
from engine import api
from engine.cli import build_parser
from engine.cli import fbo as fbo_command
from engine.cli import hype as hype_command
from engine.cli import pogpucb as pogpucb_command
from engine.progress import Progress
from engine.settings import specs
from tests import api_checks

ROOT = Path(__file__).resolve().parents[1]


def one_sentence(text: str) -> bool:
    return "\n" not in text and text.endswith(".") and len(re.findall(r"[.!?](?:\s|$)", text)) == 1


BAD_FIELDS = {
    "returns text": "objective", "returns a dict": "objective", "returns '0.5'": "objective",
    "returns nan": "objective", "returns None": "objective", "box reversed": "box", "box text": "box",
    "no box": "box", "optimum 'zero'": "optimum", "noise -1": "noise", "noise nan": "noise", "agents 1": "agents",
    "agents mismatch": "agents", "config q 1.5": "q", "config q text": "q", "config delta 0": "delta",
    "default_delta 0": "agents", "epsilon steps text": "steps", "calibrate_z unreachable": "target_epsilon",
    "limits text": "limits", "audit config text": "config",
}


def engine_frames(frames: list, checkout: bool) -> list:
    """The frames of the engine's own files among a traceback's (filename, function) pairs."""
    return [f for f in frames if "/engine/" in f[0].replace(os.sep, "/") and "api_checks" not in f[0]]


def check(facts: dict) -> None:
    """The API's promises, held against what a session saw (:func:`tests.api_checks.facts`)."""
    run = facts["run"]
    R, N, D, n = api_checks.SMALL["runs"], api_checks.SMALL["agents"], 2, 4 + 6
    assert (run["X"], run["y"], run["best_x"], run["best_value"]) == ([R, N, n, D], [R, N, n], [R, N, D], [R, N])
    assert run["epsilon"] == [7] and run["epsilon_type"] == "ndarray"
    assert run["frame"][0] == R * N * n and run["frame_columns"][-3:] == ["x0", "x1", "y"]
    assert run["stopped"] is None and run["complete"]
    assert run["best_is_a_query"] and run["best_value_is_min"] and run["best_x_in_box"] and run["y_is_bowl_of_X"]
    assert run["json_best"]
    assert facts["callback"] == {"stopped": "callback", "curve": 4, "queries": 4 + 3, "same_queries": True}
    # Interrupted in the middle of iteration 4: iterations 0..3 kept, exactly as the full run made them.
    assert facts["interrupt"] == {"stopped": "interrupted", "curve": 4, "queries": 4 + 3, "same_curve": True,
                                  "same_queries": True}
    assert facts["iterate"] == {"steps": [[0, R, True], [1, R, True], [2, R, True]], "curve": 3}
    for name, field in (("refused_run", "runs"), ("refused_accounting", "steps"), ("refused_time", "agents")):
        refusal = facts[name]
        assert refusal["field"] == field and one_sentence(refusal["sentence"]), refusal
        assert "limits" in refusal["sentence"]                      # it says how to lift the limit
        assert refusal["seconds"] < 30, refusal                     # a guard against hangs: priced, not computed
    assert facts["price"]["memory_mb"] > 1e6
    assert set(facts["bad"]) == set(BAD_FIELDS)
    for label, seen in facts["bad"].items():
        assert seen["raised"] == "ConfigError", (label, seen)
        assert seen["field"] == BAD_FIELDS[label] and one_sentence(seen["sentence"]), (label, seen)
        shown = engine_frames(seen["frames"], checkout=True)
        assert len(shown) == 1 and shown[0][0].endswith(("validation.py",)), (label, seen["frames"])
    assert facts["own_error"] == "ZeroDivisionError"
    assert all(annotation not in ("None", "") for annotation in facts["typed"].values()), facts["typed"]


def test_what_a_session_sees_of_runs_refusals_and_bad_input():
    check(api_checks.facts())


def test_the_price_is_the_command_lines_for_every_tool():
    parser = build_parser()
    argv = ["fbo", "--agents", "30", "--iterations", "12", "--runs", "3", "--features", "40", "--P", "3"]
    assert dpbo.price(dpbo.FboConfig(agents=30, iterations=12, runs=3, features=40, P=3)) == \
        fbo_command.cost(parser.parse_args(argv))
    assert dpbo.price(dpbo.HypeConfig(clients=50, repetitions=300)) == \
        hype_command.cost(parser.parse_args(["hype", "--clients", "50", "--repetitions", "300"]))
    assert dpbo.price(dpbo.PoConfig(runs=3, iterations=20)) == \
        pogpucb_command.cost(parser.parse_args(["pogpucb", "--runs", "3", "--iterations", "20"]))
    # Your own function: the engine's work on the continuous domain (its calls are its own time).
    own = dpbo.price(dpbo.FboConfig(agents=50, iterations=30), api_checks.bowl, box=api_checks.BOX)
    assert 0 < own.seconds < dpbo.price(dpbo.FboConfig(agents=50, iterations=300), api_checks.bowl,
                                        box=api_checks.BOX).seconds


def test_a_refused_run_computes_nothing(monkeypatch):
    from engine.api import accounting, fbo

    def never(*args, **kwargs):
        raise AssertionError("heavy work started before the price check")

    monkeypatch.setattr(fbo, "Simulation", never)
    monkeypatch.setattr(accounting, "_epsilon", never)
    with pytest.raises(dpbo.ConfigError, match="runs"):
        dpbo.run_fbo(dpbo.FboConfig(runs=10**6))
    with pytest.raises(dpbo.ConfigError) as refused:
        dpbo.epsilon(q=0.25, z=1.0, steps=10**9, delta=1e-5, accountant="pld")
    assert refused.value.field == "steps"
    # Lifted explicitly, the same accounting question is asked (here: of the stand-in).
    with pytest.raises(AssertionError, match="heavy work"):
        dpbo.epsilon(q=0.25, z=1.0, steps=10**9, delta=1e-5, accountant="pld", limits=None)


def test_a_time_limit_stops_a_slow_run_with_its_finished_iterations():
    def slow(x):                # 200 iterations of 2 calls: at least 4 s whatever the machine
        import time
        time.sleep(0.01)
        return api_checks.bowl(x)

    config = dpbo.FboConfig(algorithm="ts", agents=2, iterations=200, runs=1, n_init=2, own_features=20, seed=0)
    assert dpbo.price(config, slow, box=api_checks.BOX).seconds < 1.0          # priced within the limit
    result = dpbo.run_fbo(config, slow, box=api_checks.BOX, limits=dpbo.Limits(seconds=1.0), progress=False)
    assert result.stopped == "time limit" and not result.complete
    assert result.X.shape[2] == 2 + result.iterations_done and len(result.curve) == result.iterations_done + 1


def test_scale_and_box_do_not_change_the_queries():
    config = dpbo.FboConfig(algorithm="dp-fts-de", agents=8, iterations=10, runs=2, features=20, P=2, seed=3)
    base = dpbo.run_fbo(config, api_checks.bowl, box=api_checks.BOX, minimise=True)
    shifted = dpbo.run_fbo(config, lambda x: 1000.0 * api_checks.bowl(x) - 37.0, box=api_checks.BOX, minimise=True)
    np.testing.assert_allclose(shifted.X, base.X, rtol=0, atol=1e-9)
    np.testing.assert_allclose(shifted.values, 1000.0 * base.values - 37.0, rtol=1e-9)
    # The box in other units (x1 in thousandths, x2 in hundreds): the same points, mapped.
    scale = np.array([1e-3, 50.0])
    rescaled = dpbo.run_fbo(config, lambda x: api_checks.bowl(x / scale), box=[(0.0, 1e-3), (-100.0, 0.0)],
                            minimise=True)
    np.testing.assert_allclose(rescaled.X / scale, base.X, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rescaled.best_x / scale, base.best_x, rtol=0, atol=1e-9)
    # Without the standardisation the large-scale function would be another run (what it fixes).
    from engine.fbo import run_fbo as engine_run
    from engine.objectives.own import own_objective

    raw = own_objective(lambda x: 1000.0 * api_checks.bowl(x) - 37.0, api_checks.BOX, minimise=True, agents=8)
    raw = type(raw)(**{**{f: getattr(raw, f) for f in raw.__dataclass_fields__}, "standardise": False})
    assert not np.allclose(engine_run(config, raw).X, base.X)


def test_the_built_in_tasks_are_not_standardised():
    from engine.fbo.simulation import Simulation

    simulation = Simulation(dpbo.FboConfig(agents=5, iterations=2, runs=1, features=10))
    for _ in simulation:
        pass
    assert not simulation.objective.standardise and not simulation.pool.standardise
    # Their surrogates hold the observed values themselves.
    y = simulation.pool.history_y[:, :, :simulation.pool.count].reshape(5, -1)
    np.testing.assert_array_equal(simulation.pool.own.y[:, :simulation.pool.count], y)


def test_hype_stopped_keeps_its_finished_votes(monkeypatch):
    from engine.api import tools
    from engine.cancel import CancelToken

    token = CancelToken()
    real = tools.iter_hype

    def first_block_then_stop(config):
        for result in real(config):
            yield result
            token.cancel()                   # as the first Ctrl-C does: the next checkpoint stops the votes

    monkeypatch.setattr(tools, "token_for", lambda limits: token)
    monkeypatch.setattr(tools, "iter_hype", first_block_then_stop)
    result = dpbo.run_hype(dpbo.HypeConfig(clients=20, repetitions=2000, seed=1), progress=False)
    assert result.stopped == "interrupted" and not result.complete
    assert 0 < result.repetitions < 2000 and result.winners.shape == (result.repetitions,)
    assert result.winner_counts.sum() == result.repetitions


def _ctrl_c_reaches_it() -> None:
    """In the child before it starts: SIGINT handled by default and not blocked, as in a terminal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def test_a_real_ctrl_c_returns_the_finished_iterations(tmp_path):
    script = textwrap.dedent("""
        import sys, time
        import numpy as np
        import dpbo

        def slow(x):
            time.sleep(0.01)
            return float(np.sum(x ** 2))

        def report(step):
            print("iteration", step.iteration, flush=True)

        config = dpbo.FboConfig(algorithm="ts", agents=2, iterations=10_000, runs=1, n_init=2, seed=0)
        result = dpbo.run_fbo(config, slow, box=[(-1, 1)], callback=report, progress=True)
        print("returned", result.stopped, len(result.curve), result.X.shape[2], flush=True)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # As from a terminal, where Ctrl-C reaches the program: a test worker may itself hold SIGINT blocked or ignored
    # (a library it ran left its signal mask so), and a child inherits both; with SIGINT blocked the Ctrl-C below
    # never arrived and the run went on to its 10,000 iterations.
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env, preexec_fn=_ctrl_c_reaches_it)
    try:
        for line in child.stdout:            # wait on progress, not on time
            if line.strip() == "iteration 3":
                child.send_signal(signal.SIGINT)
                break
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err[-2000:]
    returned = out.strip().splitlines()[-1].split()
    assert returned[:2] == ["returned", "interrupted"], out
    curve, queries = int(returned[2]), int(returned[3])
    assert curve >= 4 and queries == 2 + curve - 1


def test_every_configuration_field_has_its_meaning_in_help():
    for cls in (dpbo.FboConfig, dpbo.HypeConfig, dpbo.PoConfig, dpbo.ServerAudit, dpbo.VoteAudit):
        text = inspect.getdoc(cls)
        for name, spec in specs(cls).items():
            entry = re.search(rf"^{name} : .*\n((?:    .*\n?)+)", text, re.M)
            assert entry, f"help({cls.__name__}) does not describe {name}"
            meaning = entry.group(1).strip()
            assert len(meaning) > 15 and meaning.lower() != name, (cls.__name__, name, meaning)
        assert str(inspect.signature(cls)).startswith("(")         # the constructor's own signature, not *args


def test_every_public_function_has_a_return_type():
    for name in api.__all__:
        obj = getattr(api, name)
        if inspect.isfunction(obj):
            assert inspect.signature(obj).return_annotation is not inspect.Signature.empty, name


def test_the_progress_line_rewrites_itself_and_stays_off_when_nobody_watches():
    stream = io.StringIO()
    line = Progress("dp-fts-de", 4, stream=stream, enabled=True, after=0, every=0)
    for done in range(5):
        line.update(done, f"simple regret {1 / (done + 1):.3g}")
    line.close("interrupted after iteration 4 of 4")
    text = stream.getvalue()
    assert text.count("\r") == 6 and text.endswith("\n") and "\n" not in text[:-1]
    assert "iteration 2 of 4, simple regret 0.333 |" in text and "left" in text
    quiet = io.StringIO()
    line = Progress("ts", 4, stream=quiet, after=0, every=0)       # a StringIO is no terminal
    line.update(1)
    line.close()
    assert quiet.getvalue() == ""


def test_the_result_json_carries_the_best_point_and_the_command_line_prints_it(capsys):
    from engine.cli import main

    assert main(["fbo", "--algorithm", "ts", "--agents", "3", "--iterations", "2", "--runs", "1"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed["best"]) == {"x", "value", "run", "agent", "iteration"} and printed["stopped"] is None
