"""AppTest of the landing page (app.py): renders, links every page that exists, presets carry their name."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from engine.fbo.presets import PRESETS

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60  # seconds; the first run imports the engine, slow on a busy 2-core machine


@pytest.fixture(scope="module")
def landing():
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT).run()


def test_landing_renders_without_exception(landing):
    assert not landing.exception
    assert not landing.error
    assert landing.title[0].value == "DP-BO Explorer"


def test_landing_links_every_page_in_pages_folder(landing):
    linked = {link.proto.page for link in landing.get("page_link")}
    for path in sorted((ROOT / "pages").glob("*.py")):
        # pages/1_Federated_BO.py is served at /Federated_BO
        url = path.stem.split("_", 1)[1]
        assert url in linked, f"{path.name} has no link on the landing page"


def test_landing_presets_open_the_federated_bo_page_with_their_name(landing):
    if not (ROOT / "pages" / "1_Federated_BO.py").exists():
        pytest.skip("the federated BO page is missing")
    queries = {link.proto.query_string for link in landing.get("page_link") if link.proto.page == "Federated_BO"}
    for name in ("fig2a", "fig2c", "fig2d"):
        assert name in PRESETS
        assert f"preset={name}" in queries


def test_the_dashboard_watches_no_folder_so_a_venv_inside_the_project_is_not_walked():
    # The README's .venv sits inside the project folder; Streamlit's default watcher watched that folder
    # recursively (about 190 "Inotify queue overflowed" lines and a watchdog error). What a start of
    # `streamlit run app.py` in the project folder reads from .streamlit/config.toml decides the watcher.
    import subprocess
    import sys

    probe = ("from streamlit import config; config.get_config_options(force_reparse=True); "
             "from streamlit.watcher.path_watcher import get_default_path_watcher_class as c; "
             "print(config.get_option('server.fileWatcherType'), c().__name__)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["none", "NoOpPathWatcher"], out.stdout + out.stderr
