"""The reproduction report: paired comparisons over runs, claim verdicts, the CLI, and the paper's settings."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli import main
from engine.fbo.presets import FTS_REFERENCE, PRESETS, reference_name
from engine.reproduce import LANDMINE_CLAIMS, LANDMINE_SETTINGS, Claim, Setting, SettingResult, compare, judge
from engine.reproduce.report import Part, run_part
from engine.sweep import get_adapter, preset_spec


def _result(key, curves):
    return SettingResult(Setting(key, key, {}), np.asarray(curves, dtype=float), None, None, 0.0)


def test_comparisons_are_paired_over_runs():
    rng = np.random.default_rng(0)
    shared = rng.normal(0.3, 0.05, size=(30, 5))            # run-to-run spread both settings share
    better = _result("a", shared - 0.01)
    worse = _result("b", shared + rng.normal(0, 0.002, size=(30, 5)))
    c = compare(better, worse, 4)
    diff = worse.run_curves[:, 4] - better.run_curves[:, 4]
    assert c["difference"] == pytest.approx(diff.mean())
    assert c["stderr"] == pytest.approx(diff.std(ddof=1) / np.sqrt(30))
    # Pairing removes the shared spread: far smaller than the unpaired standard error.
    unpaired = np.sqrt(better.run_curves[:, 4].var(ddof=1) / 30 + worse.run_curves[:, 4].var(ddof=1) / 30)
    assert c["stderr"] < unpaired / 5
    # "curve" is the mean over iterations 1..T of each run.
    assert compare(better, worse, "curve")["better_mean"] == pytest.approx(better.run_curves[:, 1:].mean())


def test_verdicts_hold_reverse_or_are_not_significant():
    rng = np.random.default_rng(1)
    base = rng.normal(0.2, 0.02, size=(20, 3))
    results = {"x": _result("x", base), "better": _result("better", base - 0.01),
               "same": _result("same", base + rng.normal(0, 1e-3, size=(20, 3))),
               "worse": _result("worse", base + 0.01)}
    claims = [Claim("better beats x", "test", ("better",), "x", 2), Claim("worse beats x", "test", ("worse",), "x", 2),
              Claim("same beats x", "test", ("same",), "x", 2),
              Claim("one of them beats x", "test", ("worse", "better"), "x", 2)]
    verdicts = {v.claim.text: v for v in judge(claims, results)}
    assert verdicts["better beats x"].verdict == "holds" and verdicts["better beats x"].holds
    assert verdicts["worse beats x"].verdict == "reversed" and not verdicts["worse beats x"].holds
    assert verdicts["same beats x"].verdict in ("not significant", "holds", "reversed")
    assert abs(verdicts["same beats x"].numbers["difference"]) < 3e-3
    assert verdicts["one of them beats x"].holds and len(verdicts["one of them beats x"].numbers["comparisons"]) == 2
    as_json = json.loads(json.dumps([v.to_json() for v in verdicts.values()]))
    # Every claim says its data and whether it holds by construction, and how the rule decided it (discovery
    # only here: no replication seed set was run).
    for claim in as_json:
        assert {"claim", "source", "data_kind", "by_construction", "holds", "verdict", "numbers", "test",
                "why"} <= set(claim)
    # A constant paired difference (better = x - 0.01 in every run) has no spread: an exact claim, its sign decides.
    assert as_json[0]["test"] == "exact" and "discovery" not in as_json[0]
    same = as_json[2]
    assert same["test"] == "difference" and same["discovery"]["detectable"] > 0


def test_a_small_part_runs_every_setting_on_shared_seeds():
    base = dict(dataset="synthetic", agents=6, iterations=3, features=10, n_init=3)
    settings = [Setting("ts", "TS", dict(algorithm="ts")), Setting("fts", "FTS", dict(FTS_REFERENCE))]
    toy = Part("toy", "toy", "simple regret", base, tuple(settings), (Claim("fts beats ts", "test", ("fts",), "ts"),),
               (0, 3), 3)
    part = run_part(toy, runs=3, seed=5, jobs=1)
    payload = json.loads(json.dumps(part.to_json()))
    assert payload["runs"] == 3 and [s["key"] for s in payload["settings"]] == ["ts", "fts"]
    ts = payload["settings"][0]
    assert len(ts["curve"]) == len(ts["curve_stderr"]) == 4 and set(ts["checkpoints"]) == {"0", "3"}
    # Same seeds: TS and FTS (P = 1) start from the same initial points, so iteration 0 agrees run by run.
    assert np.array_equal(part.results["ts"].run_curves[:, 0], part.results["fts"].run_curves[:, 0])
    assert payload["claims"][0]["verdict"] in ("holds", "not significant", "reversed")


def test_worker_processes_give_the_blocks_one_process_gives():
    # 30 runs are two blocks per setting: four blocks on two workers, handed out as workers free up.
    base = dict(dataset="synthetic", agents=4, iterations=2, features=8, n_init=2)
    settings = (Setting("ts", "TS", dict(algorithm="ts")), Setting("fts", "FTS", dict(FTS_REFERENCE)))
    toy = Part("toy", "toy", "simple regret", base, settings, (), (0, 2), 30)
    serial, parallel = run_part(toy, runs=30, seed=2, jobs=1), run_part(toy, runs=30, seed=2, jobs=2)
    for key in ("ts", "fts"):
        assert parallel.results[key].run_curves.shape == (30, 3)
        assert np.array_equal(serial.results[key].run_curves, parallel.results[key].run_curves)


def test_fig3a_fts_line_is_fts_de_with_one_subregion():
    # The authors' "FTS" on landmine is their DP-FTS-DE code with P = 1 and no DP (landmine_dp_fts_de.py:44-48).
    references = PRESETS["fig3a"]["references"]
    assert dict(algorithm="fts-de", P=1) in references
    assert [reference_name(r) for r in references] == ["ts", "fts", "fts-de"]
    spec = preset_spec("fig3a", runs=1)
    cells = [c for c in spec.cells(get_adapter(spec.tool)) if c.role == "reference"]
    assert [(c.params["algorithm"], c.params["P"]) for c in cells] == [("ts", 4), ("fts-de", 1), ("fts-de", 4)]
    fts = next(s for s in LANDMINE_SETTINGS if s.key == "fts")
    assert fts.overrides == {"algorithm": "fts-de", "P": 1}
    # Every claim names settings that the protocol runs.
    keys = {s.key for s in LANDMINE_SETTINGS}
    assert all(set(c.better) | {c.worse} <= keys for c in LANDMINE_CLAIMS)


@pytest.mark.parametrize("argv, fragment", [
    (["reproduce", "some-paper"], "Unknown paper"),
    (["reproduce", "dp-fts-de", "--runs", "1"], "runs must be"),
    (["reproduce", "dp-fts-de", "--parts", "emnist"], "reproduction part"),
])
def test_bad_reproduce_options_are_one_sentence_and_exit_2(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and fragment in err and "\n" not in err
