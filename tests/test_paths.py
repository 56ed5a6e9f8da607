"""One place for the landmine data (issue 13, item 3): the same order for the app, the CLI and the tests."""

from __future__ import annotations

import json

from engine.cli import main
from engine.paths import DATA_DIR_ORDER, DEFAULT_DATA_DIR, PROJECT_ROOT, data_dir, data_dir_source
from tests import conftest


def test_the_order_is_data_dir_option_then_environment_then_the_project(tmp_path):
    assert data_dir(environ={}) == DEFAULT_DATA_DIR == PROJECT_ROOT / "data"
    assert data_dir(environ={"DPBO_DATA_DIR": str(tmp_path)}) == tmp_path
    assert data_dir(tmp_path / "explicit", environ={"DPBO_DATA_DIR": str(tmp_path)}) == tmp_path / "explicit"
    assert [data_dir_source(environ={}), data_dir_source(environ={"DPBO_DATA_DIR": "x"}),
            data_dir_source("y", environ={"DPBO_DATA_DIR": "x"})] == list(reversed(DATA_DIR_ORDER))


def test_the_tests_resolve_the_folder_as_the_engine_does():
    # No fallback of the tests' own (there used to be ../shared/datasets): whatever the app reads, the tests read.
    assert conftest.resolve_data_dir is data_dir
    assert "shared" not in open(conftest.__file__).read().split('"""', 2)[2]


def test_data_status_prints_the_folder_its_source_and_the_order(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DPBO_DATA_DIR", str(tmp_path))
    assert main(["data", "status", "--cache-dir", str(tmp_path / "cache")]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["data_dir"] == str(tmp_path) and status["data_dir_source"] == "DPBO_DATA_DIR"
    assert status["data_dir_order"] == list(DATA_DIR_ORDER)
    landmine = next(d for d in status["datasets"] if d["name"] == "landmine")
    assert not landmine["available"] and landmine["path"] == str(tmp_path / "landmine" / "LandmineData.mat")
    assert landmine["url"].endswith("LandmineData.zip")


def test_a_checkout_uses_its_own_folders_and_an_installed_engine_the_users(tmp_path):
    from engine import paths

    assert not paths.INSTALLED and paths.DEFAULT_CACHE_DIR == PROJECT_ROOT / "data" / "cache"
    assert paths.STORED_REPRODUCTION_DIR == PROJECT_ROOT / "data" / "reproduction"
    assert DATA_DIR_ORDER[-1] == "data/ in the project"
    # Installed: the distribution's metadata beside the package (tests/test_install.py installs the real wheel).
    assert not paths.is_installed(tmp_path)
    (tmp_path / "dpbo_explorer-0.1.0.dist-info").mkdir()
    assert paths.is_installed(tmp_path)


def test_the_users_folders_follow_xdg_and_each_platforms_convention(tmp_path):
    from engine.paths import user_folder

    home = {"HOME": str(tmp_path)}
    assert user_folder("data", home, "linux") == tmp_path / ".local" / "share" / "dpbo-explorer"
    assert user_folder("cache", home, "linux") == tmp_path / ".cache" / "dpbo-explorer"
    xdg = dict(home, XDG_DATA_HOME=str(tmp_path / "d"), XDG_CACHE_HOME=str(tmp_path / "c"))
    assert user_folder("data", xdg, "linux") == tmp_path / "d" / "dpbo-explorer"
    assert user_folder("cache", xdg, "linux") == tmp_path / "c" / "dpbo-explorer"
    # The XDG specification ignores a relative path.
    assert user_folder("cache", dict(home, XDG_CACHE_HOME="rel"), "linux") == tmp_path / ".cache" / "dpbo-explorer"
    assert user_folder("cache", home, "darwin") == tmp_path / "Library" / "Caches" / "dpbo-explorer"
    assert user_folder("data", dict(home, LOCALAPPDATA=str(tmp_path / "L")), "win32") == \
        tmp_path / "L" / "dpbo-explorer" / "data"
