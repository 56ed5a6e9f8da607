"""The public Python API (engine.api, ``import dpbo``): a researcher's own objective, the same results as the
command line, the documented names (docs/api.md) and the worked notebook (docs/notebook.md) from the checkout."""

from __future__ import annotations

import contextlib
import doctest
import inspect
import io
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpbo
from engine import api
from engine.cli import main, to_json
from engine.privacy import delta_weakness
from tests.notebook_cells import script

ROOT = Path(__file__).resolve().parents[1]
API_DOC = ROOT / "docs" / "api.md"
SMALL = dict(agents=8, iterations=12, runs=3, features=20, seed=3)


def bowl(x):
    """Minimum 0 at (0.3, -1); values of order 1 on the box."""
    return float((x[0] - 0.3) ** 2 + 0.5 * (x[1] + 1.0) ** 2)


BOX = [(0.0, 1.0), (-2.0, 0.0)]


def test_own_objective_with_a_known_optimum_reports_regret_that_falls():
    result = dpbo.run_fbo(dpbo.FboConfig(algorithm="dp-fts-de", P=2, **SMALL), bowl, box=BOX, minimise=True,
                          optimum=0.0)
    assert result.metric_label == "simple regret"
    assert np.all(result.curve >= 0)                           # a regret in the function's units
    assert np.all(np.diff(result.run_curves, axis=1) <= 0)     # each run's best value only improves
    assert result.curve[-1] < 0.5 * result.curve[0], result.curve
    assert result.epsilon is not None and result.epsilon[-1] > 0


def test_minimising_f_and_maximising_minus_f_are_the_same_run():
    config = dpbo.FboConfig(algorithm="fts-de", P=2, **SMALL)
    low = dpbo.run_fbo(config, bowl, box=BOX, minimise=True, optimum=0.0)
    high = dpbo.run_fbo(config, lambda x: -bowl(x), box=BOX, optimum=0.0)
    np.testing.assert_array_equal(low.run_curves, high.run_curves)
    # Without an optimum: the best value found, in the function's units, each in its own direction.
    low = dpbo.run_fbo(config, bowl, box=BOX, minimise=True)
    high = dpbo.run_fbo(config, lambda x: -bowl(x), box=BOX)
    assert low.metric_label == "best value found (lower is better)"
    assert high.metric_label == "best value found (higher is better)"
    np.testing.assert_array_equal(low.run_curves, -high.run_curves)
    assert np.all(np.diff(low.run_curves, axis=1) <= 0) and np.all(low.curve > 0)


def test_a_vectorised_function_gives_the_same_run_as_the_one_point_function():
    def batch(X):
        return (X[:, 0] - 0.3) ** 2 + 0.5 * (X[:, 1] + 1.0) ** 2

    config = dpbo.FboConfig(algorithm="ts", **SMALL)
    one = dpbo.run_fbo(config, bowl, box=BOX, minimise=True, optimum=0.0)
    many = dpbo.run_fbo(config, batch, box=BOX, minimise=True, optimum=0.0, vectorised=True)
    np.testing.assert_allclose(one.run_curves, many.run_curves, rtol=0, atol=1e-12)


def test_the_echoed_configuration_names_the_objective_not_a_data_set():
    echoed = dpbo.run_fbo(dpbo.FboConfig(algorithm="ts", **SMALL), bowl, box=BOX, minimise=True).to_json()
    assert echoed["config"]["objective"] == "bowl" and echoed["config"]["dataset"] is None
    assert echoed["config"]["agents"] == SMALL["agents"]
    named = dpbo.run_fbo(dpbo.FboConfig(algorithm="ts", **SMALL), bowl, box=BOX, name="my bowl").to_json()
    assert named["config"]["objective"] == "my bowl"


def _one_sentence(text: str) -> bool:
    return "\n" not in text and text.endswith(".") and len(re.findall(r"[.!?](?:\s|$)", text)) == 1


