"""The engine's side of the differential trace against the authors' DP-FTS-DE code equals the stored comparison.

data/reproduction/authors-trace.json was made by benchmarks/trace_authors_dpftsde.py, which runs the authors'
landmine script beside :func:`engine.reproduce.trace.engine_trace`; only our side is recomputed here (the
authors' code needs GPy and their checkout). Tolerances are relative 1e-6: the runs are seeded, and only a
BLAS kernel's last bits may differ between machines.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.reproduce.stored import STORED_DIR
from engine.reproduce.trace import TRACE_SETTINGS, engine_trace, round_summary

TRACE = STORED_DIR / "authors-trace.json"


def _stored() -> dict:
    if not TRACE.is_file():
        pytest.skip("data/reproduction/authors-trace.json not generated")
    return json.loads(TRACE.read_text())


def _close(a, b) -> bool:
    if isinstance(a, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if a is None or b is None or isinstance(a, int):
        return a == b
    return bool(np.isclose(a, b, rtol=1e-6, atol=1e-9))


def test_engine_side_equals_the_stored_trace(data_dir):
    stored = _stored()
    run = stored["runs"][0]
    ours = engine_trace(stored["iterations"], run["seed"])
    assert ours["settings"] == run["engine"]["settings"]
    assert len(ours["rounds"]) == len(run["engine"]["rounds"]) == stored["iterations"]
    for mine, kept in zip(ours["rounds"], run["engine"]["rounds"]):
        for key, value in kept.items():
            assert _close(mine[key], value), key


def test_stored_trace_has_provenance_and_the_authors_settings():
    stored = _stored()
    provenance = stored["provenance"]
    assert len(provenance["authors_commit"]) == 40 and provenance["date"]
    assert provenance["command"].startswith("python benchmarks/trace_authors_dpftsde.py")
    assert (TRACE_SETTINGS["q"], TRACE_SETTINGS["z"], TRACE_SETTINGS["S"], TRACE_SETTINGS["P"]) == (0.35, 1.0, 22.0, 4)
    for run in stored["runs"]:
        assert len(run["authors"]["rounds"]) == stored["iterations"]
        # Both sides clip at S / sqrt(P) = 11 (Algorithm 1 line 9; landmine_dp_fts_de.py:133).
        assert run["authors"]["threshold"] == run["engine"]["threshold"] == 11.0


def test_round_summary_counts_only_selected_vectors_above_the_threshold():
    row = round_summary([5.0, 12.0, 13.0, 20.0], [True, True, False, False], 11.0, [0.1, 0.2], [1.0, 2.0],
                        [3.0, 4.0])
    assert (row["selected"], row["clipped"], row["clipped_share"]) == (2, 1, 0.5)
    assert row["phi_max"] == [0.1, 0.2] and row["omega_norm_mean"] == 12.5
