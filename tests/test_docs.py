"""Every shell command of README.md and docs/ runs, and prints what the text says it prints.

A command is a line of a ```bash block (a trailing backslash continues it);
the ``# ...`` lines right after it are what the text claims it prints:

- ``# {"key": value, ...}``: the JSON on stdout has these keys, and every value
  shown is the printed one (numbers to the decimals shown; ``"..."`` inside a
  list elides items; ``...``, ``[...]`` and ``{...}`` as a value claim only the key).
- ``# stderr: text ...``: stderr contains the text (up to an ``...``).
- ``# exit code: N``: the exit status (0 otherwise).

``python -m engine ...`` runs in this process (the same ``main``, without an
interpreter start per command) in a temporary working directory, so output
files land there. A command that would take long runs with smaller sizes from
:data:`SMALLER` and then only the keys of its output are checked (and the values
that do not depend on the size). Commands that are not run say why in
:data:`NOT_RUN`. A new command that is neither cheap nor listed fails with a
message saying where to add its smaller sizes; nothing is skipped silently.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.cli import main
from ui.routes import ROUTES

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A command not listed below must finish within this many seconds of engine time (interpreter start aside).
CHEAP_SECONDS = 15.0


@dataclass(frozen=True)
class Smaller:
    """Smaller sizes for a long command: option -> value, and the keys whose values stay comparable."""

    options: dict
    same_values: tuple = ()


# Prefix of a command -> its smaller sizes. Every entry says why its output stays meaningful.
SMALLER = {
    # 10^6 trials take seconds; the claimed epsilon and the verdict do not depend on the number of trials.
    "python -m engine audit --mechanism fbo-server": Smaller({"--trials": "40000"}, ("epsilon_claimed",
                                                                                      "epsilon_canary", "violation")),
    # At half the noise the violation is caught with far fewer trials too (the negative control).
    "python -m engine audit --mechanism hype-votes": Smaller({"--trials": "100000"}, ("epsilon_claimed", "violation")),
    # One run per cell in this process instead of 5 on worker processes: the same cells and keys.
    "python -m engine sweep --tool fbo --dataset synthetic": Smaller({"--runs": "1", "--executor": "local"},
                                                                     ("cells", "failed_cells", "complete", "varied")),
    # The landmine table takes ~20 s to build; two fields show the same command works.
    "python -m engine data build-table --dataset landmine": Smaller({"--agents": "2"}, ("dataset", "candidates",
                                                                                       "dim")),
    # 2000 repetitions of 250 clients; 300 repetitions give the same calibration and keys.
    "python -m engine hype --mode simulation": Smaller({"--repetitions": "300"}, ("epsilon", "sigma",
                                                                                  "per_client_std", "noise_std",
                                                                                  "effective_epsilon", "good")),
    # Trains every candidate on 100 clients; 20 clients and 100 repetitions exercise the same path.
    "python -m engine hype --mode data": Smaller({"--clients": "20", "--repetitions": "100"}, ()),
    # 9 settings x 5 runs of 200 agents; 2 runs per setting give the same settings, claims and keys.
    "python -m engine reproduce dp-fts-de --parts synthetic": Smaller({"--synthetic-runs": "2"}, ("paper", "seed")),
    # 20 runs of 50 iterations on a 10,000-point grid; 2 runs give the same curator's release.
    "python -m engine pogpucb": Smaller({"--runs": "2"}, ("branch", "sigma_min", "omega", "max_admissible_r",
                                                          "distortion_bound", "epsilon", "log_epsilon")),
}

# Commands that are not run here, each with the reason.
NOT_RUN = {
    "python3.11 -m venv": "creates a virtual environment; the test suite already runs inside one",
    "pip install -r requirements.txt && streamlit run app.py":
        "the quick start: tests/browser/test_first_visit.py starts exactly `streamlit run app.py` and visits it",
    "pip install -r requirements-dev.txt && python -m pytest": "this command is the test run itself (.ci/run runs it)",
    "dask scheduler": "needs a Dask cluster of several machines (tests/test_sweep_run.py runs a local one)",
    "cd dpbo-explorer": "a worker machine's checkout of the project",
    "PYTHONPATH=$PWD dask worker": "needs a Dask cluster of several machines",
    "python -m engine sweep --tool fbo --preset fig3a --out data/cache/sweeps/fig3a.parquet --executor dask":
        "needs a Dask cluster (`--scheduler tcp://<host>:8786` is a placeholder)",
    "docker build": "needs a Docker daemon; tests/browser/test_hosted.py runs the image's command and environment "
                    "(read from the Dockerfile) on loopback",
    "docker run": "needs a Docker daemon and a built image",
    "pip install pip-tools": "changes the test environment; requirements.lock is checked by tests/test_hosting.py",
    "pip-compile": "needs the package index; requirements.lock is checked by tests/test_hosting.py",
    "python -m engine reproduce dp-fts-de --parts landmine --runs 100":
        "the stored 100-run reproduction (10 minutes on two cores); tests/test_reproduction_stored.py checks its "
        "output in data/reproduction/ against docs/paper-comparisons.md",
    "python -m engine reproduce dp-fts-de --parts all":
        "every part of the paper at its run counts (tens of minutes on two cores); the stored parts are checked by "
        "tests/test_reproduction_stored.py, and tests/test_reproduce_appendix.py runs a new part small",
    "python -m engine reproduce dp-fts-de --parts synthetic --synthetic-runs 100":
        "the stored 100-run reproduction (minutes on two cores); tests/test_reproduction_stored.py checks its "
        "output in data/reproduction/ against docs/paper-comparisons.md",
}


@dataclass
class Command:
    source: str          # file:line
    text: str
    claims: list[str] = field(default_factory=list)


def commands(path: Path) -> list[Command]:
    """The commands of the ```bash blocks of ``path``, with the comment lines that follow each."""
    found: list[Command] = []
    in_block, pending, last = False, "", None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_block, last = stripped in ("```bash", "```sh", "```shell"), None
            continue
        if not in_block or not stripped:
            continue
        if stripped.startswith("#"):
            if last is not None and not pending:
                last.claims.append(stripped[1:].strip())
            continue
        pending += stripped[:-1] + " " if stripped.endswith("\\") else stripped
        if not stripped.endswith("\\"):
            text = re.sub(r"\s+#\s.*$", "", pending).strip()   # a trailing comment is not part of the command
            name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
            last = Command(f"{name}:{number}", text)
            found.append(last)
            pending = ""
    return found


