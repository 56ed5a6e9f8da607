"""The command line prices every command in one place (engine.cli.main and each tool's ``cost(args)``),
refuses above the host's limits with one sentence, stops at the time limit, names worker processes one way,
and reads a data set's own figures (candidates, build and query seconds, refit period) from the registry."""

from __future__ import annotations

import argparse
import json
import time

import pytest

import engine.cli.hype as hype_cli
from engine.cli import TOOLS, _load, build_parser, main
from engine.fbo import FboConfig
from engine.fbo.plan import make_plan
from engine.limits import Cost, HostLimits, check, format_memory, hype_cost, hype_grid_cost
from engine.objectives import build_objective
from engine.objectives.registry import DATASETS, dataset_costs
from engine.validation import ConfigError

PLD_EXAMPLE = ["privacy", "--q", "0.25", "--z", "1", "--steps", "100000000", "--delta", "1e-5", "--accountant", "pld"]


def parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_every_tool_exposes_its_cost():
    for tool in TOOLS:
        module = _load(tool)
        assert callable(getattr(module, "cost", None)), f"engine.cli.{tool} has no cost(args)"
        assert callable(module.run) and callable(module.add_arguments) and module.HELP


def test_the_pld_example_is_refused_at_once_with_one_sentence(capsys, monkeypatch):
    import engine.cli.privacy as privacy_cli

    def accounted(*args, **kw):
        raise AssertionError("the accounting ran before it was priced")

    monkeypatch.setenv("DPBO_MAX_SECONDS", "5")
    for name in ("epsilon", "epsilon_curve", "calibrate_z"):     # refused at once: none of the work starts
        monkeypatch.setattr(privacy_cli, name, accounted)
    assert main(PLD_EXAMPLE) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: This accounting needs ") and err.count("\n") == 1, err
    assert "Lower the releases T" in err
    # Its time alone is above five seconds, whatever the memory limit.
    monkeypatch.setenv("DPBO_MAX_MEMORY_MB", "none")
    assert main(PLD_EXAMPLE) == 2
    err = capsys.readouterr().err
    assert "of computing (estimated); the limit here is 5 s" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("argv", [["hype", "--repetitions", "1000000"],
                                  ["reproduce", "dp-fts-de", "--parts", "synthetic", "--synthetic-runs", "40",
                                   "--workers", "2", "--quiet"]], ids=["hype", "reproduce-in-worker-processes"])
def test_a_command_past_its_time_limit_stops_with_one_sentence(argv, capsys, monkeypatch):
    # Priced as light (a wrong price), it runs under the deadline: 2 x DPBO_MAX_SECONDS of wall-clock time.
    # Both commands take minutes of computing when nothing stops them; the sentence says the deadline did. The
    # bound on the wall time is only a guard against a stop that hangs, wide enough for a machine busy with
    # other work (starting worker processes on it can take seconds).
    monkeypatch.setattr(_load(argv[0]), "cost", lambda args: Cost.free("a wrong price, for this test"))
    monkeypatch.setenv("DPBO_MAX_SECONDS", "0.5")
    started = time.perf_counter()
    assert main(argv) == 2
    elapsed = time.perf_counter() - started
    err = capsys.readouterr().err
    assert elapsed < 60, elapsed
    assert err.startswith("error: The command was stopped after 1 s") and "DPBO_MAX_SECONDS=0.5" in err, err
    assert err.count("\n") == 1


def test_no_time_limit_on_the_command_line_unless_the_host_sets_one(capsys, monkeypatch):
    monkeypatch.delenv("DPBO_MAX_SECONDS", raising=False)
    assert main(["hype", "--repetitions", "50", "--clients", "20"]) == 0
    assert json.loads(capsys.readouterr().out)["repetitions"] == 50


def test_hype_fig2a_is_priced_as_its_grid():
    args = parse(["hype", "--fig2a"])
    config = hype_cli.config_from_args(args)
    grid = hype_cli.cost(args)
    assert grid == hype_grid_cost(config, 12, 6)            # 6 values of k x 2 epsilons, 6 loss spreads
    assert grid.seconds > hype_cost(config).seconds         # six spreads cost more than one run
    assert hype_cli.cost(parse(["hype"])) == hype_cost(config)
    assert hype_cli.cost(parse(["hype", "--calibrate"])).is_free


def test_fbo_does_not_count_a_cached_table(cache):
    from engine.cli.fbo import cost
    from engine.objectives.registry import make_task
    from engine.objectives.store import table_path

    args = parse(["fbo", "--dataset", "breast-cancer-lr", "--agents", "40", "--runs", "1", "--iterations", "5"])
    uncached = cost(args)
    path = table_path(make_task("breast-cancer-lr", n_agents=40))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")             # the plan asks only whether the table is there
    cached = cost(args)
    assert uncached.seconds - cached.seconds == pytest.approx(dataset_costs("breast-cancer-lr").table_seconds(40))