def test_an_agents_conflict_is_one_sentence_never_a_silent_override():
    def per_agent(x, agent):
        return bowl(x) + 0.01 * agent

    with pytest.raises(dpbo.ConfigError) as caught:
        dpbo.run_fbo(dpbo.FboConfig(algorithm="ts", **SMALL), per_agent, box=BOX, agents=20, per_agent=True)
    assert caught.value.field == "agents" and _one_sentence(str(caught.value)), str(caught.value)
    assert "20" in str(caught.value) and str(SMALL["agents"]) in str(caught.value)
    # The configuration following the objective (agents=None) runs with the objective's 20 agents.
    result = dpbo.run_fbo(dpbo.FboConfig(algorithm="ts", **dict(SMALL, agents=None, iterations=2)), per_agent,
                          box=BOX, agents=20, per_agent=True)
    assert result.n_agents == 20 and result.to_json()["config"]["agents"] == 20


@pytest.mark.parametrize("call, field", [
    (lambda: dpbo.run_fbo(dpbo.FboConfig(), bowl), "box"),
    (lambda: dpbo.run_fbo(dpbo.FboConfig(), bowl, box=[(1, 0)]), "box"),
    (lambda: dpbo.run_fbo(dpbo.FboConfig(), bowl, box="0 to 1"), "box"),
    (lambda: dpbo.run_fbo(dpbo.FboConfig(), box=[(0, 1)]), "objective"),
    (lambda: dpbo.run_fbo(dpbo.FboConfig(algorithm="ts", **SMALL), lambda x: float("nan"), box=BOX), "objective"),
    (lambda: dpbo.run_fbo(dpbo.FboConfig(), bowl, box=BOX, optimum=float("inf")), "optimum"),
])
def test_bad_input_is_one_sentence_of_our_own_error_type(call, field):
    with pytest.raises(dpbo.ConfigError) as caught:
        call()
    assert caught.value.field == field and _one_sentence(str(caught.value)), str(caught.value)


def test_a_weak_delta_warns_truthfully_for_every_n_and_the_default_does_not():
    config = dpbo.FboConfig(algorithm="dp-fts-de", **dict(SMALL, iterations=2, runs=1))
    # Above 1/N, and (the paper's 1/N^1.1 for 8 agents: 0.101) below 1/N but not far below it: both warn.
    with pytest.warns(dpbo.PrivacyWarning, match=r"delta = 0\.2 is 160% of 1/N = 0\.125 for 8 participants"):
        dpbo.run_fbo(config.replace(delta=0.2), bowl, box=BOX, minimise=True)
    with pytest.warns(dpbo.PrivacyWarning, match=r"is 81% of 1/N = 0\.125"):
        dpbo.run_fbo(config.replace(delta_rule="paper"), bowl, box=BOX, minimise=True)
    for n in (4, 5, 8, 200):      # the wording of dpbo.default_delta's warning holds at every N
        weak = dpbo.default_delta(n, rule="paper")
        assert f"{weak * n:.0%} of 1/N" in (delta_weakness(weak, n) or "")
        assert delta_weakness(dpbo.default_delta(n), n) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpbo.PrivacyWarning)
        result = dpbo.run_fbo(config, bowl, box=BOX, minimise=True)
    assert result.delta == pytest.approx(1e-5) == dpbo.default_delta(SMALL["agents"])


