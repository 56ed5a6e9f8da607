"""ConfigError carries the configuration field it is about, never the human name the sentence uses,
so a page places every sentence under its control without reading it."""

from __future__ import annotations

import dataclasses
import math

import pytest

from engine.audit import ServerAudit, VoteAudit
from engine.fbo import FboConfig
from engine.hype import HypeConfig
from engine.pogpucb import PoConfig
from engine.privacy import calibrate_z, epsilon, epsilon_curve, releases_within_budget
from engine.sweep import SweepSpec
from engine.validation import ConfigError, check_int, parse_values

BAD_VALUES = (-1, 0, 0.5, 1.5, 1e9, math.nan, math.inf, "x", None, True)


def refusals(cls, base: dict):
    """(field changed, ConfigError) for every bad value of every field of ``cls`` that is refused."""
    out = []
    for field in dataclasses.fields(cls):
        for bad in BAD_VALUES:
            try:
                cls(**dict(base, **{field.name: bad}))
            except ConfigError as err:
                out.append((field.name, err))
            except (TypeError, ValueError) as err:  # not a ConfigError: a sentence no page could place
                pytest.fail(f"{cls.__name__}({field.name}={bad!r}) raised {type(err).__name__}: {err}")
    return out


# Fields no bad value reaches: flags, and fields of the other mode (DP-HYPE checks only what it uses).
@pytest.mark.parametrize("cls, base, unchecked", [
    (FboConfig, dict(agents=10, iterations=4, runs=2), set()),
    (FboConfig, dict(algorithm="dp-fts-de", agents=10, budget=2.0), set()),
    (HypeConfig, dict(), {"alpha", "dataset", "good_within", "runs"}),
    (HypeConfig, dict(mode="data", clients=50), {"candidates", "good", "sigma_loss"}),
    (PoConfig, dict(), set()),
    (ServerAudit, dict(trials=1000), set()),
    (VoteAudit, dict(trials=1000), set()),
], ids=["fbo", "fbo-budget", "hype", "hype-data", "pogpucb", "audit-server", "audit-votes"])
def test_every_refusal_names_a_field_of_the_config(cls, base, unchecked):
    names = {f.name for f in dataclasses.fields(cls)}
    found = refusals(cls, base)
    assert names - {field for field, _ in found} == unchecked
    wrong = [(field, err.field, str(err)) for field, err in found if err.field not in names]
    assert not wrong, wrong


def test_a_sweep_names_its_own_fields():
    for field, bad in (("runs", 0), ("replicates", 0), ("seed", -1), ("combine", "x")):
        with pytest.raises(ConfigError) as err:
            SweepSpec("toy", **{field: bad})
        assert err.value.field == field


def test_human_names_stay_in_the_sentence():
    with pytest.raises(ConfigError) as err:
        FboConfig(agents=1)
    assert err.value.field == "agents" and str(err.value) == "number of agents N must be >= 2, got 1."
    with pytest.raises(ConfigError) as err:
        HypeConfig(clients=0)
    assert err.value.field == "clients" and str(err.value).startswith("number of clients n must be in")
    with pytest.raises(ConfigError) as err:
        check_int("t", 0, 1, 40, name="iteration t")
    assert err.value.field == "t" and str(err.value) == "iteration t must be in [1, 40], got 0."


def test_privacy_functions_name_their_parameters():
    cases = [(lambda: epsilon(2.0, 1.0, 10, 1e-5), "q"), (lambda: epsilon(0.5, -1.0, 10, 1e-5), "z"),
             (lambda: epsilon_curve(0.5, 1.0, -3, 1e-5), "steps"), (lambda: epsilon(0.5, 1.0, 10, 2.0), "delta"),
             (lambda: releases_within_budget([1.0], -1.0), "budget"),
             (lambda: calibrate_z(-1.0, 0.5, 10, 1e-5), "target_epsilon")]
    for call, field in cases:
        with pytest.raises(ConfigError) as err:
            call()
        assert err.value.field == field, (field, str(err.value))


def test_compared_values_are_parsed_with_limits():
    assert parse_values("0.15, 0.25 0.5;0.25", float, "q") == [0.15, 0.25, 0.5]
    for text, words in (("", "Give the values of q"), ("0.1, x", "'x' is not a number"), ("inf", "'inf' is not"),
                        ("1.5", "P takes whole numbers"), ("1 2 3 4 5 6 7", "at most 6 values")):
        with pytest.raises(ConfigError) as err:
            parse_values(text, int if words.startswith("P") else float, "P" if words.startswith("P") else "q")
        assert err.value.field == "values" and words in str(err.value)