def test_a_cached_table_build_costs_nothing(cache, capsys, monkeypatch):
    from engine.cli.data import cost

    argv = ["data", "build-table", "--dataset", "breast-cancer-lr", "--agents", "2", "--grid", "2", "--workers", "1",
            "--quiet"]
    before = cost(parse(argv))
    assert before.seconds > 0 and before.memory_mb > 0
    assert main(argv) == 0
    capsys.readouterr()
    after = cost(parse(argv))
    assert (after.seconds, after.memory_mb) == (0.0, 0.0)
    # A large grid not built yet is refused before any agent is scored.
    monkeypatch.setenv("DPBO_MAX_SECONDS", "5")
    assert main(["data", "build-table", "--dataset", "digits-svm", "--agents", "50", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: This table build needs about") and err.count("\n") == 1, err
    assert cost(parse(["data", "status"])).is_free


def test_reproduce_and_audit_are_priced(capsys, monkeypatch):
    monkeypatch.setenv("DPBO_MAX_SECONDS", "5")
    assert main(["reproduce", "dp-fts-de", "--parts", "synthetic", "--synthetic-runs", "100"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: This reproduction needs about") and "synthetic runs" in err, err
    assert main(["audit", "--trials", "100000000"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: This audit needs about") and "Lower the number of trials" in err, err


def help_of(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit):
        main(argv + ["--help"])
    return capsys.readouterr().out


def test_worker_processes_are_workers_in_every_command(capsys):
    for tool in TOOLS:
        assert "--jobs" not in help_of([tool], capsys), tool
    for argv in (["sweep"], ["reproduce"], ["data", "build-table"]):
        text = help_of(argv, capsys)
        assert "--workers" in text and "--jobs" not in text, argv
    assert main(["reproduce", "dp-fts-de", "--jobs", "2"]) == 2
    assert "Unrecognized arguments: --jobs 2" in capsys.readouterr().err


def test_too_many_workers_are_refused(capsys, monkeypatch):
    monkeypatch.setenv("DPBO_MAX_WORKERS", "2")
    assert main(["reproduce", "dp-fts-de", "--workers", "3"]) == 2
    err = capsys.readouterr().err
    assert "at most 2 worker processes" in err and err.count("\n") == 1


def test_privacy_defaults_delta_as_fbo_does(capsys):
    assert main(["privacy", "--q", "0.25", "--z", "1", "--steps", "40", "--agents", "200"]) == 0
    out = json.loads(capsys.readouterr().out)
    plan = make_plan(FboConfig(algorithm="dp-fts-de", agents=200, q=0.25, z=1.0, iterations=40, accountant="rdp"))
    assert out["delta"] == pytest.approx(plan.delta) and out["delta"] == pytest.approx(1e-5)    # the product's rule
    assert out["epsilon"] == pytest.approx(plan.final_epsilon, rel=1e-9)
    # Without N there is no default: one sentence says what to give.
    assert main(["privacy", "--q", "0.25", "--z", "1", "--steps", "40"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Give --delta, or --agents N") and err.count("\n") == 1
    assert "delta rule's, as fbo" in " ".join(help_of(["privacy"], capsys).split())
    # The paper's delta by name, as fbo's --delta-rule.
    paper = ["--agents", "200", "--delta-rule", "paper"]
    assert main(["privacy", "--q", "0.25", "--z", "1", "--steps", "40", *paper]) == 0
    assert json.loads(capsys.readouterr().out)["delta"] == pytest.approx(200 ** -1.1)


def test_memory_above_a_terabyte_is_not_printed_in_megabytes():
    assert format_memory(1234.4) == "1,234 MB"
    assert format_memory(1234.4, about=True) == "about 1,234 MB"
    assert format_memory(194_432_760_834) == "more than 1 TB"
    with pytest.raises(ConfigError) as err:
        check(Cost(seconds=1.0, memory_mb=194_432_760_834.0, field="agents"), HostLimits())
    assert "needs more than 1 TB of memory (estimated); the limit here is 2,048 MB" in str(err.value)
    assert "MB of memory" not in str(err.value)


def test_a_data_sets_own_figures_are_its_own():
    assert set(DATASETS) <= set(__import__("engine.objectives.registry", fromlist=["COSTS"]).COSTS)
    synthetic = build_objective("synthetic", n_agents=2)
    assert dataset_costs("synthetic").candidates == len(synthetic.candidates)
    assert dataset_costs("synthetic").own_refit_every == synthetic.own_refit_every == 0
    from engine.objectives import breast_cancer_lr, digits_svm

    for name, module in (("digits-svm", digits_svm), ("breast-cancer-lr", breast_cancer_lr)):
        task = module.make_task(n_agents=2)
        assert dataset_costs(name).candidates == task.default_grid ** task.dim, name
        assert dataset_costs(name).own_refit_every == task.own_refit_every, name
        assert dataset_costs(name).table_agent_seconds > 0 and dataset_costs(name).query_seconds > 0
    from engine.objectives import landmine

    assert dataset_costs("landmine").candidates == landmine.DEFAULT_GRID ** 2


def test_a_refused_whole_number_is_shown_in_full_and_q_reads_alike_everywhere(capsys):
    # "got 1e+09" read as a different number; privacy said q "in [1e-09, 1]" where fbo says "(0, 1]".
    assert main(["hype", "--clients", "1000000000"]) == 2
    err = capsys.readouterr().err
    assert "got 1000000000." in err and "e+" not in err, err
    assert main(["privacy", "--q", "0", "--z", "1", "--steps", "10", "--delta", "1e-5"]) == 2
    privacy = capsys.readouterr().err
    assert main(["fbo", "--q", "0"]) == 2
    fbo = capsys.readouterr().err
    assert "must be in (0, 1], got 0." in privacy and "must be in (0, 1], got 0." in fbo, (privacy, fbo)


def test_an_rdp_calibration_prints_no_library_warning():
    # dp_accounting's RDP series logged "_compute_log_a_frac failed to converge ... Excluding this order" on
    # stderr: the epsilon is the minimum over the remaining orders, still a valid bound, nothing to act on.
    import subprocess
    import sys
    from pathlib import Path

    proc = subprocess.run([sys.executable, "-m", "engine", "privacy", "--target-epsilon", "1", "--q", "0.25",
                           "--steps", "100", "--delta", "1e-5", "--accountant", "rdp"], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[1], timeout=300)
    assert proc.returncode == 0 and json.loads(proc.stdout)["z"] > 0
    assert proc.stderr == "", proc.stderr
