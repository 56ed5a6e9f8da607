"""Hosting mode and the boundary: links are parsed with limits, nothing a visitor sets names a path or an
address, the Dask scheduler is the host's alone, worker counts are capped, and hosted sentences show no
server path (issue 12, findings 1, 2 and 5)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from urllib.parse import quote

import pytest
from streamlit.testing.v1 import AppTest

from benchmarks.loopback import FakeScheduler
from engine.audit import ServerAudit, VoteAudit
from engine.fbo import FboConfig
from engine.hosting import dask_scheduler, is_hosted
from engine.hype import HypeConfig
from engine.pogpucb import PoConfig
from engine.sweep import SweepSpec, get_adapter
from engine.sweep.spec import MAX_CELLS
from engine.sweep.toy import ToyConfig
from engine.validation import ConfigError
from ui.audit import controls as audit_controls
from ui.fbo import controls as fbo_controls
from ui.fbo import teaching_controls
from ui.hype import controls as hype_controls
from ui.pogpucb import controls as pogpucb_controls
from ui.privacy import controls as accountant_controls
from ui.reproduction import controls as reproduction_controls
from ui.sweep import controls as sweep_controls
from ui.kit.state import MAX_TEXT, Param

ROOT = Path(__file__).resolve().parents[1]
# Words that would make a setting a file path, a folder or a network address.
PATHLIKE = {"dir", "directory", "path", "file", "folder", "out", "output", "scheduler", "address", "url", "host",
            "port"}


def pathlike(names) -> list[str]:
    return [n for n in names if PATHLIKE & set(n.lower().split("_"))]


@pytest.mark.parametrize("text", ["1e999", "-1e999", "inf", "-inf", "nan", "NaN", "9" * 400, "1.5", "abc", "",
                                  "0x10", "1e308", "-1", "2.0000001", " 3 ", "1_000", "٣"])
def test_link_numbers_are_finite_whole_and_in_range_or_ignored(text):
    count = Param(5, int, low=1, high=1000)
    share = Param(0.5, float, low=0.0, high=1.0)
    for param in (count, share):
        try:
            value = param.decode(text)
        except ValueError:
            continue                      # ignored with a note, never an OverflowError or a traceback
        assert math.isfinite(value) and param.low <= value <= param.high
        if param.kind is int:
            assert isinstance(value, int)


def test_link_text_is_bounded_and_choices_are_checked():
    with pytest.raises(ValueError):
        Param("a", str).decode("x" * (MAX_TEXT + 1))
    with pytest.raises(ValueError):
        Param("ts", str, ("ts", "fts")).decode("rm -rf /")
    with pytest.raises(ValueError):
        Param(["ts"], list, ("ts", "fts")).decode("ts,evil")
    assert Param(None, float, optional=True, low=0.0, high=1.0).decode("none") is None


@pytest.mark.parametrize("config", [FboConfig, HypeConfig, PoConfig, ServerAudit, VoteAudit, ToyConfig, SweepSpec])
def test_no_configuration_has_a_path_or_address_field(config):
    names = [f.name for f in dataclasses.fields(config)]
    assert not pathlike(names), names


def test_no_page_control_or_link_names_a_path_or_address():
    names = set(fbo_controls.FBO_PARAMS) | set(hype_controls.PARAMS) | set(pogpucb_controls.PARAMS)
    names |= set(sweep_controls.PARAMS) | set(teaching_controls.PARAMS) | set(accountant_controls.PARAMS)
    names |= set(audit_controls.PARAMS) | set(reproduction_controls.PARAMS)
    assert not pathlike(names), sorted(names)


@pytest.mark.parametrize("tool", ["fbo", "hype", "pogpucb"])
@pytest.mark.parametrize("name", ["data_dir", "cache_dir", "out", "scheduler", "path"])
def test_a_sweep_setting_cannot_name_a_path_or_an_address(tool, name, tmp_path):
    outside = tmp_path / "outside"
    spec = SweepSpec(tool, base={name: str(outside), **({"mode": "data"} if tool == "hype" else {})},
                     axes=(("seed", (1,)),), runs=1)
    with pytest.raises(ConfigError) as err:
        spec.cells(get_adapter(tool))
    assert f"has no setting {name}" in str(err.value) and err.value.field == name
    assert not outside.exists()


def test_the_sweep_page_refuses_a_path_setting_from_a_link_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path / "cache"))
    outside = tmp_path / "outside"
    at = AppTest.from_file(str(ROOT / "pages" / "6_Tradeoff_explorer.py"), default_timeout=60)
    at.query_params.update(tool="hype", p1="epsilon", v1="1", p2="none", runs="1",
                           base=f"mode = data\nclients = 20\nrepetitions = 50\ncache_dir = {outside}")
    at.run()
    assert not at.exception
    assert any("has no setting cache_dir" in e.value for e in at.error)
    assert at.button(key="sw_run").disabled
    assert not outside.exists()


def test_a_huge_sweep_is_refused_before_its_cells_are_listed():
    with pytest.raises(ConfigError, match="cells; at most"):
        SweepSpec("toy", axes=(("x", tuple(range(1, 60))), ("y", tuple(range(60)))), runs=1)
    assert MAX_CELLS < 59 * 60


def test_a_link_cannot_make_the_server_connect_to_a_scheduler(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.delenv("DPBO_DASK_SCHEDULER", raising=False)
    monkeypatch.setenv("DPBO_CACHE_DIR", str(tmp_path))
    fake = FakeScheduler()
    try:
        at = AppTest.from_file(str(ROOT / "pages" / "6_Tradeoff_explorer.py"), default_timeout=120)
        at.query_params.update(executor="dask", scheduler=f"tcp://127.0.0.1:{fake.port}", v1="0.25", p2="none",
                               refs="", runs="1", workers="1", base="agents = 5\niterations = 2\nfeatures = 10")
        at.run()
        assert "dask" not in at.radio(key="sw_executor").options
        assert at.radio(key="sw_executor").value == "joblib"
        at.button(key="sw_run").click().run()
        assert not at.exception
        assert "sw_result" in at.session_state          # the sweep ran, on this machine
    finally:
        fake.close()
    assert fake.connections == 0


def test_the_dask_scheduler_is_the_hosts(monkeypatch):
    monkeypatch.setenv("DPBO_HOSTED", "1")
    monkeypatch.delenv("DPBO_DASK_SCHEDULER", raising=False)
    assert is_hosted() and dask_scheduler() is None and "dask" not in sweep_controls.executors()
    monkeypatch.setenv("DPBO_DASK_SCHEDULER", "tcp://10.0.0.5:8786")
    assert dask_scheduler() == "tcp://10.0.0.5:8786" and "dask" in sweep_controls.executors()
    monkeypatch.setenv("DPBO_HOSTED", "0")
    monkeypatch.delenv("DPBO_DASK_SCHEDULER")
    assert not is_hosted() and "dask" in sweep_controls.executors()    # locally: a loopback cluster


def test_worker_counts_are_capped_by_the_host(monkeypatch, tmp_path):
    from engine.cli import main
    from engine.sweep import spec_cost

    monkeypatch.setenv("DPBO_MAX_WORKERS", "2")
    spec = SweepSpec("toy", axes=(("x", (1.0, 2.0)),), runs=1)
    with pytest.raises(ConfigError, match="at most 2 worker processes") as err:
        spec_cost(spec, executor="joblib", workers=16)
    assert err.value.field == "workers"
    assert main(["sweep", "--tool", "toy", "--grid", "x=1,2", "--workers", "16", "--out",
                 str(tmp_path / "t.csv")]) == 2
    at = AppTest.from_file(str(ROOT / "pages" / "6_Tradeoff_explorer.py"), default_timeout=60)
    at.query_params["workers"] = "64"
    at.run()
    assert not at.exception and at.number_input(key="sw_workers").value == 2


def test_hosted_sentences_name_no_server_path(monkeypatch, tmp_path):
    from engine.objectives.datasets import check_landmine_file
    from ui.kit.run_loop import failure_message

    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path / "secret-data"))
    monkeypatch.setenv("DPBO_HOSTED", "1")
    with pytest.raises(ConfigError) as err:
        check_landmine_file()
    assert str(tmp_path) not in str(err.value) and "not installed" in str(err.value)
    hosted = failure_message(FileNotFoundError(f"{tmp_path}/x.npz"))
    assert str(tmp_path) not in hosted and "FileNotFoundError" not in hosted
    monkeypatch.setenv("DPBO_HOSTED", "0")
    assert str(tmp_path) in failure_message(FileNotFoundError(f"{tmp_path}/x.npz"))     # locally: the details


def test_hosting_mode_turns_streamlit_error_details_off(monkeypatch):
    import streamlit as st

    monkeypatch.setenv("DPBO_HOSTED", "1")
    before = st.get_option("client.showErrorDetails")
    try:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
        assert not at.exception
        assert st.get_option("client.showErrorDetails") == "none"
    finally:
        st.set_option("client.showErrorDetails", before)


def test_the_image_runs_hosted_read_only_without_tests(tmp_path):
    from tests.browser.conftest import image_config

    env, command = image_config()
    assert env["DPBO_HOSTED"] == "1" and env["STREAMLIT_CLIENT_SHOW_ERROR_DETAILS"] == "none"
    assert int(env["STREAMLIT_SERVER_MAX_UPLOAD_SIZE"]) > 0
    text = (ROOT / "Dockerfile").read_text()
    assert "--require-hashes -r requirements.lock" in text and "USER app" in text and "chmod -R a-w" in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {"tests", "benchmarks", ".ci"} <= set(ignored)
    lock = (ROOT / "requirements.lock").read_text()
    pins = [line.split("==")[0].lower() for line in lock.splitlines() if "==" in line and not line.startswith("#")]
    direct = [line.split("==")[0].split("[")[0].lower() for line in (ROOT / "requirements.txt").read_text().splitlines()
              if "==" in line]
    assert set(direct) <= set(pins) and lock.count("--hash=sha256:") >= len(pins)
    assert quote(command[0]) == "streamlit"
