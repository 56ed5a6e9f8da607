"""Every preset a hosted explorer offers fits the hosted limits (the Docker image's environment), priced as its page
prices it, in milliseconds: the Federated BO page's paper presets (fewer runs per line where the host needs it, a
preset too large even with one run not offered, with a sentence), the Privacy audit's mechanisms at their own
default trials, and the Paper reproduction's parts with their table's build. DP-HYPE's, PO-GP-UCB's, the Teaching
view's and the Trade-off explorer's defaults and presets are held to the same limits in tests/test_limits.py;
the browser walk that opens every page and preset is tests/browser/test_acceptance.py.
"""

from __future__ import annotations

import pytest

from engine.fbo.plan import lines_cost
from engine.fbo.variants import PRESET_RUNS, build_variants
from engine.limits import HostLimits, check
from engine.validation import ConfigError
from hosting import image_config
from tests.server_watch import page
from ui.fbo import controls as fbo_controls

LIMITS = ("DPBO_MAX_SECONDS", "DPBO_MAX_MEMORY_MB", "DPBO_MAX_WORKERS", "DPBO_MAX_RUNS", "DPBO_MAX_UPLOAD_ROWS")


@pytest.fixture
def image_limits(monkeypatch) -> HostLimits:
    """The image's environment: hosting mode and its limits (the image sets none of its own: the defaults)."""
    image_env, _ = image_config()
    for name in LIMITS:
        monkeypatch.delenv(name, raising=False)
    for name, value in image_env.items():
        if name == "DPBO_HOSTED" or name in LIMITS:
            monkeypatch.setenv(name, value)
    return HostLimits.from_env()


def _first_visit_cost(values: dict):
    """A comparison's price as a first visitor's Run pays it: its real task's table built first."""
    return lines_cost(tuple(cfg for _, cfg in build_variants(values)), tables_ready=False)


def test_every_federated_bo_preset_is_offered_within_the_hosts_limits(image_limits):
    assert fbo_controls.offered_presets() == fbo_controls.PAGE_PRESETS
    fewer = []
    for name in fbo_controls.PAGE_PRESETS:
        values = fbo_controls.hosted_preset_values(name)
        check(_first_visit_cost(values), image_limits)
        if values["runs"] < PRESET_RUNS:       # fewer runs only where one more would be refused
            fewer.append(name)
            with pytest.raises(ConfigError):
                check(_first_visit_cost(dict(values, runs=values["runs"] + 1)), image_limits)
            assert fbo_controls.preset_size_note(name, values).startswith(
                f"On this server the preset runs {values['runs']} run")
        else:
            assert fbo_controls.preset_size_note(name, values) is None
    # The one that opened on a refusal (16 lines, 3 runs each: 3.3 min against 2 min) now fits with fewer runs.
    assert "fts2a" in fewer


