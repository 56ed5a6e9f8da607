"""Every door of ``python -m engine`` goes through the one gate: it has a price (``Cost.free("why")`` when it does
no heavy work, never None), and its largest inputs are refused by that price with one sentence (exit 2) or, for a
free door, finish with an answer or one sentence.

The doors are found, not listed by hand alone: every module of :mod:`engine.cli` that runs a command must be a
tool, and every mode of every tool (a sub-command, a paper, a mechanism, an export target) must be a door below.
A new command, or a new mode of one, fails here until it is priced and its largest inputs are held to the price.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil

import pytest

import engine.cli
import engine.validation
from engine.audit import MECHANISMS
from engine.cli import TOOLS, _load, build_parser, main
from engine.cli.reproduce import PAPERS
from engine.flower.settings import TOOLS as EXPORT_TOOLS
from engine.limits import Cost

# The probe's limits (hosting mode's defaults are 120 s and 2,048 MB).
PROBE_ENV = {"DPBO_MAX_SECONDS": "30", "DPBO_MAX_MEMORY_MB": "2048"}
MILLION = "1000000"

# (door, argv at its largest inputs). Priced doors must be refused at these sizes; free doors run for real.
DOORS = [
    ("fbo", ["fbo", "--agents", MILLION]),
    ("fbo landmine", ["fbo", "--dataset", "landmine", "--runs", "1000", "--iterations", "10000"]),
    ("fbo continuous", ["fbo", "--dataset", "digits-svm", "--domain", "continuous", "--iterations", "10000"]),
    ("privacy", ["privacy", "--q", "0.25", "--z", "1", "--steps", "100000000", "--delta", "1e-5",
                 "--accountant", "pld"]),
    ("privacy calibration", ["privacy", "--q", "1", "--target-epsilon", "1", "--steps", "100000000", "--delta",
                             "1e-5", "--accountant", "pld", "--curve"]),
    ("privacy no release", ["privacy", "--q", "0.5", "--z", "-1", "--steps", "0", "--delta", "1e-5"]),
    ("hype", ["hype", "--repetitions", MILLION, "--clients", MILLION]),
    ("hype data", ["hype", "--mode", "data", "--clients", "500", "--repetitions", MILLION]),
    ("hype --fig2a", ["hype", "--fig2a", "--repetitions", MILLION]),
    ("hype --calibrate", ["hype", "--calibrate", "--k", "1000000000", "--epsilon", "1e-9", "--delta", "1e-300"]),
    ("pogpucb", ["pogpucb", "--iterations", "1000", "--runs", "1000"]),
    ("data fetch", ["data", "fetch", "landmine", "--url", "file:///dev/zero", "--timeout", "5", "--data-dir",
                    "OUT/data"]),
    ("data status", ["data", "status"]),
    ("data build-table", ["data", "build-table", "--dataset", "digits-svm", "--agents", "100000", "--grid", "1000"]),
    ("sweep", ["sweep", "--tool", "fbo", "--grid", "agents=1000,2000,5000,10000", "--runs", "1000",
               "--out", "OUT/t.csv"]),
    ("sweep preset", ["sweep", "--preset", "fig3a", "--runs", "1000", "--out", "OUT/p.csv"]),
    ("audit fbo-server", ["audit", "--mechanism", "fbo-server", "--trials", "1000000000", "--agents", MILLION]),
    ("audit hype-votes", ["audit", "--mechanism", "hype-votes", "--trials", "1000000000", "--candidates", MILLION]),
    ("audit flower", ["audit", "--mechanism", "flower", "--strategy", "dp-fts-de", "--trials", "100000000"]),
    ("audit flower participant", ["audit", "--mechanism", "flower", "--attacker", "participant", "--strategy",
                                  "dp-fts-de", "--agents", "50", "--steps", "50"]),
    ("audit one-run", ["audit", "--one-run", "--mechanism", "fbo-server", "--canaries", "100000", "--steps", "1000"]),
    ("audit flower one-run", ["audit", "--one-run", "--mechanism", "flower", "--strategy", "dp-fts-de", "--canaries",
                              "1000", "--steps", "100"]),
    ("reproduce dp-fts-de", ["reproduce", "dp-fts-de", "--parts", "all", "--runs", "1000", "--quiet"]),
    ("reproduce dp-hype", ["reproduce", "dp-hype", "--repetitions", MILLION, "--quiet"]),
    ("reproduce po-gp-ucb", ["reproduce", "po-gp-ucb", "--runs", "1000", "--quiet"]),
    ("reproduce fts", ["reproduce", "fts", "--runs", "1000", "--functions", "1000", "--quiet"]),
    ("reproduce all", ["reproduce", "all", "--runs", "1000", "--quiet"]),
    ("reproduce ablations", ["reproduce", "ablations", "--runs", "1000", "--quiet"]),
    ("export flower fbo", ["export", "flower", "--tool", "fbo", "--agents", MILLION, "--out", "OUT/fbo"]),
    ("export flower hype", ["export", "flower", "--tool", "hype", "--clients", MILLION, "--k", "1000",
                            "--out", "OUT/hype"]),
    ("advise", ["advise", "--agents", "100000", "--iterations", "10000", "--effort", "20"]),
    ("advise proxy", ["advise", "--dataset", "proxy", "--dimension", "6", "--lengthscale", "2", "--agents", "100000"]),
    ("advise landmine", ["advise", "--dataset", "landmine", "--iterations", "10000", "--effort", "20"]),
    ("advise dp-hype", ["advise", "--algorithm", "dp-hype", "--agents", "10000", "--candidates", "1000",
                        "--effort", "20"]),
]
# How each tool selects its modes: every value must be the mode of some door above.
MODES = {
    "data": ("fetch", "status", "build-table"),
    "reproduce": tuple(PAPERS),
    "audit": (*MECHANISMS, "flower", "--attacker participant", "--one-run"),
    "export": tuple(f"--tool {tool}" for tool in EXPORT_TOOLS),
    "hype": ("--calibrate", "--fig2a", "--mode data"),
    "privacy": ("--target-epsilon",),
    "sweep": ("--preset",),
    "advise": ("--algorithm dp-hype", "--dataset proxy"),
}


def _argv(argv: list[str], out) -> list[str]:
    return [word.replace("OUT", str(out)) for word in argv]


def test_every_module_that_runs_a_command_is_a_tool():
    modules = {info.name for info in pkgutil.iter_modules(engine.cli.__path__)}
    runners = {name for name in modules if callable(getattr(importlib.import_module(f"engine.cli.{name}"), "run",
                                                              None))}
    assert runners == set(TOOLS), f"runs a command but is no tool: {runners - set(TOOLS)}"
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    assert set(sub.choices) == set(TOOLS)


def test_every_mode_of_every_tool_is_a_door():
    tools = {argv[0] for _, argv in DOORS}
    assert tools == set(TOOLS), f"tools without a door: {set(TOOLS) - tools}"
    lines = [" ".join(argv) for _, argv in DOORS]
    for tool, modes in MODES.items():
        for mode in modes:
            assert any(line.startswith(tool + " ") and f" {mode}" in f" {line}" for line in lines), (tool, mode)
    # The modes listed are the tools' own: a new data action or paper must be listed above too.
    data = importlib.import_module("engine.cli.data")
    assert set(MODES["data"]) == set(data.ACTIONS)


@pytest.mark.parametrize("door, argv", DOORS, ids=[door for door, _ in DOORS])
def test_every_door_has_a_price_and_its_largest_inputs_stay_within_it(door, argv, tmp_path, monkeypatch, capsys):
    for name, value in PROBE_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    argv = _argv(argv, tmp_path)
    module = _load(argv[0])
    try:
        cost = module.cost(build_parser().parse_args(argv))
    except engine.validation.ConfigError:
        cost = None                       # refused while pricing: main says so in one sentence below
    else:
        assert isinstance(cost, Cost), f"{door}: cost(args) returned {cost!r}"
        if cost.is_free:
            assert len(cost.free_because) > 10, door
    if cost is None or not cost.is_free:
        def run(args):
            pytest.fail(f"{door}: its largest inputs passed the price and started running")

        monkeypatch.setattr(module, "run", run)
    code = main(argv)
    err = capsys.readouterr().err
    if code != 0:
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (door, err)
        assert "Traceback" not in err
    else:
        assert cost is not None and cost.is_free, door


def test_a_command_without_a_price_is_stopped_before_it_runs(monkeypatch, tmp_path):
    export = _load("export")
    started = []
    monkeypatch.setattr(export, "cost", lambda args: None)
    monkeypatch.setattr(export, "run", lambda args: started.append(args) or {})
    with pytest.raises(TypeError, match="Cost.free"):
        main(["export", "flower", "--tool", "fbo", "--out", str(tmp_path)])
    assert not started


def test_the_export_of_a_million_agents_builds_nothing(tmp_path, capsys, monkeypatch):
    """The probe's export: 7.99 GB and 74 s, then a MemoryError traceback, when the run config built the
    objective it only describes; now the same few files as four agents, and no objective is built."""
    import engine.objectives as objectives

    monkeypatch.setattr(objectives, "build_objective", lambda *a, **k: pytest.fail("the export built an objective"))
    for name, value in PROBE_ENV.items():
        monkeypatch.setenv(name, value)
    assert main(["export", "flower", "--tool", "fbo", "--agents", MILLION, "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert '"tool": "fbo"' in out
    text = (tmp_path / "a" / "pyproject.toml").read_text()
    assert f"agents = {MILLION}" in text and "dim = 1" in text and "lengthscale = 0.03" in text
