"""Settings are typed before they are checked: a ``--config`` file's values, a link's values and the command line's
options become the field's declared kind (or one sentence) before any bound, price or run sees them.

First the probe's files and links one by one, then Hypothesis feeds random JSON values of every type to every
field of every configuration through ``--config`` (the tool's ``run`` replaced, so only parsing, typing,
validation and the price run) and through the pages' link parameters, and finds only sentences.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.audit import ServerAudit, VoteAudit
from engine.cli import main
from engine.advise import AdviceRequest
from engine.fbo import FboConfig
from engine.hype import HypeConfig
from engine.pogpucb import PoConfig
from engine.settings import CONFIG_MAX_BYTES, CONFIG_MAX_DEPTH, SEED_MAX, public, specs
from engine.validation import ConfigError, parse_number
from ui.kit.state import Param, param_of

CONFIG_TOOLS = {"fbo": FboConfig, "hype": HypeConfig, "pogpucb": PoConfig, "advise": AdviceRequest}
ALL_CONFIGS = (FboConfig, HypeConfig, PoConfig, ServerAudit, VoteAudit, AdviceRequest)


@pytest.fixture
def no_run(monkeypatch, tmp_path):
    """Every tool's ``run`` returns the configuration it would run instead of running it."""
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    for tool in CONFIG_TOOLS:
        module = importlib.import_module(f"engine.cli.{tool}")
        monkeypatch.setattr(module, "run", lambda args, module=module: {"config": module.config_from_args(args)
                                                                          .to_dict()})