def test_a_preset_too_large_for_a_stricter_host_is_not_offered_and_its_link_says_so(monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.setenv("DPBO_MAX_SECONDS", "30")
    strict = HostLimits.from_env()
    offered = fbo_controls.offered_presets()
    assert "fts2a" not in offered and set(offered) < set(fbo_controls.PAGE_PRESETS)
    for name in offered:
        check(_first_visit_cost(fbo_controls.hosted_preset_values(name)), strict)
    for name in set(fbo_controls.PAGE_PRESETS) - set(offered):
        with pytest.raises(ConfigError):
            check(_first_visit_cost(fbo_controls.hosted_preset_values(name) | {"runs": 1}), strict)
    at = page("Federated_BO", {"preset": "fts2a"})
    at.run()
    assert not at.exception and not [box.value for box in at.error]
    assert any("Ignored preset=fts2a from the link: that paper preset is too large for this server's limits"
               in box.value for box in at.warning)
    assert any("Not offered here" in str(caption.value) and "FTS paper Fig. 2a" in str(caption.value)
               for caption in at.sidebar.caption)


def test_every_audit_mechanism_opens_within_the_hosts_limits(image_limits):
    from engine.flower.audit_config import flower_installed
    from ui.audit import controls as audit

    for mechanism in audit.PAGE_MECHANISMS:
        if mechanism == "flower" and not flower_installed():
            continue
        values = dict({name: param.default for name, param in audit.PARAMS.items()}, mechanism=mechanism,
                      trials=audit.default_trials(mechanism))
        _, price = audit.config_of(values)
        check(price.cost, image_limits)
    # A Flower strategy's game at the page's shared default (200,000 trials) was refused: 5.4 min.
    with pytest.raises(ConfigError):
        audit.config_of(dict({name: param.default for name, param in audit.PARAMS.items()}, mechanism="flower"))


def test_a_stricter_host_starts_each_audit_with_the_trials_it_allows(monkeypatch):
    """The probe's 30 s: a Flower strategy's 20,000 trials (about 37 s) are refused there, so the page starts it
    with the most of its fewer defaults that fit; the other mechanisms keep theirs."""
    from engine.flower.audit_config import flower_installed
    from ui.audit import controls as audit

    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.setenv("DPBO_MAX_SECONDS", "30")
    defaults = {name: param.default for name, param in audit.PARAMS.items()}
    for mechanism in audit.PAGE_MECHANISMS:
        if mechanism == "flower" and not flower_installed():
            continue
        trials = audit.default_trials(mechanism)
        _, price = audit.config_of(dict(defaults, mechanism=mechanism, trials=trials))
        check(price.cost, HostLimits.from_env())
        if trials != audit.MECHANISM_TRIALS.get(mechanism, audit.PARAMS["trials"].default):
            more = max(t for t in (*audit.FEWER_TRIALS, audit.MECHANISM_TRIALS.get(mechanism, 0)) if t > trials)
            with pytest.raises(ConfigError):
                audit.config_of(dict(defaults, mechanism=mechanism, trials=more))
    if flower_installed():
        assert audit.default_trials("flower") < audit.MECHANISM_TRIALS["flower"]


def test_the_audit_page_loads_each_mechanisms_own_trials(image_limits):
    from engine.flower.audit_config import StrategyAudit
    from ui.audit import controls as audit

    at = page("Privacy_audit", {"mechanism": "flower"})
    at.run()
    assert not at.exception and not [box.value for box in at.error]
    assert at.session_state["audit_trials"] == StrategyAudit().trials != audit.PARAMS["trials"].default
    at.radio(key="audit_mechanism").set_value("hype-votes").run()
    assert at.session_state["audit_trials"] == audit.PARAMS["trials"].default
    at.number_input(key="audit_trials").set_value(30_000).run()
    at.radio(key="audit_mechanism").set_value("flower").run()
    assert at.session_state["audit_trials"] == 30_000          # a number the visitor typed stays


def test_every_reproduction_part_runs_within_the_hosts_limits(image_limits, tmp_path, monkeypatch):
    """A part's small run fits; its table's build, a job of its own, is priced on its own and fits too (a fresh
    cache: the largest build, the EMNIST stand-in's 50 agents, is priced 110 s and measured 68 reference
    seconds)."""
    from engine.reproduce import PART_SPECS, PARTS, small_run_configs
    from ui.kit.table_build import build_price, build_refusal
    from ui.reproduction.controls import PARAMS

    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    for part in PARTS:
        configs = small_run_configs(PART_SPECS[part], PARAMS["runs"].default, PARAMS["seed"].default)
        check(lines_cost(tuple(cfg for _, cfg in configs), objectives_built=True), image_limits)
        assert build_refusal(configs[0][1]) is None, part
        check(build_price(configs[0][1]).cost, image_limits)


@pytest.mark.landmine
def test_a_table_build_above_the_hosts_limit_turns_run_off_with_a_sentence(image_limits, data_dir, tmp_path,
                                                                          monkeypatch):
    """A host allowing 50 s: the landmine part's small run fits (48 s) but its 29-field table's build, priced 58 s,
    does not: Run is off and a plain sentence beside it says why."""
    from engine.reproduce import PART_SPECS, small_run_configs
    from ui.kit.table_build import build_price, build_refusal
    from ui.reproduction.controls import PARAMS

    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("DPBO_MAX_SECONDS", "50")
    configs = small_run_configs(PART_SPECS["landmine"], PARAMS["runs"].default, PARAMS["seed"].default)
    check(lines_cost(tuple(cfg for _, cfg in configs), objectives_built=True), HostLimits.from_env())
    assert build_refusal(configs[0][1]) is not None
    with pytest.raises(ConfigError):
        build_price(configs[0][1])
    at = page("Paper_reproduction", {"part": "landmine"})
    at.run()
    assert not at.exception and not [box.value for box in at.error]
    assert at.button(key="repro_run").disabled
    assert any("needs the landmine table of scores built first" in str(c.value) for c in at.caption), \
        [c.value for c in at.caption]


def test_a_reproduction_part_too_large_for_a_stricter_host_says_so_in_a_sentence(monkeypatch, tmp_path):
    """The probe's 30 s: a part's small run at the page's default runs is refused by its price; the page says so
    in a plain sentence beside the disabled Run, above the stored results, not in an error box. Runs the visitor
    chose are refused at their control."""
    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.setenv("DPBO_MAX_SECONDS", "30")
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    at = page("Paper_reproduction", {"part": "landmine"})
    at.run()
    assert not at.exception and not [box.value for box in at.error]
    assert at.button(key="repro_run").disabled
    assert any("A small run of this part with 4 runs per setting is more than the 30 s" in str(c.value)
               for c in at.caption)
    at.number_input(key="repro_runs").set_value(8).run()
    assert any("30 s" in box.value for box in at.error)          # the visitor's own runs: at the control


def test_the_margins_leave_every_pages_default_run_within_the_hosted_limits(image_limits):
    """The price margins (engine.limits.core.MARGINS; docs/hosting.md, "Prices and their margins") are not so wide
    that a page's default run is refused on the hosted explorer: each page's default, priced as the page prices it,
    fits the image's limits, and the margins are the ones the docs state."""
    from pathlib import Path

    from engine.fbo.teaching import teaching_config
    from engine.fbo.variants import COMPARISON_DEFAULTS
    from engine.limits import accountant_cost, fbo_cost, hype_cost, pogpucb_cost
    from engine.limits.core import MARGINS
    from engine.reproduce import PART_SPECS, small_run_configs
    from engine.sweep import spec_cost
    from ui.audit import controls as audit_controls
    from ui.fbo import teaching_controls
    from ui.hype import controls as hype_controls
    from ui.pogpucb import controls as pogpucb_controls
    from ui.privacy import controls as privacy_controls
    from ui.reproduction import controls as reproduction_controls
    from ui.sweep import controls as sweep_controls

    def defaults(params) -> dict:
        return {name: param.default for name, param in params.items()}

    teaching = {k: v for k, v in defaults(teaching_controls.PARAMS).items() if k != "present"}
    privacy = defaults(privacy_controls.PARAMS)
    _, pogpucb_lines = pogpucb_controls.configs(defaults(pogpucb_controls.PARAMS))
    pogpucb_costs = [pogpucb_cost(cfg) for _, cfg in pogpucb_lines]
    reproduction = defaults(reproduction_controls.PARAMS)
    runs = small_run_configs(PART_SPECS[reproduction["part"]], reproduction["runs"], reproduction["seed"])
    pages = {
        "Federated BO": _first_visit_cost(dict(COMPARISON_DEFAULTS)),
        "Teaching view": fbo_cost(teaching_config(**teaching), teaching["agents"]),
        "Privacy accountant": accountant_cost(privacy["steps"], ("ma", "rdp", "pld"), z=privacy["z"]),
        "DP-HYPE": hype_cost(hype_controls.config_of(defaults(hype_controls.PARAMS), priced=False)),
        "PO-GP-UCB": sum(pogpucb_costs[1:], pogpucb_costs[0]),
        "Trade-off explorer": spec_cost(sweep_controls.spec_of(defaults(sweep_controls.PARAMS)), executor="joblib",
                                        workers=2),
        "Privacy audit": audit_controls.config_of(defaults(audit_controls.PARAMS))[1].cost,
        "Paper reproduction": lines_cost(tuple(cfg for _, cfg in runs), objectives_built=True),
    }
    for name, cost in pages.items():
        check(cost, image_limits, what=f"The {name} page's default run")
    section = (Path(__file__).resolve().parents[1] / "docs" / "hosting.md").read_text().split(
        "## Prices and their margins", 1)[1].split("\n## ", 1)[0]
    stated = {"hype": "**1.6**"}
    assert all(stated.get(tool, "| 1.0") in section for tool in MARGINS), MARGINS
    assert sorted(tool for tool, margin in MARGINS.items() if margin != 1.0) == sorted(stated)
