"""Blocks of runs shared between the parts of a reproduction: made once, with the numbers of separate runs."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from engine.fbo import FboConfig, run_fbo
from engine.fbo.presets import FTS_REFERENCE
from engine.reproduce import runs as runs_module
from engine.reproduce.dp_fts_de import PART_SPECS
from engine.reproduce.report import Claim, Part, Setting, run_part, run_parts, run_settings
from engine.reproduce.runs import block_key, setting_config

BASE = dict(dataset="synthetic", agents=6, iterations=3, features=10, n_init=3, P=2)
TS = Setting("ts", "TS", dict(algorithm="ts"))
FTS = Setting("fts", "FTS", dict(FTS_REFERENCE))
DP = Setting("dp", "DP-FTS-DE", dict(algorithm="dp-fts-de", q=0.5, z=1.0))


def _toy(name: str, base: dict, settings) -> Part:
    claims = (Claim("the first beats the last", "test", (settings[0].key,), settings[-1].key),)
    return Part(name, name, "simple regret", base, tuple(settings), claims, (0, 3), 3)


def _counting(monkeypatch) -> list:
    made = []
    real = runs_module.run_config

    def counted(config):
        made.append(block_key(config))
        return real(config)

    monkeypatch.setattr(runs_module, "run_config", counted)
    return made


def test_privacy_settings_key_only_private_runs():
    ts = setting_config(BASE, TS, 1, 3)
    assert block_key(ts) == block_key(ts.replace(accountant="rdp", sampling="fixed", q=0.1, z=3.0, S=2.0))
    dp = setting_config(BASE, DP, 1, 3)
    assert block_key(dp) != block_key(dp.replace(accountant="rdp", sampling="fixed"))
    assert block_key(dp) != block_key(dp.replace(S=5.0))
    assert block_key(ts) != block_key(ts.replace(seed=2)) and block_key(ts) != block_key(ts.replace(runs=4))


def test_a_run_without_privacy_ignores_the_privacy_settings():
    # What makes sharing TS between Fig. 3a (moments accountant) and Fig. 11 (RDP, fixed sample) sound.
    for algorithm in ("ts", "fts-de"):
        config = FboConfig(**{**BASE, "algorithm": algorithm, "runs": 2, "seed": 3})
        other = config.replace(accountant="rdp", sampling="fixed", q=0.1, z=4.0, S=1.0, delta=1e-3)
        assert np.array_equal(run_fbo(config).run_curves, run_fbo(other).run_curves)


def test_shared_blocks_run_once_and_give_what_separate_parts_give(monkeypatch):
    first = _toy("first", BASE, [TS, FTS, DP])
    # The second part runs TS under other privacy settings (never read) and the same DP-FTS-DE: both shared.
    second = _toy("second", dict(BASE, accountant="rdp"), [Setting("ts", "TS", dict(algorithm="ts", q=0.1)),
                                                          Setting("dp-other", "DP", dict(DP.overrides, z=2.0)),
                                                          Setting("fts again", "FTS", dict(FTS_REFERENCE))])
    separate = {part.name: run_part(part, runs=3, seed=4, jobs=1) for part in (first, second)}
    made = _counting(monkeypatch)
    seen = []
    together = run_parts([(first, 3), (second, 3)], seed=4, jobs=1,
                         progress=lambda name, done, total: seen.append((name, done, total)))
    # first: 3 blocks; second: TS and FTS shared, only DP with z = 2 (RDP) is new.
    assert len(made) == len(set(made)) == 4
    for name, result in together.items():
        assert list(result.results) == list(separate[name].results)
        for key, setting in result.results.items():
            assert np.array_equal(setting.run_curves, separate[name].results[key].run_curves)
            assert setting.epsilon == separate[name].results[key].epsilon
        assert [v.to_json() for v in result.verdicts] == [v.to_json() for v in separate[name].verdicts]
    assert ("first", 3, 3) in seen and ("second", 3, 3) in seen and ("second", 2, 3) in seen


def test_a_cache_is_not_run_again(monkeypatch):
    cache = {}
    once = run_settings(BASE, [TS, DP], runs=3, seed=1, jobs=1, cache=cache)
    made = _counting(monkeypatch)
    again = run_settings(BASE, [DP, Setting("ts copy", "TS", dict(algorithm="ts"))], runs=3, seed=1, jobs=1,
                         cache=cache)
    assert made == []
    assert np.array_equal(again["ts copy"].run_curves, once["ts"].run_curves)
    assert np.array_equal(again["dp"].run_curves, once["dp"].run_curves)


def test_the_paper_parts_share_the_lines_they_repeat():
    def keys(name, runs=4):
        part = PART_SPECS[name]
        return {block_key(setting_config(part.base, s, 1, runs)): s.key for s in part.settings}

    shared = set(keys("landmine")) & set(keys("landmine-renyi"))
    assert [keys("landmine-renyi")[k] for k in shared] == ["ts"]        # DP lines differ in sampling
    shared = set(keys("synthetic")) & set(keys("synthetic-appendix"))
    assert sorted(keys("synthetic-appendix")[k] for k in shared) == ["dp S=11", "fts-de", "ts"]


def test_a_failing_block_on_workers_ends_the_command_with_one_sentence(tmp_path):
    """A worker's error (here the landmine file missing) reaches the command line as its one sentence: no
    traceback of the worker pool being shut down around it (loky printed one when workers were killed while it
    handed out the next block)."""
    import subprocess
    import sys

    env = {**os.environ, "DPBO_DATA_DIR": str(tmp_path), "DPBO_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "engine", "reproduce", "dp-fts-de", "--parts", "landmine",
                           "--runs", "2", "--workers", "2", "--quiet"], capture_output=True, text=True, timeout=120,
                          env=env, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: The landmine data set is unavailable")
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
