"""ConfigError carries the configuration field it is about, never the human name the sentence uses,
so a page places every sentence under its control without reading it."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import math
import shlex

import pytest

from engine.advise import AdviceRequest
from engine.audit import OneRunAudit, ServerAudit, VoteAudit
from engine.cli import build_parser
from engine.fbo import FboConfig
from engine.hype import HypeConfig
from engine.pogpucb import PoConfig
from engine.settings import flag_of, public, specs
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


# Fields no bad value reaches (none: a value of the wrong kind is refused even in a field of the other mode,
# whose bounds DP-HYPE does not check).
@pytest.mark.parametrize("cls, base, unchecked", [
    (FboConfig, dict(agents=10, iterations=4, runs=2), set()),
    (FboConfig, dict(algorithm="dp-fts-de", agents=10, budget=2.0), set()),
    (HypeConfig, dict(), set()),
    (HypeConfig, dict(mode="data", clients=50), set()),
    (PoConfig, dict(), set()),
    (ServerAudit, dict(trials=1000), set()),
    (VoteAudit, dict(trials=1000), set()),
    (OneRunAudit, dict(), set()),
    (AdviceRequest, dict(dataset="proxy"), set()),
    (AdviceRequest, dict(algorithm="dp-hype"), set()),
], ids=["fbo", "fbo-budget", "hype", "hype-data", "pogpucb", "audit-server", "audit-votes", "audit-one-run",
        "advise-proxy", "advise-hype"])
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


# ---------------------------------------------------------------- every field declared once

TOOLS = [  # (configuration class, CLI tool, the page's link parameters)
    (FboConfig, "fbo", "ui.fbo.controls:FBO_PARAMS"),
    (HypeConfig, "hype", "ui.hype.controls:PARAMS"),
    (PoConfig, "pogpucb", "ui.pogpucb.controls:PARAMS"),
    (ServerAudit, "audit", "ui.audit.controls:PARAMS"),
    (VoteAudit, "audit", "ui.audit.controls:PARAMS"),
    (OneRunAudit, "audit", "ui.audit.controls:PARAMS"),
    (AdviceRequest, "advise", "ui.advise.controls:PARAMS"),
]
# The configuration classes every tool runs; a new tool's configuration must join TOOLS above.
CONFIG_MODULES = ("engine.fbo.config", "engine.hype.config", "engine.pogpucb.config", "engine.audit.config",
                  "engine.advise.request")


def _page_params(path: str) -> dict:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _parser_dests(tool: str) -> dict[str, list[str]]:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return {action.dest: list(action.option_strings) for action in subparsers.choices[tool]._actions}  # noqa: SLF001


def test_every_configuration_class_is_walked():
    walked = {cls for cls, _, _ in TOOLS}
    for module in CONFIG_MODULES:
        for value in vars(importlib.import_module(module)).values():
            if dataclasses.is_dataclass(value) and isinstance(value, type) and value.__module__ == module:
                assert value in walked, f"{value.__name__} is not in TOOLS"


@pytest.mark.parametrize("cls, tool, page", TOOLS, ids=[cls.__name__ for cls, _, _ in TOOLS])
def test_every_field_has_a_validator_a_page_control_and_a_cli_option(cls, tool, page):
    declared = specs(cls)
    params = _page_params(page)
    dests = _parser_dests(tool)
    for field in dataclasses.fields(cls):
        spec = declared.get(field.name)
        assert spec is not None, f"{cls.__name__}.{field.name} is not declared with engine.settings.setting()"
        if spec.internal:
            assert field.name not in dests, f"{field.name} is internal ({spec.internal}) but has a CLI option"
            continue
        assert field.name in dests, f"{cls.__name__}.{field.name} has no option in python -m engine {tool}"
        assert flag_of(field.name, spec, field.default) in dests[field.name]
        if spec.not_on_page:
            assert field.name not in params, f"{field.name} is on the page but says: {spec.not_on_page}"
        else:
            name = spec.page_param or field.name
            assert name in params, f"{cls.__name__}.{field.name} has no control or link parameter"
            if name == field.name:
                param = params[name]
                assert (param.low, param.high) == spec.link_bounds(), name
                # A page shared by two configurations links the union of their choices (the audit's accountant).
                assert set(spec.choices or ()) <= set(param.choices or ()), name


def _other_values(cls, name: str, spec):
    """Valid-looking values of ``name`` other than its default, most likely first."""
    default = getattr(cls, name)
    if spec.choices is not None:
        return [c for c in reversed(spec.choices) if c != default]
    if spec.kind is bool:
        return [not default]
    if spec.kind is int:
        start = default if default is not None else (spec.low or 0)
        return [v for v in (start + 1, start + 3, start - 1, spec.low, 0) if v is not None and v != default]
    start = default if default is not None else 0.5
    return [v for v in (start * 0.5, start * 2, 0.3, 0.5, 3.0) if v != default]


def _one_change(cls, name: str, spec):
    base = {"mode": "data", "clients": 50} if cls is HypeConfig and spec.when is not None \
        and not spec.when(HypeConfig()) else {}
    if cls is FboConfig and name == "split":
        base = {"dataset": "landmine"}
    if cls is FboConfig and name == "calibrate_z":
        base = {"budget": 3.0}
    if cls is FboConfig and name == "dissimilarity":
        base = {"algorithm": "fts"}
    if cls is AdviceRequest and name in ("dimension", "lengthscale", "noise", "heterogeneity"):
        base = {"dataset": "proxy"}
    if cls is AdviceRequest and name == "delta":      # a delta above 1/N is refused: one well below it
        return cls(delta=1e-7)
    for value in _other_values(cls, name, spec):
        try:
            return cls(**base, **{name: value})
        except ConfigError:
            continue
    pytest.fail(f"no valid non-default value found for {cls.__name__}.{name}")


@pytest.mark.parametrize("cls, tool", [(FboConfig, "fbo"), (HypeConfig, "hype"), (PoConfig, "pogpucb"),
                                       (AdviceRequest, "advise")])
def test_the_printed_command_line_reproduces_every_setting(cls, tool):
    module = importlib.import_module(f"engine.cli.{tool}")
    parser = build_parser()
    configs = [cls()] + [_one_change(cls, name, spec) for name, spec in public(cls).items()]
    for config in configs:
        line = module.command_line(config)
        argv = shlex.split(line)
        assert argv[:4] == ["python", "-m", "engine", tool]
        back = module.config_from_args(parser.parse_args(argv[3:]))
        assert back.to_dict() == config.to_dict(), line
    assert module.command_line(cls()) in (f"python -m engine {tool}", "python -m engine fbo --agents 200")
