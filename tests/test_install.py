"""The engine as a researcher installs it: the wheel built from the project, installed without the dashboard in
a fresh virtual environment (no Streamlit, no Dask, no Flower, not the ``ui`` package), then the ``dpbo``
command, the data and cache folders, the stored reproductions and the worked notebook there.

The wheel is built from a copy of the files it is made of (pip's build isolation fetches the build backend from
the configured index); its dependencies install at the lock's versions (requirements.lock as constraints), from
the index pip is configured with. About a minute in all; ``-m "not install"`` deselects it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.reproduce.stored import figure_verdicts
from tests import api_checks
from tests.notebook_cells import script
from tests.test_api import check_notebook_output
from tests.test_api_runs import check as check_api_facts

pytestmark = pytest.mark.install

ROOT = Path(__file__).resolve().parents[1]
# What the wheel is built from (pyproject.toml and setup.py say what goes in).
SOURCES = ("pyproject.toml", "setup.py", "README.md", "docs/package.md", "engine", "dpbo", "data/reproduction")
# The documents whose install lines name the wheel a build makes.
INSTALL_DOCS = ("docs/api.md", "docs/notebook.md", "docs/tuning.md", "docs/package.md")


# pip's own output off, and no compiling of every installed module to bytecode at install time (three quarters of
# an install's CPU time here): Python compiles what a program imports when it first imports it.
PIP_OPTIONS = ("--quiet", "--disable-pip-version-check", "--no-compile")


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)


def _constraints(folder: Path) -> Path:
    """requirements.lock's versions (without hashes) as a pip constraints file."""
    pins = re.findall(r"^([A-Za-z0-9._-]+==[^\s\\]+)", (ROOT / "requirements.lock").read_text(), re.M)
    path = folder / "constraints.txt"
    path.write_text("\n".join(pins) + "\n")
    return path


