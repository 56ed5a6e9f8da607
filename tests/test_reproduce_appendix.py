"""The whole DP-FTS-DE paper as parts of ``reproduce dp-fts-de``: every figure has claims, --parts all and
--runs reach every part, and every verdict (orderings, sizes, privacy losses) follows from its numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.cli import main
from engine.reproduce import PART_SPECS, PARTS, Setting, SettingResult, judge
from engine.reproduce.dp_fts_de import CORE_PARTS, parse_parts, part_runs
from engine.reproduce.claims import redecided
from engine.reproduce.report import deciding_comparison
from engine.reproduce.sizes import SIZE_FACTOR

FIGURES = ("fig2a", "fig2b", "fig2c", "fig2d", "fig3a", "fig3b", "fig3c", "fig3d", "fig3e", "fig3f", "fig4", "fig5",
           "fig6", "fig7a", "fig7b", "fig8", "fig9a", "fig9b", "fig10a", "fig10b", "fig11", "fig12a", "fig12b")


def test_every_figure_of_the_paper_has_claims_whose_settings_run():
    covered = {figure for part in PART_SPECS.values() for figure in part.figures}
    assert set(FIGURES) <= covered, sorted(set(FIGURES) - covered)
    for part in PART_SPECS.values():
        keys = {s.key for s in part.settings}
        assert len(keys) == len(part.settings)
        for claim in part.claims:
            assert set(claim.better) <= keys, claim.text
            assert claim.kind != "metric" or claim.worse in keys, claim.text


def test_stand_in_parts_say_so_and_run_the_papers_settings():
    for name in ("har-standin", "emnist-standin"):
        part = PART_SPECS[name]
        assert "STAND-IN" in part.title and part.base["dataset"] == name and part.paper_runs == 10
        assert (part.base["iterations"], part.base["features"], part.base["P"], part.base["S"]) == (60, 100, 4, 22.0)
        assert part.base["lengthscale"] == 0.01 and part.base["noise_var"] == 1e-6    # App. B.2.1
    renyi = PART_SPECS["landmine-renyi"].base
    assert (renyi["accountant"], renyi["sampling"]) == ("rdp", "fixed")


def test_all_parts_and_runs_scale_every_part():
    assert parse_parts("all") == PARTS and parse_parts("landmine,synthetic") == CORE_PARTS
    assert {part_runs(name, runs=2) for name in PARTS} == {2}
    assert part_runs("har-standin") == 10 and part_runs("landmine-renyi") == 100 and part_runs("synthetic") == 5
    assert part_runs("heterogeneous", runs=7, synthetic_runs=3) == 3 and part_runs("landmine", 7, 3) == 7


def test_reproduce_all_runs_the_synthetic_parts_at_the_stored_count_unless_told():
    """`reproduce all` reproduces the stored verdicts, so DP-FTS-DE's synthetic parts run at the stored parts' count
    (the paper's 5 decide none of their claims); ``--runs`` (a quick look) or ``--synthetic-runs`` set it, and the
    paper alone keeps the paper's count."""
    import argparse

    from engine.cli import reproduce as command
    from engine.reproduce.dp_fts_de import STORED_SYNTHETIC_RUNS

    parser = argparse.ArgumentParser()
    command.add_arguments(parser)

    def synthetic(*argv):
        args = parser.parse_args(list(argv))
        return part_runs("synthetic", command._runs(args, "dp-fts-de"), command._synthetic_runs(args))  # noqa: SLF001

    assert STORED_SYNTHETIC_RUNS == 100 and synthetic("all") == 100
    assert synthetic("all", "--runs", "3") == 3 and synthetic("all", "--synthetic-runs", "7") == 7
    assert synthetic("dp-fts-de") == 5 and synthetic("dp-fts-de", "--synthetic-runs", "9") == 9


def _result(key, curves, epsilon=None, clipped=None, overrides=None):
    return SettingResult(Setting(key, key, overrides or {}), np.asarray(curves, float), epsilon, None, 0.0, clipped)


def test_size_and_privacy_claims_follow_their_numbers():
    part = PART_SPECS["synthetic-appendix"]
    size = next(c for c in part.claims if c.kind == "clipped" and c.better == ("dp S=11",))
    flat = [[0.1, 0.1], [0.1, 0.1]]
    for clipped, verdict in ((0.8 * SIZE_FACTOR * 0.99, "holds"), (0.8 * SIZE_FACTOR * 1.01, "differs"),
                             (0.8 / SIZE_FACTOR * 0.99, "differs")):
        [v] = judge([size], {"dp S=11": _result("dp S=11", flat, clipped=clipped)}, part.base)
        assert v.verdict == verdict and v.numbers["better_mean"] == clipped
    renyi = PART_SPECS["landmine-renyi"]
    claim = renyi.claims[0]
    setting = next(s for s in renyi.settings if s.key == claim.better[0])
    # Moments accountant with Poisson sampling at q = 0.35, z = 1, T = 60, N = 29: 15.17.
    for ours, verdict in ((13.5, "holds"), (160.6, "reversed")):
        result = SettingResult(setting, np.asarray(flat), ours, None, 0.0)
        [v] = judge([claim], {setting.key: result}, renyi.base)
        assert v.numbers["worse_mean"] == pytest.approx(15.17, abs=0.01) and v.verdict == verdict


def _check_verdicts(claims: list) -> None:
    """Each verdict is the decision rule applied to the claims' numbers (engine.reproduce.claims.decide)."""
    assert [c["verdict"] for c in claims] == redecided(claims)
    for claim in claims:
        n = deciding_comparison(claim["numbers"])
        if n.get("stderr") and np.isfinite(n["stderr"]) and n.get("z") is not None:
            assert n["z"] == pytest.approx(n["difference"] / n["stderr"])


def test_a_small_run_of_a_new_part_lists_its_claims_and_verdicts_follow(capsys):
    # The Fig. 7 part is the cheapest new part (50 synthetic agents); every part runs through the same code.
    assert main(["reproduce", "dp-fts-de", "--parts", "heterogeneous", "--runs", "2", "--workers", "1",
                 "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    part = payload["parts"]["heterogeneous"]
    assert part["runs"] == 2 and len(part["claims"]) == len(PART_SPECS["heterogeneous"].claims)
    _check_verdicts(part["claims"])


def test_stored_verdicts_follow_their_numbers():
    from engine.reproduce.stored import STORED_FILES, stored_part

    claims = []     # the paper's claims are decided together, over every stored part
    for name in STORED_FILES:
        stored = stored_part(name)
        if stored is not None:
            claims += stored.payload["claims"]
    _check_verdicts(claims)


def test_fig11_readings_of_a_fixed_sample():
    from engine.privacy.paper import FIG11_MAIN, fig11_row

    row = fig11_row()
    for name in ("moments_poisson", "rdp_poisson", "rdp_fixed_sensitivity_c", "rdp_fixed_ours"):
        assert getattr(row, name) == pytest.approx(getattr(FIG11_MAIN, name), abs=0.01)
    # Only the Poisson analysis is "slightly better" than Fig. 3a; replace-one is worse even at sensitivity C.
    assert row.rdp_poisson < row.moments_poisson < row.rdp_fixed_sensitivity_c < row.rdp_fixed_ours