def test_the_command_line_warns_of_a_weak_delta_on_stderr(capsys):
    assert main(["fbo", "--algorithm", "dp-fts-de", "--agents", "4", "--iterations", "1", "--runs", "1",
                 "--delta", "0.5", "--P", "1"]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: delta = 0.5 is 200% of 1/N = 0.25 for 4 participants")


def test_run_fbo_gives_what_the_command_line_prints():
    argv = ["fbo", "--algorithm", "dp-fts-de", "--agents", "12", "--iterations", "6", "--runs", "2",
            "--features", "20", "--q", "0.5", "--seed", "4"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    printed = json.loads(out.getvalue())
    config = dpbo.FboConfig(algorithm="dp-fts-de", agents=12, iterations=6, runs=2, features=20, q=0.5, seed=4)
    own = json.loads(to_json(dpbo.run_fbo(config).to_json()))
    for result in (printed, own):
        result.pop("wall_seconds")
    assert own == printed


def test_the_api_names_what_is_public_and_every_function_has_an_example():
    assert dpbo.__all__ == api.__all__ and all(getattr(dpbo, name) is getattr(api, name) for name in api.__all__)
    for name in api.__all__:
        obj = getattr(api, name)
        doc = inspect.getdoc(obj) or ""
        assert doc, f"{name} has no docstring"
        if inspect.isfunction(obj):
            assert "Example" in doc and ">>> " in doc, f"{name}'s docstring has no example"


def plain_signature(function) -> inspect.Signature:
    """The function's signature without annotations: what docs/api.md quotes."""
    signature = inspect.signature(function)
    return signature.replace(parameters=[p.replace(annotation=inspect.Parameter.empty)
                                         for p in signature.parameters.values()],
                             return_annotation=inspect.Signature.empty)


def _documented() -> dict[str, str]:
    """docs/api.md: name -> the signature line quoted under its heading."""
    text = API_DOC.read_text()
    sections = re.split(r"^### `([A-Za-z_]+)`\n", text, flags=re.M)[1:]
    return {name: body for name, body in zip(sections[::2], sections[1::2])}


def test_docs_api_md_documents_exactly_the_public_names_with_their_signatures():
    documented = _documented()
    assert sorted(documented) == sorted(api.__all__), (
        f"docs/api.md documents {sorted(documented)}, engine.api.__all__ is {sorted(api.__all__)}")
    for name, body in documented.items():
        obj = getattr(api, name)
        if inspect.isfunction(obj):
            line = f"dpbo.{name}{plain_signature(obj)}"
            assert line in body, f"docs/api.md: the section of {name} should quote `{line}`"


def test_the_examples_in_the_api_docstrings_run():
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in api.__all__:            # the public names' own examples, wherever they are defined
            for test in finder.find(getattr(api, name), f"dpbo.{name}", globs={}):
                runner.run(test, out=lambda text: None)
    assert runner.failures == 0 and runner.tries >= 10, runner.summarize(verbose=False)


def test_the_worked_notebook_runs_from_the_checkout(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DPBO_")}
    env.update(PYTHONPATH=str(ROOT), DPBO_CACHE_DIR=str(tmp_path / "cache"))
    (tmp_path / "notebook.py").write_text(script())
    proc = subprocess.run([sys.executable, "notebook.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    check_notebook_output(proc.stdout, tmp_path)


def check_notebook_output(out: str, folder: Path) -> None:
    """What the notebook prints and writes (shared with the installed run in tests/test_install.py)."""
    assert "branin(pi, 2.275) = 0.397887" in out
    finals = dict(re.findall(r"^\s*(ts|dp-fts-de): simple regret after 20 iterations ([\d.]+) ±", out, re.M))
    assert set(finals) == {"ts", "dp-fts-de"}, out
    assert all(float(v) < 5 for v in finals.values()), out    # from about 5 after the initial points
    eps = re.search(r"epsilon = ([\d.]+) after 20 releases.*\nthe accountant alone: ([\d.]+)", out)
    assert eps and eps.group(1) == eps.group(2), out
    assert "echoed configuration names the objective: branin" in out
    assert (folder / "branin.html").stat().st_size > 10_000


def test_the_readmes_python_example_runs():
    blocks = re.findall(r"^```python\n(.*?)^```$", (ROOT / "README.md").read_text(), re.M | re.S)
    assert blocks, "README.md shows the API in a ```python block"
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, "README.md", "exec"), namespace)   # noqa: S102 - the README's own example
    regret, eps = map(float, out.getvalue().split())
    assert 0 <= regret < 0.05 and eps > 0


def test_import_dpbo_says_so_when_another_engine_hides_ours(tmp_path):
    (tmp_path / "engine.py").write_text("VALUE = 1\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", "import dpbo"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == 1 and last.startswith("ImportError: Another module named 'engine' (")
    assert str(tmp_path / "engine.py") in last and _one_sentence(last.split(": ", 1)[1]), last


def test_reproduce_gives_what_the_command_line_prints():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["reproduce", "po-gp-ucb", "--parts", "synthetic", "--runs", "2", "--quiet"]) == 0
    printed = json.loads(out.getvalue())
    own = json.loads(to_json(dpbo.reproduce("po-gp-ucb", "synthetic", runs=2)))
    def timeless(value):                            # run times and CPU seconds, the one thing that may differ
        if isinstance(value, dict):
            return {k: timeless(v) for k, v in value.items() if k not in ("seconds", "cpu_seconds")}
        return [timeless(v) for v in value] if isinstance(value, list) else value

    assert "seconds" in printed and "seconds" in printed["parts"]["synthetic"]
    own, printed = timeless(own), timeless(printed)
    assert own == printed and list(own["parts"]) == ["synthetic"]
