"""Hosting mode without Docker: ``python -m hosting`` runs the Docker image's command with the image's settings.

The settings are written once, in the Dockerfile (its ``ENV`` lines and its ``CMD``); this module reads them
from there, so a host without Docker runs exactly what the image runs, and the browser tests and benchmarks
that replay the image (tests/browser/test_hosted.py, benchmarks/loopback.py) use the same reader.

Only the two folders differ from the image: the image's ``/home/app/...`` exist only inside it, so
``DPBO_CACHE_DIR`` and ``DPBO_DATA_DIR`` come from this machine's environment when set there, and otherwise
the engine's defaults apply (``data/cache/`` and ``data/`` in the project). Arguments after ``python -m
hosting`` go to ``streamlit run`` after the image's own, so they override them (e.g. ``--server.port=8080``).
``--print`` prints the environment and the command as JSON instead of starting the server.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parent
DOCKERFILE = ROOT / "Dockerfile"
# The image's folders, which this machine replaces with its own (or the engine's defaults).
FOLDERS = ("DPBO_CACHE_DIR", "DPBO_DATA_DIR")


def image_config(dockerfile: Path = DOCKERFILE) -> tuple[dict[str, str], list[str]]:
    """The Docker image's environment (its ENV lines) and command (its CMD), read from the Dockerfile."""
    text = Path(dockerfile).read_text().replace("\\\n", " ")
    env, command = {}, None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("ENV "):
            for item in shlex.split(line[4:]):
                name, _, value = item.partition("=")
                env[name] = value
        elif line.startswith("CMD "):
            command = json.loads(line[4:])
    if command is None:
        raise ValueError("the Dockerfile has no CMD")
    return env, command


def hosted_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) with the image's settings on top, the folders aside."""
    environ = dict(os.environ if environ is None else environ)
    image_env, _ = image_config()
    env = dict(environ, **{name: value for name, value in image_env.items() if name not in FOLDERS})
    return env


def hosted_command(extra: list[str] | tuple[str, ...] = ()) -> list[str]:
    """The image's command run by this interpreter (``python -m streamlit run app.py ...``), then ``extra``."""
    _, command = image_config()
    return [sys.executable, "-m", *command, *extra]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    env, command = hosted_environment(), hosted_command([a for a in argv if a != "--print"])
    if "--print" in argv:
        image_env, _ = image_config()
        print(json.dumps({"command": ["python", *command[1:]],
                          "env": {name: env[name] for name in image_env if name not in FOLDERS},
                          "folders": {name: env.get(name) for name in FOLDERS}}))
        return 0
    os.chdir(ROOT)              # the image's command runs in the project folder (its WORKDIR)
    os.execve(sys.executable, command, env)
    return 1                    # not reached: the server replaces this process


if __name__ == "__main__":
    sys.exit(main())
