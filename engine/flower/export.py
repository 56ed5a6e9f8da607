"""Write a ready Flower app with the explorer's settings (needs no Flower).

:func:`export_app` writes into a folder::

    pyproject.toml            the settings as the run config, the app's components
    README.md                 the commands that run it on one machine or several
    <package>/server_app.py   the ServerApp (DP-FTS-DE strategy, or DP-HYPE through SecAgg+)
    <package>/client_app.py   the ClientApp, with the one hook to replace

    make_certificates.sh      the certificate authority, TLS and SuperNode keys (not with ``insecure``)

The apps import :mod:`engine.flower`: their ``pyproject.toml`` depends on the
engine's distribution (``dpbo-explorer[flower]``) at the version exported
with; the commands are in :mod:`engine.flower.deploy`. :func:`app_zip`
returns the same files as a zip archive for the dashboard's download button.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from engine.flower import deploy
from engine.flower.settings import check_tool, delta_note, run_config

FLWR_VERSION = deploy.FLWR_VERSION
PACKAGES = {"fbo": "dpftsde_app", "hype": "dphype_app"}
TITLES = {"fbo": "DP-FTS-DE (federated Bayesian optimisation)", "hype": "DP-HYPE (private hyperparameter vote)"}

CLIENT_FBO = '''"""ClientApp: one DP-FTS-DE agent per SuperNode (its index is the node's partition-id)."""

import numpy as np

from engine.flower.fbo_client import make_client_app

# The one hook: replace None by your objective, evaluate(x) -> float, x a numpy point of [0, 1]^D
# (D is the run config's "dim"), larger is better. With None each agent evaluates its own function
# of the explorer's synthetic task.
evaluate = None

app = make_client_app(evaluate)
'''

CLIENT_HYPE = '''"""ClientApp: one DP-HYPE client per SuperNode, its noisy vote summed with SecAgg+."""

import numpy as np

from engine.flower.hype_client import make_client_app

# The one hook: replace None by local_losses(p) -> numpy array of p losses (lower is better), e.g. train
# and validate each candidate on this node's own data. With None each client uses the simulated
# losses of the DP-HYPE paper (Sec. V-B), as the explorer does.
local_losses = None

app = make_client_app(local_losses)
'''

SERVER = '''"""ServerApp: {title}."""

from engine.flower.apps import make_server_app

app = make_server_app("{tool}")
'''

README = '''# {title} as a Flower app

{warning}Exported by the DP federated BO explorer (`python -m engine export flower --tool {tool}`). The run
config in `pyproject.toml` holds the explorer's settings; `flwr run ... --run-config "name=value"`
overrides any of them.

## What runs

{what}

Privacy: {delta}

{install}
{run}
{security}
## The hook

Edit `{package}/client_app.py`: {hook}
'''

WHAT = {
    "fbo": ("Every round the server (`engine.flower.fbo_strategy.DpFtsDeStrategy`) sends each agent the "
            "broadcast, the agents query one point each and reply with a vector omega; the server subsamples "
            "them with probability q, clips to S/sqrt(P), weights each sub-region, adds Gaussian noise "
            "z*phi_max*S/q and broadcasts (the engine's own server round). The subsample and the noise come from "
            "the server machine's operating system entropy, and each agent's own draws from its machine's: the "
            "run config's seed, which every node receives, seeds only the shared random features and the "
            "simulated objective. It stops releasing when the privacy budget is spent and prints the epsilon of "
            "the releases made."),
    "hype": ("Each client votes for its k best candidates and adds its share of the Gaussian noise, drawn "
             "from its machine's operating system entropy; Flower's "
             "SecAgg+ sums the votes so the server learns only the sum, and the server returns the "
             "candidate with the most noisy votes. The server log states how much SecAgg+'s quantisation "
             "changes the sum and the epsilon. A vote survives clients lost before or during it while two "
             "thirds of them (at least 2) remain and no more than the xi*n its noise is planned for were lost; "
             "with more losses the sum is not unmasked, nothing is released and nothing is spent, so a vote "
             "never spends more epsilon than its plan."),
}
HOOK = {"fbo": "set `evaluate` to your objective, `evaluate(x) -> float`.",
        "hype": "set `local_losses` to a function scoring the p candidates on the node's own data."}


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def app_files(tool: str, config, insecure: bool = False, dim: int | None = None) -> dict[str, str]:
    """The exported app as {relative path: text}; ``config`` is an FboConfig or a HypeConfig.

    Secured by default (TLS and SuperNode authentication, with ``make_certificates.sh``); ``insecure``
    writes the commands without either, under a warning. ``dim``: the dimension of the team's objective
    (DP-FTS-DE; default the synthetic task's).
    """
    check_tool(tool)
    settings = run_config(tool, config, dim)
    package = PACKAGES[tool]
    nodes = settings["agents"] if tool == "fbo" else settings["clients"]
    config_lines = "\n".join(f"{name} = {_toml_value(value)}" for name, value in settings.items())
    pyproject = f'''[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{package.replace("_", "-")}"
version = "1.0.0"
description = "{TITLES[tool]}, exported from the DP federated BO explorer"
license = "Apache-2.0"
dependencies = [{deploy.pyproject_dependencies()}]

[tool.hatch.build.targets.wheel]
packages = ["."]

[tool.flwr.app]
publisher = "dpbo-explorer"

[tool.flwr.app.components]
serverapp = "{package}.server_app:app"
clientapp = "{package}.client_app:app"

[tool.flwr.app.config]
{config_lines}
'''
    readme = README.format(title=TITLES[tool], tool=tool, what=WHAT[tool], delta=delta_note(tool, config, settings),
                           warning=deploy.INSECURE_WARNING + "\n\n" if insecure else "",
                           install=deploy.install_section(), run=deploy.run_section(nodes, insecure),
                           security=deploy.security_section(tool, nodes, insecure), package=package, hook=HOOK[tool])
    extra = {} if insecure else {"make_certificates.sh": deploy.certificate_script(nodes)}
    return {"pyproject.toml": pyproject, "README.md": readme, f"{package}/__init__.py": "",
            f"{package}/server_app.py": SERVER.format(title=TITLES[tool], tool=tool),
            f"{package}/client_app.py": CLIENT_FBO if tool == "fbo" else CLIENT_HYPE, **extra}


def export_app(tool: str, config, out: str | Path, insecure: bool = False, dim: int | None = None) -> list[str]:
    """Write the app into folder ``out`` (created if needed); returns the files written."""
    files = app_files(tool, config, insecure, dim)
    root = Path(out)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return [str(root / name) for name in files]


def app_zip(tool: str, config, dim: int | None = None) -> bytes:
    """The app as a zip archive (one folder named after the app's package)."""
    files = app_files(tool, config, dim=dim)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(f"{PACKAGES[tool]}/{name}", text)
    return buffer.getvalue()
