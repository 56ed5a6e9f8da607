"""docs/hosting.md's cluster recipe works as written: its certificate command (run here exactly as the page shows
it), a TLS scheduler and worker started with the page's options on loopback, a command run through them with the
explorer's certificate, and the trust model the page states: a worker's certificate works as a client's, a
certificate another CA signed does not. The cluster is the stock ``dask scheduler`` and ``dask worker`` processes
(tests/dask_loopback.py), stopped by their pids."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.dask_loopback import cluster

from engine.cli import main

ROOT = Path(__file__).resolve().parents[1]
HOSTING = ROOT / "docs" / "hosting.md"
MEMBERS = ("scheduler", "worker-1", "worker-2", "explorer")
AUDIT = ["audit", "--trials", "600", "--seed", "4"]
HANG_GUARD = 180

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="the recipe's certificates need openssl")


def certificate_command() -> str:
    """The ```bash block of docs/hosting.md's "Certificates" section, as the page shows it."""
    text = HOSTING.read_text()
    section = text[text.index("### Certificates"):]
    start = section.index("```bash") + len("```bash")
    return section[start:section.index("```", start)].strip()


def _make_certificates(folder: Path) -> Path:
    done = subprocess.run(certificate_command(), shell=True, cwd=folder, capture_output=True, text=True,
                          timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> Path:
    return _make_certificates(tmp_path_factory.mktemp("certificates"))


@pytest.fixture(scope="module")
def tls_cluster(certificates, tmp_path_factory):
    with cluster(1, tmp_path_factory.mktemp("tls-dask"), tls=certificates) as (address, processes):
        yield address


def client_settings(ca: Path, cert: Path, key: Path) -> dict:
    """The page's client settings (Dask's configuration as environment variables)."""
    return dict(os.environ, DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION="True",
                DASK_DISTRIBUTED__COMM__TLS__CA_FILE=str(ca), DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT=str(cert),
                DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY=str(key))


def on_cluster(address: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", *AUDIT, "--executor", "dask", "--scheduler", address],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=HANG_GUARD)


def scores(payload: dict) -> dict:
    return {k: v for k, v in payload.items() if "seconds" not in k}


def test_the_certificates_are_one_ca_and_a_signed_pair_per_member(certificates):
    for name in MEMBERS:
        assert (certificates / f"{name}-key.pem").is_file()
        done = subprocess.run(["openssl", "verify", "-CAfile", "ca.pem", f"{name}.pem"], cwd=certificates,
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip().endswith("OK"), done


def test_a_command_runs_on_the_tls_cluster_with_the_explorers_certificate(tls_cluster, certificates, capsys):
    assert tls_cluster.startswith("tls://127.0.0.1:")
    assert main(AUDIT + ["--executor", "local"]) == 0
    local = json.loads(capsys.readouterr().out)
    done = on_cluster(tls_cluster, client_settings(certificates / "ca.pem", certificates / "explorer.pem",
                                                   certificates / "explorer-key.pem"))
    assert done.returncode == 0, done.stderr[-2000:]
    assert scores(json.loads(done.stdout)) == scores(local)


def test_a_workers_certificate_works_as_a_client_certificate(tls_cluster, certificates):
    """What docs/hosting.md says of the trust model: one CA, every holder fully trusted."""
    done = on_cluster(tls_cluster, client_settings(certificates / "ca.pem", certificates / "worker-2.pem",
                                                   certificates / "worker-2-key.pem"))
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_certificate_another_ca_signed_cannot_connect(tls_cluster, certificates, tmp_path):
    other = _make_certificates(tmp_path)
    done = on_cluster(tls_cluster, client_settings(certificates / "ca.pem", other / "explorer.pem",
                                                   other / "explorer-key.pem"))
    assert done.returncode == 2 and not done.stdout, done
    assert done.stderr.startswith(f"error: Could not reach the Dask scheduler at {tls_cluster}") \
        and done.stderr.count("\n") == 1, done.stderr
