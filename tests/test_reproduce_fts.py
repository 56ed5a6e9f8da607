"""``python -m engine reproduce fts``: a claim for every figure, claims that say two settings are alike."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from engine.cli import main
from engine.reproduce import Claim, Setting, SettingResult, fts, judge
from engine.reproduce.report import RUNS_PER_BLOCK

FIGURES = {"fig1a", "fig1b", "fig1c", "fig2a", "fig2b", "fig2c", "fig3a", "fig3d", "appD.2.1"}


def _result(key, curves):
    return SettingResult(Setting(key, key, {}), np.asarray(curves, dtype=float), None, None, 0.0)


def test_reproduce_fts_with_two_runs_lists_a_claim_for_every_figure(monkeypatch, capsys):
    # The engine's runs are replaced by random curves of the right shapes: this is about what is listed.
    rng = np.random.default_rng(0)
    seen = []

    def fake_settings(base, settings, *, runs, seed=0, jobs=None, progress=None, draws="fixed", per_draw=1):
        seen.append((draws, per_draw, runs))
        return {s.key: _result(s.key, rng.random((runs, base["iterations"] + 1))) for s in settings}

    def fake_timed_run(config, objective=None):
        return rng.random(config.iterations + 1), np.cumsum(rng.random(config.iterations + 1))

    @dataclasses.dataclass
    class Landmine:                 # the run-time part's objective, cut down per N (its runs above are fakes)
        n_agents: int = 29
        values: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((29, 4)))
        reference: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(29))

    monkeypatch.setattr(fts, "run_settings", fake_settings)
    monkeypatch.setattr(fts, "_timed_run", fake_timed_run)
    monkeypatch.setattr("engine.objectives.build_objective", lambda *args, **kwargs: Landmine())
    monkeypatch.setattr("engine.reproduce.report.run_settings", fake_settings)
    assert main(["reproduce", "fts", "--runs", "2", "--quiet", "--workers", "1", "--no-replication"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload["parts"]) == set(fts.PARTS)
    assert fts.figures_claimed(payload) >= FIGURES
    for part in payload["parts"].values():
        assert part["runs"] == (fts.FUNCTIONS * fts.INITIALISATIONS if part["name"] == "synthetic" else 2)
        assert all(c["verdict"] in ("holds", "not significant", "reversed", "differs", "inconsistent")
                   for c in part["claims"])
    # The synthetic figures draw a function per initialisation block for the seed set (not five fixed ones).
    assert ("run", fts.INITIALISATIONS, fts.FUNCTIONS * fts.INITIALISATIONS) in seen
    assert {item["figure"] for item in payload["not_reproducible"]} == {"fig2b", "fig2c", "fig3b", "fig3c"}
    assert "machine" in payload and payload["machine"]


def test_every_claim_names_settings_its_part_runs():
    for name in ("synthetic", "landmine", "general"):
        part = fts.PART_SPECS[name]
        keys = {s.key for s in part.settings}
        assert all(set(c.better) | {c.worse} <= keys for c in part.claims), name
    labels = [s.label for s in fts.LANDMINE_SETTINGS]
    assert "FTS (M = 100, sends 100)" in labels and "RGPE (M = 100, sends 10100)" in labels
    assert "TAF (M = 100, sends 10101)" in labels


def test_a_claim_of_alike_settings_holds_within_its_registered_margin_and_is_untested_without_one(monkeypatch):
    from engine.reproduce import margins

    monkeypatch.setattr(margins, "MARGINS", {
        text: margins.Margin(0.01, "test", "2026-11-29", (0.1,)) for text in ("a and b alike", "a and c alike")})
    rng = np.random.default_rng(3)
    base = rng.normal(0.2, 0.05, size=(RUNS_PER_BLOCK, 4))
    results = {"a": _result("a", base), "b": _result("b", base + rng.normal(0, 0.01, base.shape)),
               "c": _result("c", base + 0.05)}
    alike = Claim("a and b alike", "test", ("a",), "b", similar=True)
    apart = Claim("a and c alike", "test", ("a",), "c", similar=True)
    verdicts = judge([alike, apart], results)
    assert [v.verdict for v in verdicts] == ["holds", "differs"]
    assert [v.holds for v in verdicts] == [True, False]
    assert verdicts[0].numbers["equivalence_margin"] == 0.01 and verdicts[0].numbers["margin_source"] == "test"
    monkeypatch.setattr(margins, "MARGINS", {})
    [untested] = judge([alike], results)
    assert untested.verdict == "not significant" and untested.decision["test"] == "untested"
    assert untested.decision["reading"] == "not tested" and "no margin" in untested.decision["why"]


@pytest.mark.parametrize("argv, fragment", [
    (["reproduce", "fts", "--parts", "emnist"], "reproduction part"),
    (["reproduce", "fts", "--functions", "1"], "functions"),
])
def test_bad_fts_options_are_one_sentence_and_exit_2(capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and fragment in err and "\n" not in err


def test_the_stored_reproduction_covers_every_part_setting_and_claim():
    stored = fts.stored()
    assert stored is not None, "data/reproduction/fts.json is missing"
    output = stored["output"]
    assert fts.figures_claimed(output) >= FIGURES
    for name, spec in fts.PART_SPECS.items():
        part = output["parts"][name]
        assert {c["claim"] for c in part["claims"]} == {c.text for c in spec.claims}, name
        assert {s.key for s in spec.settings} <= {s["key"] for s in part["settings"]}, name
        for claim in part["claims"]:
            assert claim["holds"] == (claim["verdict"] == "holds")
    assert stored["provenance"]["runs"] == output["parts"]["landmine"]["runs"]
    assert stored["provenance"]["command"].startswith("python -m engine reproduce fts")


def test_the_docs_show_every_stored_part_in_a_block_made_from_it():
    from pathlib import Path

    from engine.reproduce.docs_blocks import names

    text = (Path(__file__).resolve().parents[1] / "docs" / "paper-comparisons.md").read_text()
    blocks = set(names(text))
    # Each part's claims table is made from the stored JSON (tests/test_sentences.py: the doc equals it).
    assert {f"claims:fts:{name}" for name in fts.stored()["output"]["parts"]} <= blocks