ALL = [command for path in DOCS for command in commands(path)]


def _not_run(text: str) -> str | None:
    return next((why for prefix, why in NOT_RUN.items() if text.startswith(prefix)), None)


def _smaller(text: str) -> Smaller | None:
    return next((rule for prefix, rule in SMALLER.items() if text.startswith(prefix)), None)


def _resize(argv: list[str], rule: Smaller) -> list[str]:
    argv = list(argv)
    for option, value in rule.options.items():
        if option in argv:
            argv[argv.index(option) + 1] = value
        else:
            argv += [option, value]
    return argv


def _run_engine(argv: list[str], workdir: Path) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(previous)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - started


# ---------------------------------------------------------------- the claims

def _json_claims(lines: list[str]) -> str:
    text = " ".join(line for line in lines if not line.startswith(("stderr:", "exit code:")))
    if not text.startswith("{"):
        return ""
    # Ellipses as values claim only the key: make them parseable.
    text = re.sub(r'("\s*:\s*)(\.\.\.|\[\.\.\.\]|\{\.\.\.\})(?=\s*[,}\]])', r'\1"<any>"', text)
    text = re.sub(r',\s*\.\.\.\s*([}\]])', r'\1', text)
    return text


def _decimals(number) -> int:
    text = repr(number)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 12


def _matches(shown, actual) -> bool:
    if shown == "<any>":
        return True
    if isinstance(shown, bool) or shown is None or isinstance(actual, bool):
        return shown == actual
    if isinstance(shown, (int, float)) and isinstance(actual, (int, float)):
        return round(float(actual), _decimals(shown)) == float(shown)
    if isinstance(shown, str):
        return isinstance(actual, str) and (actual.startswith(shown[:-3].rstrip()) if shown.endswith("...")
                                            else actual == shown)
    if isinstance(shown, list):
        if not isinstance(actual, list):
            return False
        if "..." in shown:
            cut = shown.index("...")
            head, tail = shown[:cut], shown[cut + 1:]
            return (len(actual) >= len(head) + len(tail) and all(map(_matches, head, actual[:len(head)]))
                    and all(map(_matches, tail, actual[len(actual) - len(tail):])))
        return len(shown) == len(actual) and all(map(_matches, shown, actual))
    if isinstance(shown, dict):
        return isinstance(actual, dict) and all(k in actual and _matches(v, actual[k]) for k, v in shown.items())
    return shown == actual


def check_output(command: Command, code: int, out: str, err: str, rule: Smaller | None) -> None:
    claims = command.claims
    expected_code = next((int(c.split(":", 1)[1]) for c in claims if c.startswith("exit code:")), 0)
    assert code == expected_code, f"{command.source}: exit code {code}, the text says {expected_code}\n{err}"
    for claim in claims:
        if claim.startswith("stderr:"):
            text = claim.split(":", 1)[1].strip()
            text = text[:-3].rstrip(" ;,") if text.endswith("...") else text
            if rule is not None:   # smaller sizes print other numbers: the sentence up to its first number
                text = re.split(r"\d", text)[0].rstrip()
            assert text in err, f"{command.source}: stderr should contain {text!r}, got {err!r}"
    shown_text = _json_claims(claims)
    if not shown_text:
        return
    shown = json.loads(shown_text)   # a claim the test cannot read is a claim nobody can check: fix the text
    actual = json.loads(out)
    for key, value in shown.items():
        assert key in actual, f"{command.source}: the text shows {key!r}, the output has no such key"
        if rule is not None and key not in rule.same_values:
            continue
        assert _matches(value, actual[key]), (f"{command.source}: the text shows {key} = {value!r}, "
                                              f"the command prints {actual[key]!r}")


