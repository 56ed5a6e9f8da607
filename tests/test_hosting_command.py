"""`python -m hosting`: hosting mode without Docker, with the image's settings read from the Dockerfile.

The server it starts is visited in a browser by tests/browser/test_hosted.py; here, what it would run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from hosting import FOLDERS, hosted_environment, image_config

ROOT = Path(__file__).resolve().parents[1]

# Runs the image's command through Streamlit's own command line up to the point where it prints its URLs, with
# the lookup of the machine's external IP replaced by a recorder (nothing is bound, nothing is asked).
PRINT_URLS = """
import sys
from streamlit import net_util
from streamlit.web import bootstrap, cli
looked = []
net_util.get_external_ip = lambda: looked.append(True)
bootstrap.run = lambda *args, **kwargs: bootstrap._print_url(False)
bootstrap.run_asgi_app = lambda *args, **kwargs: bootstrap._print_url(False)     # serve.py is an st.App
cli.main.main(args=sys.argv[1:], prog_name="streamlit", standalone_mode=False)
print("LOOKED UP THE EXTERNAL IP" if looked else "did not look")
"""


def print_urls(env: dict[str, str]) -> str:
    _, command = image_config()
    assert command[0] == "streamlit"
    proc = subprocess.run([sys.executable, "-c", PRINT_URLS, *command[1:]], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_command_is_the_images_with_its_environment_and_this_machines_folders(tmp_path):
    image_env, command = image_config()
    env = dict(os.environ, DPBO_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("DPBO_DATA_DIR", None)
    proc = subprocess.run([sys.executable, "-m", "hosting", "--print", "--server.port=8080"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    printed = json.loads(proc.stdout)
    assert printed["command"] == ["python", "-m", *command, "--server.port=8080"]
    assert printed["env"] == {name: value for name, value in image_env.items() if name not in FOLDERS}
    assert len(printed["env"]) >= 12 and printed["env"]["DPBO_HOSTED"] == "1"
    # The image's /home/app folders exist only inside it: this machine's, else the engine's defaults.
    assert printed["folders"] == {"DPBO_CACHE_DIR": str(tmp_path / "cache"), "DPBO_DATA_DIR": None}


def test_the_environment_overrides_what_the_machine_had():
    env = hosted_environment({"DPBO_HOSTED": "0", "STREAMLIT_SERVER_HEADLESS": "false", "HOME": "/root",
                              "DPBO_DATA_DIR": "/srv/data"})
    assert env["DPBO_HOSTED"] == "1" and env["STREAMLIT_SERVER_HEADLESS"] == "true"
    assert env["HOME"] == "/root" and env["DPBO_DATA_DIR"] == "/srv/data" and "DPBO_CACHE_DIR" not in env


def test_the_images_command_does_not_look_up_the_external_ip():
    env = hosted_environment()
    assert "did not look" in print_urls(env)
    # Without the image's setting Streamlit, bound to 0.0.0.0 and headless, asks the internet for its address.
    env.pop("STREAMLIT_LOGGER_HIDE_WELCOME_MESSAGE")
    assert "LOOKED UP THE EXTERNAL IP" in print_urls(env)