def run_config(capsys, tmp_path, tool: str, text: str, *extra: str):
    path = tmp_path / "config.json"
    path.write_text(text, encoding="utf-8")
    code = main([tool, "--config", str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def one_sentence(code: int, err: str) -> str:
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (code, err)
    assert "Traceback" not in err and len(err) < 400, err
    return err[len("error: "):].strip()


# The probe's files: each a traceback or a hang before, one sentence (or the typed value) now.
@pytest.mark.parametrize("text, sentence", [
    ('{"agents": "10"}', "number of agents N must be a number, got '10'."),
    ('{"features": "1e3"}', "number of random features M must be a number, got '1e3'."),
    ('{"seed": 1e20}', f"seed must be at most {SEED_MAX:,}, got 1e+20."),
    ('{"seed": 100000000000000000000}', f"seed must be at most {SEED_MAX:,}, got 100000000000000000000."),
    ('{"runs": 2.5}', "number of runs must be a whole number, got 2.5."),
    ('{"local_exploration": 1}', "local_exploration must be true or false, got 1."),
    ('{"algorithm": ["ts"]}', "algorithm must be text, got ['ts']."),
    ('{"q": NaN}', "is not strict JSON"),
    ('{"agents": ' + "9" * 5000 + "}", "is not strict JSON"),
    ('{"agents": ' + "[" * 100_000 + "]" * 100_000 + "}", f"nests more than {CONFIG_MAX_DEPTH} levels"),
    ('{"' + "x" * 5000 + '": 1}', "Unknown setting(s) in"),
], ids=["text-int", "text-exponent", "seed-float", "seed-int", "half-run", "flag-int", "list", "nan", "digits",
        "deep", "long-name"])
def test_the_probes_files_get_one_sentence(text, sentence, capsys, tmp_path, no_run):
    code, _, err = run_config(capsys, tmp_path, "fbo", text)
    assert sentence in one_sentence(code, err)


def test_a_whole_float_of_an_int_field_becomes_an_int(capsys, tmp_path, no_run):
    code, out, err = run_config(capsys, tmp_path, "fbo", '{"iterations": 2.0, "agents": 1e1}')
    assert code == 0, err
    config = json.loads(out)["config"]
    assert config["iterations"] == 2 and config["agents"] == 10
    assert FboConfig(iterations=2.0).iterations.__class__ is int


def test_a_file_is_read_up_to_a_bound(capsys, tmp_path, no_run):
    code = main(["fbo", "--config", "/dev/zero"])      # an endless file: read up to the bound, then refused
    assert one_sentence(code, capsys.readouterr().err) == (
        f"The configuration file /dev/zero is larger than {CONFIG_MAX_BYTES // 1024:,} kB; a configuration is a "
        "few kB.")
    code, _, err = run_config(capsys, tmp_path, "fbo", "\xff\xfe{}".encode("latin-1").decode("latin-1"))
    assert "is not UTF-8 text" in one_sentence(code, err) or "is not JSON" in one_sentence(code, err)


@pytest.mark.parametrize("argv, sentence", [
    (["fbo", "--agents", "１０"], "Argument --agents: invalid int value: '１０'."),
    (["fbo", "--iterations", "1_0"], "Argument --iterations: invalid int value: '1_0'."),
    (["hype", "--clients", "٣"], "Argument --clients: invalid int value: '٣'."),
], ids=["fullwidth", "underscore", "arabic-indic"])
def test_the_command_line_reads_ascii_numbers_only(argv, sentence, capsys, no_run):
    assert one_sentence(main(argv), capsys.readouterr().err) == sentence


def test_a_link_reads_ascii_numbers_only():
    clients = Param(10, int, low=1, high=1000)
    for text in ("１０", "٣", "1_0", "0x10", "inf", "nan", "1e999", "½"):
        with pytest.raises(ValueError):
            clients.decode(text)
    assert [clients.decode(t) for t in ("10", " 10 ", "1e1", "10.0", "+10")] == [10, 10, 10, 10, 10]
    assert clients.allowed("clients") == "clients is a whole number from 1 to 1,000"
    assert parse_number("2.5e-1") == 0.25


# ------------------------------------------------------------------ properties

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
           | st.sampled_from(["10", "1e3", "2.0", "１０", "٣", "dp-fts-de", "synthetic", "true", "", "inf"]))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
PROPERTY = settings(max_examples=60, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def assert_sentence_or_run(code: int, out: str, err: str) -> None:
    if code == 0:
        assert json.loads(out)["config"], out
    else:
        one_sentence(code, err)


@pytest.mark.parametrize("tool", list(CONFIG_TOOLS))
def test_random_json_in_a_config_file_gets_only_sentences(tool, capsys, tmp_path, no_run):
    cls = CONFIG_TOOLS[tool]

    @PROPERTY
    @given(st.dictionaries(st.sampled_from(sorted(public(cls))), JSON_VALUES, min_size=1, max_size=3))
    def check(values):
        code, out, err = run_config(capsys, tmp_path, tool, json.dumps(values, allow_nan=True))
        assert_sentence_or_run(code, out, err)
        if code == 0:
            config = json.loads(out)["config"]
            for name, s in specs(cls).items():
                if s.kind is int and config[name] is not None:
                    assert isinstance(config[name], int), (name, config[name])

    check()


@pytest.mark.parametrize("cls", ALL_CONFIGS, ids=[c.__name__ for c in ALL_CONFIGS])
def test_random_values_of_every_type_are_refused_by_the_configuration_in_a_sentence(cls):
    names = sorted(specs(cls))

    @PROPERTY
    @given(st.sampled_from(names), JSON_VALUES)
    def check(name, value):
        try:
            config = cls(**{name: value})
        except ConfigError as err:
            assert err.field is not None and len(str(err)) < 400, str(err)
            return
        kept = getattr(config, name)
        s = specs(cls)[name]
        if s.kind is int and kept is not None:
            assert isinstance(kept, int) and not isinstance(kept, bool)
        if s.kind in (int, float) and kept is not None:
            assert math.isfinite(kept)

    check()


def _link_params(cls) -> dict[str, Param]:
    return {name: param_of(s, dataclasses.asdict(cls())[name]) for name, s in public(cls).items()
            if not s.not_on_page}


LINK_TEXT = (JSON_VALUES.map(lambda v: v if isinstance(v, str) else json.dumps(v, allow_nan=True))
             | st.sampled_from(["１０", "٣", "1_000", "0x1f", "1e999", "-0", "2.0", "1e3", " 7 "]))


@pytest.mark.parametrize("cls", ALL_CONFIGS, ids=[c.__name__ for c in ALL_CONFIGS])
def test_random_link_values_are_typed_or_ignored_and_the_configuration_answers_in_a_sentence(cls):
    params = _link_params(cls)

    @PROPERTY
    @given(st.sampled_from(sorted(params)), LINK_TEXT)
    def check(name, text):
        param = params[name]
        try:
            value = param.decode(text)
        except ValueError:
            assert param.allowed(name).startswith(name)
            return
        if param.kind in (int, float) and value is not None:
            assert str(text).strip().isascii() and math.isfinite(value)
            assert isinstance(value, param.kind) and not isinstance(value, bool)
        try:
            cls(**{name: value})
        except ConfigError as err:
            assert err.field is not None

    check()