class Installed:
    """The fresh virtual environment, and a clean environment to run its programs in (a home of their own)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.venv = folder / "venv"
        self.bin = self.venv / "bin"
        self.home = folder / "home"
        self.workdir = folder / "work"
        for path in (self.home, self.workdir):
            path.mkdir()
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("DPBO_", "XDG_", "PYTHON", "VIRTUAL_ENV"))}
        self.env.update(HOME=str(self.home), PATH=f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
                        PYTHONNOUSERSITE="1")

    def run(self, argv, extra_env=None, timeout=300) -> subprocess.CompletedProcess:
        env = dict(self.env, **(extra_env or {}))
        return _run(argv, cwd=self.workdir, env=env, timeout=timeout)

    def python(self, code: str, extra_env=None) -> subprocess.CompletedProcess:
        return self.run([self.bin / "python", "-c", code], extra_env)

    @property
    def site_packages(self) -> Path:
        return Path(self.python("import sysconfig; print(sysconfig.get_paths()['purelib'])").stdout.strip())


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    folder = tmp_path_factory.mktemp("install")
    source = folder / "source"
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    pip_env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "PIP_REQUIRE"))}
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", folder / "dist",
                  source], env=pip_env, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    [wheel] = (folder / "dist").glob("dpbo_explorer-*.whl")
    made = _run([sys.executable, "-m", "venv", folder / "venv"], timeout=300)
    assert made.returncode == 0, made.stderr
    venv_python = folder / "venv" / "bin" / "python"
    # The engine with Plotly for the notebook's figure: "dpbo-explorer[plots]", nothing of the dashboard.
    done = _run([venv_python, "-m", "pip", "install", *PIP_OPTIONS, "-c", _constraints(folder), f"{wheel}[plots]"],
                env=pip_env, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return Installed(folder)


def test_the_engine_installs_without_the_dashboard(installed):
    for module in ("streamlit", "dask", "distributed", "flwr", "pyarrow", "ui"):
        proc = installed.python(f"import {module}")
        assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr, f"{module} is installed"
    where = installed.python("import engine, dpbo; print(engine.__file__); print(dpbo.__file__)").stdout.split()
    assert all(Path(p).is_relative_to(installed.site_packages) for p in where), where
    assert (installed.bin / "dpbo").is_file()


def test_the_dpbo_command_runs_fbo_and_privacy(installed):
    helped = installed.run(["dpbo", "fbo", "--help"])
    assert helped.returncode == 0 and helped.stdout.startswith("usage: dpbo fbo"), helped.stderr
    assert "--algorithm" in helped.stdout
    listed = installed.run(["dpbo", "--help"])
    assert listed.returncode == 0 and all(tool in listed.stdout for tool in ("fbo", "privacy", "sweep", "export"))
    ran = installed.run(["dpbo", "fbo", "--algorithm", "dp-fts-de", "--agents", "10", "--iterations", "3",
                         "--runs", "2", "--features", "20"])
    assert ran.returncode == 0, ran.stderr
    result = json.loads(ran.stdout)
    assert len(result["curve"]) == 4 and result["config"]["agents"] == 10 and result["epsilon"][-1] > 0
    accounted = installed.run(["dpbo", "privacy", "--q", "0.25", "--z", "1", "--steps", "40", "--agents", "200",
                               "--accountant", "ma", "--delta-rule", "paper"])
    assert accounted.returncode == 0, accounted.stderr
    assert round(json.loads(accounted.stdout)["epsilon"], 4) == 9.9085       # docs/cli.md's number
    bad = installed.run(["dpbo", "fbo", "--q", "1.5"])
    assert bad.returncode == 2 and bad.stderr == "error: q must be in (0, 1], got 1.5.\n"


def test_a_sweep_says_which_extra_it_needs_before_running(installed):
    proc = installed.run(["dpbo", "sweep", "--tool", "fbo", "--grid", "q=0.5", "--set", "iterations=2", "--runs",
                          "1", "--executor", "local", "--out", "t.csv", "--quiet"])
    assert proc.returncode == 2
    assert proc.stderr == ('error: This command needs pyarrow, which the engine-only install leaves out: '
                           'install the extra "dask" (in the project\'s checkout: pip install ".[dask]").\n')


def test_data_and_cache_folders_are_the_users_not_site_packages(installed):
    proc = installed.run(["dpbo", "data", "status"])
    assert proc.returncode == 0, proc.stderr
    status = json.loads(proc.stdout)
    assert status["data_dir"] == str(installed.home / ".local" / "share" / "dpbo-explorer")
    assert status["cache_dir"] == str(installed.home / ".cache" / "dpbo-explorer")
    assert status["data_dir_source"] == "the user's data folder"
    landmine = next(d for d in status["datasets"] if d["name"] == "landmine")
    assert landmine["path"].startswith(status["data_dir"])
    xdg = {"XDG_DATA_HOME": str(installed.folder / "xdg-data"), "XDG_CACHE_HOME": str(installed.folder / "xdg")}
    status = json.loads(installed.run(["dpbo", "data", "status"], xdg).stdout)
    assert (status["data_dir"], status["cache_dir"]) == (xdg["XDG_DATA_HOME"] + "/dpbo-explorer",
                                                         xdg["XDG_CACHE_HOME"] + "/dpbo-explorer")
    mine = {"DPBO_DATA_DIR": str(installed.folder / "mine"), "DPBO_CACHE_DIR": str(installed.folder / "c"), **xdg}
    status = json.loads(installed.run(["dpbo", "data", "status"], mine).stdout)
    assert (status["data_dir"], status["cache_dir"]) == (mine["DPBO_DATA_DIR"], mine["DPBO_CACHE_DIR"])
    # Nothing was written inside the installation.
    assert not (installed.site_packages / "data").exists()


def test_figure_verdicts_come_with_the_package(installed):
    code = ("import json, dpbo; v = dpbo.figure_verdicts('fig3a'); "
            "print(json.dumps({'headline': v.headline, 'runs': v.runs, 'claims': v.claims}))")
    proc = installed.python(code)
    assert proc.returncode == 0, proc.stderr
    here = figure_verdicts("fig3a")
    assert json.loads(proc.stdout) == json.loads(json.dumps({"headline": here.headline, "runs": here.runs,
                                                             "claims": here.claims}))


def test_the_worked_notebook_runs_where_the_engine_was_installed(installed):
    (installed.workdir / "notebook.py").write_text(script())
    proc = installed.run([installed.bin / "python", "notebook.py"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)                  # the notebook's output, shown with -s
    check_notebook_output(proc.stdout, installed.workdir)


def test_the_wheel_is_typed_and_its_description_works_as_written(installed):
    for package in ("engine", "dpbo"):
        assert (installed.site_packages / package / "py.typed").is_file(), f"{package} has no py.typed"
    [wheel] = (installed.folder / "dist").glob("dpbo_explorer-*.whl")
    code = "import importlib.metadata as m; print(m.metadata('dpbo-explorer').get_payload())"
    description = installed.python(code).stdout
    assert description.startswith("# dpbo-explorer"), description[:200]
    # Nothing it links can fail to resolve where the wheel goes: no link to a file it does not carry.
    links = re.findall(r"\]\(([^)]+)\)|href='([^']+)'|href=\"([^\"]+)\"", description)
    assert all(target.startswith("https://") for pair in links for target in pair if target), links
    # Every document's install lines name the wheel the build makes.
    for doc in INSTALL_DOCS:
        named = set(re.findall(r"dpbo_explorer-[^\s\[\"]+\.whl", (ROOT / doc).read_text()))
        assert named == {wheel.name}, f"{doc} names {named}, the build makes {wheel.name}"
    # Its example runs as written.
    [example] = re.findall(r"^```python\n(.*?)^```$", description, re.M | re.S)
    (installed.workdir / "description.py").write_text(example)
    ran = installed.run([installed.bin / "python", "description.py"])
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert len(ran.stdout.split()) >= 3


def test_the_api_keeps_its_promises_where_the_engine_was_installed(installed):
    # Best points and history, a callback that stops, a KeyboardInterrupt mid-run, refusals priced before any
    # work, one ConfigError sentence from the call made for every bad input, the objective's own errors.
    shutil.copy2(Path(api_checks.__file__), installed.workdir / "api_checks.py")
    proc = installed.run([installed.bin / "python", "api_checks.py"])
    facts = json.loads(proc.stdout.splitlines()[0])
    check_api_facts(facts)
    # The last call is uncaught: what a user sees is their own frame, the API's boundary and one sentence.
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    frames = re.findall(r'^  File "([^"]+)", line \d+, in (\S+)$', proc.stderr, re.M)
    assert [Path(f).name for f, _ in frames] == ["api_checks.py", "validation.py"], proc.stderr
    assert frames[1][1] == "run_fbo" and Path(frames[1][0]).is_relative_to(installed.site_packages)
    assert lines[-1] == ("engine.validation.ConfigError: noise (the standard deviation of the observation noise) "
                         "must be a finite number >= 0, got -1."), proc.stderr


def test_the_tuning_example_runs_where_the_engine_was_installed(installed):
    (installed.workdir / "tuning.py").write_text(script(ROOT / "docs" / "tuning.md"))
    proc = installed.run([installed.bin / "python", "tuning.py"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)                  # the example's output, shown with -s
    check_tuning_output(proc.stdout)


def check_tuning_output(out: str) -> None:
    """What docs/tuning.md prints: epsilon, each hospital's (C, gamma) of both searches, their test accuracy."""
    assert re.search(r"^DP-FTS-DE: epsilon = 4\.37 at delta = 1e-05 after 10 releases$", out, re.M), out
    rows = re.findall(r"^(DP-FTS-DE \(private\)|FTS-DE \(not private\))\s+(\d)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+"
                      r"([\d.]+)$", out, re.M)
    assert len(rows) == 10 and {int(r[1]) for r in rows} == set(range(5)), out
    for _, _, c, gamma, error, accuracy in rows:
        assert 10 ** -2 <= float(c) <= 10 ** 3 * 1.0001 and 10 ** -5 <= float(gamma) <= 1.0001
        assert 0 <= float(error) <= 0.5 and 0.5 <= float(accuracy) <= 1
    means = dict(re.findall(r"^(.*): mean test accuracy ([\d.]+)$", out, re.M))
    assert set(means) == {"DP-FTS-DE (private)", "FTS-DE (not private)"}, out
    assert all(float(v) > 0.85 for v in means.values()), means      # a majority-class guess scores 0.63


