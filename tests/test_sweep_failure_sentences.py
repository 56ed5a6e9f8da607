"""A failed sweep cell: the exception's text locally, one sentence (what failed, what to lower) when hosted."""

from __future__ import annotations

import pytest

import engine.sweep.toy as toy
from engine.sweep import run_sweep
from engine.sweep.spec import SweepSpec


def _failures(tmp_path, name: str) -> list[str]:
    spec = SweepSpec("toy", base={"fail_at": 2.0}, axes=(("x", (1.0, 2.0)),), runs=2)
    summary = run_sweep(spec, tmp_path / f"{name}.parquet", executor="local")
    column = summary.table["error"].dropna().unique().tolist()
    return [f["error"] for f in summary.failed] + column


def test_locally_a_failed_cell_keeps_the_exception_detail(tmp_path, monkeypatch):
    monkeypatch.delenv("DPBO_HOSTED", raising=False)
    errors = _failures(tmp_path, "local")
    assert errors and all(e.startswith("RuntimeError: toy failure injected at x=2") for e in errors)


def test_hosted_a_failed_cell_shows_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")
    errors = _failures(tmp_path, "hosted")
    assert errors
    for error in errors:
        assert "RuntimeError" not in error and "toy failure" not in error
        assert error.startswith("This setting failed during the computation; lower x or the number of runs")
        assert error.count(".") == 1 and error.endswith(".")


def test_hosted_a_cell_out_of_memory_names_what_to_lower(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")

    def too_big(config):
        raise MemoryError("Unable to allocate 26.8 GiB for an array with shape (60000, 60000) and data type float64")

    monkeypatch.setattr(toy, "run_toy", too_big)
    errors = _failures(tmp_path, "memory")
    assert errors
    for error in errors:
        assert "GiB" not in error and "MemoryError" not in error and "60000" not in error
        assert error == ("This setting needed more memory than this server has; lower x or the number of runs and "
                         "run it again.")


def test_hosted_a_refused_setting_keeps_its_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")
    from engine.validation import ConfigError

    def refused(config):
        raise ConfigError("x must be at most 10, got 20.", "x")

    monkeypatch.setattr(toy, "run_toy", refused)
    assert set(_failures(tmp_path, "refused")) == {"x must be at most 10, got 20."}


@pytest.mark.parametrize("kind", ["memory", "computation"])
def test_public_error_never_contains_the_detail(kind):
    from engine.sweep.cell import CellOutcome, public_error

    sentence = public_error("fbo", CellOutcome(error="ValueError: array must not contain infs or NaNs", kind=kind))
    assert "ValueError" not in sentence and "agents" in sentence