@pytest.mark.parametrize("command", ALL, ids=[c.source for c in ALL])
def test_documented_command(command, tmp_path, monkeypatch, cache_dir):
    why = _not_run(command.text)
    if why is not None:
        pytest.skip(why)
    monkeypatch.setenv("DPBO_CACHE_DIR", str(cache_dir))
    words = shlex.split(command.text)
    rule = _smaller(command.text)
    if words[:3] == ["python", "-m", "engine"]:
        if "landmine" in words and not (Path(os.environ.get("DPBO_DATA_DIR", ROOT / "data")) / "landmine").is_dir():
            pytest.skip("needs LandmineData.mat (set DPBO_DATA_DIR)")
        argv = _resize(words[3:], rule) if rule else words[3:]
        code, out, err, seconds = _run_engine(argv, tmp_path)
    else:
        started = time.perf_counter()
        proc = subprocess.run(command.text, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        code, out, err, seconds = proc.returncode, proc.stdout, proc.stderr, time.perf_counter() - started
    assert rule is not None or seconds < CHEAP_SECONDS, (
        f"{command.source}: `{command.text}` took {seconds:.0f} s. Add smaller sizes for it to SMALLER in "
        f"tests/test_docs.py (or, if it cannot run here, a reason to NOT_RUN).")
    check_output(command, code, out, err, rule)


def test_every_command_is_found_and_the_lists_name_real_commands():
    texts = [c.text for c in ALL]
    assert len(texts) >= 15, texts      # the extraction works: the docs hold many commands
    for prefix in list(SMALLER) + list(NOT_RUN):
        assert any(t.startswith(prefix) for t in texts), f"{prefix!r} in tests/test_docs.py matches no command"


def test_the_readme_tour_follows_the_routes():
    """The tour names every page in the menu's order (ui/routes.py ROUTES), each with its screenshot."""
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## A tour of the pages")
    tour = readme[start:readme.index("\n## ", start + 5)]
    headings = re.findall(r"^### (.+)$", tour, re.M)
    expected = [route.title for route in ROUTES]
    assert headings == expected, (f"The README's tour lists {headings}, the menu {expected}: add a '### Title' "
                                  "section with a blurb and docs/images/<address>.png for each new page (the "
                                  "screenshots come from tests/browser/test_tour.py with DPBO_DOCS_IMAGES=1).")
    for route in ROUTES:
        image = f"docs/images/{route.url_path}.png"
        assert f"]({image})" in tour, f"the tour has no screenshot {image} for {route.title}"
        path = ROOT / image
        assert path.is_file(), f"{image} is missing (run the browser tour with DPBO_DOCS_IMAGES=1)"
        assert path.stat().st_size < 200_000, f"{image} is {path.stat().st_size} bytes: keep screenshots small"


def test_links_between_documents_resolve():
    for path in DOCS:
        for target in re.findall(r"\]\(((?!https?://)[^)#\s]+)(?:#[^)]*)?\)", path.read_text()):
            assert (path.parent / target).exists(), f"{path.relative_to(ROOT)} links to {target}, which is missing"


def test_the_checks_catch_a_wrong_claim_and_a_long_unknown_command(tmp_path, monkeypatch, cache_dir):
    doc = tmp_path / "doc.md"
    doc.write_text("```bash\npython -m engine privacy --q 0.25 --z 1 --steps 40 --delta 0.00294 \\\n"
                   "    --accountant ma\n# {\"epsilon\": 9.908, \"q\": 0.25, \"sampling\": ...}\n```\n")
    [command] = commands(doc)
    assert command.text.endswith("--accountant ma") and len(command.claims) == 1
    code, out, err, _ = _run_engine(shlex.split(command.text)[3:], tmp_path)
    with pytest.raises(AssertionError, match="9.908"):        # the wrong number is caught
        check_output(command, code, out, err, None)
    command.claims = ['{"epsilon": 9.9097, "q": 0.25, "sampling": ...}']
    check_output(command, code, out, err, None)
    # A command nobody gave smaller sizes that runs past the budget fails and says what to do.
    monkeypatch.setitem(globals(), "CHEAP_SECONDS", 0.0)
    with pytest.raises(AssertionError, match="Add smaller sizes for it to SMALLER"):
        test_documented_command(command, tmp_path, monkeypatch, cache_dir)