def test_the_exported_flower_app_depends_on_the_installed_engine(installed):
    # The export needs no Flower; the app it writes names this distribution and version, and Flower's.
    exported = installed.run(["dpbo", "export", "flower", "--tool", "fbo", "--agents", "3", "--out", "app"])
    assert exported.returncode == 0, exported.stderr
    version = installed.python("import importlib.metadata as m; print(m.version('dpbo-explorer'))").stdout.strip()
    project = installed.python("import tomllib; print(tomllib.load(open('app/pyproject.toml', 'rb'))"
                               "['project']['dependencies'])").stdout.strip()
    assert project == str([f"dpbo-explorer[flower]=={version}", "flwr==1.42.0"])
    assert (installed.workdir / "app" / "make_certificates.sh").is_file()
    launcher = installed.python("import importlib.util as u; print(u.find_spec('engine.flower.supernode').origin)")
    assert Path(launcher.stdout.strip()).is_relative_to(installed.site_packages), launcher.stderr


def _offline_install_lines(app: Path, wheel: Path) -> tuple[str, str]:
    """The exported README's two commands for machines without a registry: (make the wheels, install them).

    The first installs from ``$DPBO_SOURCE``, the project's checkout or its wheel (the project is not on a
    registry): here the wheel built above, as the README's variable says.
    """
    text = (app / "README.md").read_text().split("## Install", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```text\n(.*?)```", text, re.S)
    make, install = [line.split("  #", 1)[0].strip() for line in block.strip().splitlines()]
    assert make.startswith('pip wheel "$DPBO_SOURCE[flower]" ')
    assert install.startswith("pip install --no-index --find-links wheels ")
    return make.replace("$DPBO_SOURCE", str(wheel)), install


def test_the_exported_app_runs_a_secured_federation_from_the_wheel_offline(installed):
    # Last in this module: it adds the Flower extra to the environment the tests above found without it.
    import shlex

    pytest.importorskip("flwr", reason="Flower (flwr) is not installed")
    from engine.fbo.config import FboConfig
    from engine.fbo.plan import make_plan
    from engine.flower.settings import fbo_config, fbo_run_config
    from tests.flower_loopback import OFFLINE, readme_federation

    config = FboConfig(agents=3, iterations=2, P=1, features=8, n_init=3, q=0.5, z=1.0, seed=2)
    exported = installed.run(["dpbo", "export", "flower", "--tool", "fbo", "--agents", "3", "--iterations", "2",
                              "--P", "1", "--features", "8", "--n-init", "3", "--q", "0.5", "--z", "1.0",
                              "--seed", "2", "--out", "federation"])
    assert exported.returncode == 0, exported.stderr
    app = installed.workdir / "federation"
    [wheel] = (installed.folder / "dist").glob("dpbo_explorer-*.whl")
    make, install = _offline_install_lines(app, wheel)
    # Where there is a registry: the wheels of the app's dependencies (at the lock's versions).
    pip_env = {k: v for k, v in installed.env.items() if not k.startswith("PIP_REQUIRE")}
    made = _run([installed.bin / "python", "-m", *shlex.split(make)[:2], "-c", _constraints(installed.folder),
                 "--quiet", *shlex.split(make)[2:]], cwd=app, env=pip_env, timeout=900)
    assert made.returncode == 0, made.stderr[-3000:]
    # The install itself with no registry at all, as the README writes it.
    done = installed.run(["bash", "-c", f"cd {shlex.quote(str(app))} && python -m {install} {' '.join(PIP_OPTIONS)}"],
                         extra_env=OFFLINE, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    where = installed.python("import engine, flwr; print(engine.__file__)")
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(installed.site_packages)
    # The README's start and run blocks with the installed environment's programs, the checkout nowhere on the
    # path, and no registry (readme_federation's OFFLINE environment).
    with readme_federation(app, 3, installed=installed.bin, base_env=installed.env) as (run, _):
        summary, _ = run(app, 300)
    assert summary["nodes"] == 3 and summary["rounds"] == config.iterations + 1
    assert summary["releases"] == config.iterations
    plan = make_plan(fbo_config(fbo_run_config(config)))
    assert summary["epsilon"] == pytest.approx(plan.epsilon_after(config.iterations), rel=1e-12)
    # The README as written sets no test secret: the server drew from the operating system's entropy, and a
    # participant holding the run config, the code and every broadcast cannot regenerate its noise.
    from engine.flower.fbo_strategy import DpFtsDeStrategy
    from engine.flower.participant import attack_fbo

    assert summary["randomness"] == "os-entropy" and summary["status"] == "completed"
    attack = attack_fbo(fbo_run_config(config), summary["broadcasts"], DpFtsDeStrategy)
    # (A wrong guess can pass a release's check by chance; it is called regenerated only below a 1e-6 chance.)
    assert attack.releases == config.iterations and not attack.regenerated
