"""Every shell command of README.md and docs/ runs, and prints what the text says it prints.

A command is a line of a ```bash block (a trailing backslash continues it);
the ``# ...`` lines right after it are what the text claims it prints:

- ``# {"key": value, ...}``: the JSON on stdout has these keys, and every value
  shown is the printed one (numbers to the decimals shown; ``"..."`` inside a
  list elides items; ``...``, ``[...]`` and ``{...}`` as a value claim only the key).
- ``# stderr: text ...``: stderr contains the text (up to an ``...``).
- ``# exit code: N``: the exit status (0 otherwise).

``python -m engine ...`` (and ``dpbo ...``, its installed name) runs in this process (the same ``main``, without an
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
import resource
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.cli import main
from ui.kit.routes import ROUTES

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# A command not listed below must finish within this many CPU seconds (its own and its worker processes'): CPU
# time, not wall time, so that a busy machine (other processes on every core) does not decide the test, and told
# in the reference machine's seconds (benchmarks.bench_limits.REFERENCE_SECONDS) when it is over, so that a
# slower machine does not either.
CHEAP_SECONDS = 15.0


def _cpu_seconds() -> float:
    """CPU time of this process (all its threads) and of its finished child processes."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


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
    # The advisor's search for 50 agents over 40 iterations (about 40 s of CPU); 6 agents over 4 iterations run every
    # round, in this process, and print the same keys.
    "python -m engine advise --dataset synthetic": Smaller({"--agents": "6", "--iterations": "4",
                                                            "--executor": "local"},
                                                           ("algorithm", "accountant", "complete", "stopped")),
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
    "dask scheduler": "needs a Dask cluster of several machines (tests/dask_loopback.py starts a loopback one)",
    "cd dpbo-explorer": "a worker machine's checkout of the project",
    "PYTHONPATH=$PWD dask worker": "needs a Dask cluster of several machines",
    "python -m engine sweep --tool fbo --preset fig3a --out data/cache/sweeps/fig3a.parquet --executor dask":
        "needs a Dask cluster (`--scheduler tcp://10.0.0.5:8786` is a placeholder)",
    "python -m engine reproduce all --executor dask":
        "needs a Dask cluster of several machines; tests/test_commands_on_dask.py runs `reproduce all` (small parts) "
        "through a loopback one",
    "docker build": "needs a Docker daemon; tests/browser/test_hosted.py runs the image's command and environment "
                    "(read from the Dockerfile) on loopback",
    "docker run": "needs a Docker daemon and a built image",
    "DPBO_CACHE_DIR=/srv/dpbo/cache DPBO_DATA_DIR=/srv/dpbo/data python -m hosting":
        "starts the hosted server; tests/browser/test_hosted.py starts `python -m hosting` on loopback and visits it",
    "pip install .": "installs the project into the test environment; tests/test_install.py builds the wheel and "
                     "installs it in a fresh virtual environment",
    "pip install pip-tools": "changes the test environment; requirements.lock is checked by tests/test_hosting.py",
    "pip-compile": "needs the package index; requirements.lock is checked by tests/test_hosting.py",
    "python -m engine reproduce dp-fts-de --parts all":
        "every part of the paper at its run counts (tens of minutes on two cores); the stored parts are checked by "
        "tests/test_reproduction_stored.py, and tests/test_reproduce_appendix.py runs a new part small",
    "python -m engine reproduce dp-fts-de --parts all --synthetic-runs 100":
        "the stored reproduction (about an hour of CPU on two cores); tests/test_reproduction_stored.py checks its "
        "output in data/reproduction/, tests/test_sentences.py docs/paper-comparisons.md against it",
    "python -m benchmarks.rejudge_stored --docs":
        "rewrites the stored files and the doc; tests/test_sentences.py checks the doc equals what it would write",
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
    started = _cpu_seconds()
    previous = os.getcwd()
    os.chdir(workdir)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(previous)
    return code, out.getvalue(), err.getvalue(), _cpu_seconds() - started


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


# ---------------------------------------------------------------- the reproducibility contract
#
# The same seed on the same machine gives identical results (the engine's own tests hold this, e.g.
# tests/test_fbo_plan.py, tests/test_sweep_run.py). On another machine, whose BLAS kernels round the last bits
# differently, a Thompson-sampling run takes other branches and its results agree only within their standard
# errors. A documented number that is such an estimate is therefore checked against its standard error, not to
# the decimals shown; everything else (counts, settings, epsilon, delta, verdicts) is still compared exactly.
#
# Two estimates from two machines each have standard error se, so their difference has sd sqrt(2)*se; a
# documented value is accepted within 4 such sds (a chance below 1e-4 per value that an honest difference fails).
STANDARD_ERRORS_ALLOWED = 4 * 2 ** 0.5


def _runs(actual: dict) -> int | None:
    runs = (actual.get("config") or {}).get("runs")
    return runs if isinstance(runs, int) and runs > 1 else None


