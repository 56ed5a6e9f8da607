"""The distribution's metadata (pyproject.toml): ranges that hold the locked versions, extras for what the engine
alone does not need, the ``dpbo`` command, and a one-sentence hint when an optional dependency is missing.
Building and installing the wheel itself: tests/test_install.py."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

from engine import cli

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# Pinned in requirements.txt only so that the dashboard runs on versions Flower also accepts: Streamlit's and
# Flower's own dependencies, not the project's.
TRANSITIVE = {"protobuf", "packaging", "starlette", "uvicorn", "websockets", "certifi"}


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _pins(path: Path) -> dict[str, str]:
    return {_name(m.group(1)): m.group(2)
            for m in re.finditer(r"^([A-Za-z0-9._-]+)(?:\[[^\]]*\])?==([^\s;#\\]+)", path.read_text(), re.M)}


def _requirements() -> list[tuple[str, Requirement]]:
    """(where, requirement) of every dependency of the distribution (the engine's and each extra's)."""
    found = [("dependencies", Requirement(text)) for text in PROJECT["dependencies"]]
    for extra, texts in PROJECT["optional-dependencies"].items():
        found += [(f"[{extra}]", Requirement(text)) for text in texts]
    return [(where, r) for where, r in found if _name(r.name) != "dpbo-explorer"]


def test_the_locked_and_pinned_versions_fall_inside_the_declared_ranges():
    pinned = {**_pins(ROOT / "requirements-dev.txt"), **_pins(ROOT / "requirements.lock")}
    for where, requirement in _requirements():
        version = pinned.get(_name(requirement.name))
        assert version is not None, f"{requirement.name} ({where}) is pinned nowhere: add it to requirements.txt"
        assert requirement.specifier.contains(version, prereleases=True), (
            f"pyproject.toml {where} asks for {requirement}, but the lock installs {version}")


def test_every_pinned_runtime_package_is_a_dependency_or_an_extra():
    declared = {_name(r.name) for _, r in _requirements()}
    runtime = set(_pins(ROOT / "requirements.txt")) | {"flwr"}
    missing = runtime - declared - TRANSITIVE
    assert not missing, f"requirements.txt pins {sorted(missing)}, which pyproject.toml neither requires nor offers"


def test_the_pinned_websockets_and_uvicorn_are_a_pair_streamlit_does_not_warn_about():
    # Streamlit warned at every start: "Installed websockets 17.4 with uvicorn 0.49.0 can abort the /_stcore/stream
    # handshake" (websockets was not pinned; Flower holds uvicorn below 0.50). Its own test of the pair decides.
    from streamlit.web.server.starlette import starlette_server as server

    for path in (ROOT / "requirements.txt", ROOT / "requirements.lock"):
        pins = _pins(path)
        assert "websockets" in pins and "uvicorn" in pins, f"{path.name} pins no websockets or no uvicorn"
        affected = server._websockets_uses_latin1_header_decode(pins["websockets"])  # noqa: SLF001
        old_uvicorn = server.is_version_less_than(pins["uvicorn"], "0.52.0")
        assert not (affected and old_uvicorn), (path.name, pins["websockets"], pins["uvicorn"])


def test_the_engine_alone_needs_no_dashboard_dask_or_flower():
    core = {_name(Requirement(text).name) for text in PROJECT["dependencies"]}
    assert not core & {"streamlit", "dask", "distributed", "flwr", "pyarrow", "plotly"}, core
    extras = PROJECT["optional-dependencies"]
    assert {"dashboard", "dask", "flower", "plots"} <= set(extras)
    assert PROJECT["scripts"] == {"dpbo": "engine.cli:main"}


def test_a_missing_optional_dependency_is_one_sentence_naming_its_extra(monkeypatch, capsys):
    from engine.cli import privacy

    def run(args):
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

    monkeypatch.setattr(privacy, "run", run)
    assert cli.main(["privacy", "--q", "0.5", "--z", "1", "--steps", "2", "--delta", "1e-5"]) == 2
    err = capsys.readouterr().err
    assert err == 'error: This command needs pyarrow, which the engine-only install leaves out: install the extra ' \
                  '"dask" (in the project\'s checkout: pip install ".[dask]").\n'


def test_the_lock_holds_versions_the_pinned_flower_accepts():
    # The exported Flower apps install "dpbo-explorer[flower]" with flwr at requirements-dev.txt's version on top of
    # the lock's packages (tests/test_install.py): a locked version Flower refuses makes that install impossible
    # (the lock once held certifi 2026.10.18, below Flower 1.42's certifi >= 2026.10.19).
    import importlib.metadata as metadata

    import pytest

    try:
        flower = metadata.distribution("flwr")
    except metadata.PackageNotFoundError:
        pytest.skip("Flower (flwr) is not installed")
    assert flower.version == _pins(ROOT / "requirements-dev.txt")["flwr"]
    locked = _pins(ROOT / "requirements.lock")
    refused = []
    for text in flower.requires or []:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        version = locked.get(_name(requirement.name))
        if version is not None and not requirement.specifier.contains(version, prereleases=True):
            refused.append(f"{requirement} (the lock: {version})")
    assert not refused, f"Flower {flower.version} refuses the lock's {refused}"