def _standard_errors(key: str, actual: dict):
    """The standard error of each value of ``actual[key]`` when it is an estimate that varies between machines
    (a number, a list aligned with the value, or None when the key is compared exactly)."""
    value, runs, config = actual.get(key), _runs(actual), actual.get("config") or {}
    if isinstance(actual.get(f"{key}_stderr"), (list, float)):
        return actual[f"{key}_stderr"]                    # reported by the engine: the standard error over runs
    if runs is None:
        return None
    if key.endswith("_stderr") and isinstance(value, list):
        # The standard error of a standard error estimated from n runs is about se / sqrt(2 (n - 1)).
        return [None if v is None else v / (2 * (runs - 1)) ** 0.5 for v in value]
    if key == "n_selected" and isinstance(value, list) and {"agents", "q"} <= set(config):
        # Poisson subsampling selects Binomial(N, q) agents per release; the value is its mean over runs.
        n, q = config["agents"], config["q"]
        return [None if v is None else (n * q * (1 - q) / runs) ** 0.5 for v in value]
    if key == "clipped_fraction" and isinstance(actual.get("n_selected"), list):
        # The share of the selected vectors (n_selected per run, over all runs) that were clipped; with the
        # add-one (Laplace) estimate of the share, so that a run with no clipped vector still has an error.
        def share_error(p, m):
            n = m * runs
            p = (p * n + 1) / (n + 2)
            return (p * (1 - p) / n) ** 0.5
        return [None if p is None or not m else share_error(p, m) for p, m in zip(value, actual["n_selected"])]
    return None


def _aligned(shown: list, actual: list) -> list[tuple[object, int]] | None:
    """(shown value, index in ``actual``) pairs, an ``"..."`` in ``shown`` eliding items; None if they cannot
    align."""
    if "..." in shown:
        cut = shown.index("...")
        head, tail = shown[:cut], shown[cut + 1:]
        if len(actual) < len(head) + len(tail):
            return None
        return [*zip(head, range(len(head))), *zip(tail, range(len(actual) - len(tail), len(actual)))]
    return list(zip(shown, range(len(actual)))) if len(shown) == len(actual) else None


def _within_standard_errors(shown, actual, se) -> bool:
    """``shown`` agrees with the estimate ``actual`` to the decimals shown or within the allowed standard
    errors ``se`` (same shape as ``actual``)."""
    if isinstance(shown, list):
        pairs = _aligned(shown, actual) if isinstance(actual, list) else None
        return pairs is not None and all(_within_standard_errors(v, actual[i], se[i]) for v, i in pairs)
    if _matches(shown, actual):
        return True
    return (isinstance(shown, (int, float)) and isinstance(actual, (int, float)) and se is not None
            and abs(float(shown) - float(actual)) <= STANDARD_ERRORS_ALLOWED * float(se))


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
        se = _standard_errors(key, actual)
        if se is not None:
            assert _within_standard_errors(value, actual[key], se), (
                f"{command.source}: the text shows {key} = {value!r}, the command prints {actual[key]!r}, more "
                f"than {STANDARD_ERRORS_ALLOWED:.2f} standard errors {se!r} apart")
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
    # ``dpbo`` is the installed name of ``python -m engine`` (tests/test_install.py runs the installed command).
    tool_words = words[3:] if words[:3] == ["python", "-m", "engine"] else words[1:] if words[:1] == ["dpbo"] else None
    if tool_words is not None:
        if "landmine" in words and not (Path(os.environ.get("DPBO_DATA_DIR", ROOT / "data")) / "landmine").is_dir():
            pytest.skip("needs LandmineData.mat (set DPBO_DATA_DIR)")
        argv = _resize(tool_words, rule) if rule else tool_words
        code, out, err, seconds = _run_engine(argv, tmp_path)
    else:
        started = _cpu_seconds()
        proc = subprocess.run(command.text, shell=True, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
        code, out, err, seconds = proc.returncode, proc.stdout, proc.stderr, _cpu_seconds() - started
    if rule is None and seconds >= CHEAP_SECONDS:
        from benchmarks.bench_limits import here_in_reference_seconds

        seconds = here_in_reference_seconds(seconds)
    assert rule is not None or seconds < CHEAP_SECONDS, (
        f"{command.source}: `{command.text}` took {seconds:.0f} s of CPU. Add smaller sizes for it to SMALLER in "
        f"tests/test_docs.py (or, if it cannot run here, a reason to NOT_RUN).")
    check_output(command, code, out, err, rule)


def test_every_command_is_found_and_the_lists_name_real_commands():
    texts = [c.text for c in ALL]
    assert len(texts) >= 15, texts      # the extraction works: the docs hold many commands
    for prefix in list(SMALLER) + list(NOT_RUN):
        assert any(t.startswith(prefix) for t in texts), f"{prefix!r} in tests/test_docs.py matches no command"


def test_the_readme_tour_follows_the_routes():
    """The tour names every page in the menu's order (ui/kit/routes.py ROUTES), each with its screenshot."""
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


def test_estimates_are_checked_within_their_standard_errors_and_the_rest_exactly():
    command = Command("doc.md:1", "python -m engine fbo ...", [
        '{"curve": [0.12, "...", 0.0054], "n_selected": [null, "...", 54.6], "epsilon": [0.0, "...", 9.9085],',
        ' "clipped_fraction": [null, "...", 0.0037], "curve_stderr": [0.003, "...", 0.0009]}'])
    printed = {"config": {"agents": 200, "q": 0.25, "runs": 5}, "curve": [0.1203, 0.05, 0.00524],
               "curve_stderr": [0.0031, 0.01, 0.000855], "epsilon": [0.0, 2.3, 9.90848],
               "n_selected": [None, 50.0, 52.2], "clipped_fraction": [None, 0.05, 0.00383]}
    check_output(command, 0, json.dumps(printed), "", None)       # another machine's run of the same seed
    for key, index, value in [("curve", -1, 0.0054 + 6 * 0.000855), ("n_selected", -1, 54.6 - 6 * 2.74),
                              ("epsilon", -1, 9.9097)]:         # far outside, or an exact field off in a decimal
        wrong = json.loads(json.dumps(printed))
        wrong[key][index] = value
        with pytest.raises(AssertionError, match=key):
            check_output(command, 0, json.dumps(wrong), "", None)
