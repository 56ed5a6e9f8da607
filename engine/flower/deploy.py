"""How an exported Flower app is installed, secured and started: the README's commands and the certificate script.

Secured by default: ``make_certificates.sh`` makes a certificate authority,
the SuperLink's TLS certificate and one authentication key pair per SuperNode;
the README starts the SuperLink with TLS and SuperNode authentication
(``--enable-supernode-auth``), registers each SuperNode's public key and
starts every SuperNode with its private key. Insecure mode (no TLS, no
authentication) only when the export is asked for it, with a warning.

The README's ```bash blocks are the commands; ``tests/test_flower_federation.py``
runs them as written (after the install block) on 127.0.0.1.
"""

from __future__ import annotations

import engine

FLWR_VERSION = "1.42.0"
ENGINE_DISTRIBUTION = "dpbo-explorer"
LINK_PORT, NODE_PORT = 9093, 9101
LINK_WAIT_SECONDS = 180
NODE_POLL_SECONDS = 0.2
INSECURE_WARNING = ("Warning: this app runs without TLS and without SuperNode authentication: anyone who can reach "
                    "the SuperLink can read the messages and join as an agent. Use it on one trusted machine only.")

CERTIFICATES = '''#!/usr/bin/env bash
# Makes certificates/ (a certificate authority and the SuperLink's TLS certificate for HOST) and keys/ (one
# authentication key pair per SuperNode) next to this script; files that exist are kept.
# Usage: bash make_certificates.sh HOST NODES
set -euo pipefail
HOST="${1:-127.0.0.1}"
NODES="${2:-%(nodes)d}"
cd "$(dirname "$0")"
mkdir -p certificates keys
if [ ! -f certificates/ca.crt ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout certificates/ca.key -out certificates/ca.crt -days 365 \\
    -subj "/CN=federation certificate authority" 2>/dev/null
  if [[ "$HOST" =~ ^[0-9.]+$ ]]; then SAN="IP:$HOST"; else SAN="DNS:$HOST"; fi
  openssl req -newkey rsa:2048 -nodes -keyout certificates/server.key -out certificates/server.csr \\
    -subj "/CN=$HOST" 2>/dev/null
  printf "subjectAltName=%%s,IP:127.0.0.1,DNS:localhost\\n" "$SAN" > certificates/server.ext
  openssl x509 -req -in certificates/server.csr -CA certificates/ca.crt -CAkey certificates/ca.key \\
    -CAcreateserial -out certificates/server.pem -days 365 -sha256 -extfile certificates/server.ext 2>/dev/null
  chmod 600 certificates/ca.key certificates/server.key
fi
for i in $(seq 0 $((NODES - 1))); do
  [ -f "keys/supernode_$i" ] || ssh-keygen -q -t ecdsa -b 384 -N "" -C "supernode-$i" -f "keys/supernode_$i"
done
echo "certificates/ca.crt goes to every machine; keys/supernode_N (private) to SuperNode N only; keep ca.key here."
'''

INSTALL = '''## Install (every machine of the federation, once)

```bash
pip install "{dist}[flower]=={version}" "flwr=={flwr}"
```

This app was exported with {dist} {version} and Flower {flwr}; its `pyproject.toml` depends on exactly
those. Nothing is installed at run time: the SuperLink runs with
`--disable-runtime-dependency-installation` (it uses the installed environment instead of running
`uv sync` against a package registry) and SuperNodes never install. For machines without a registry,
make the wheels once where there is one and install from them:

```text
pip wheel "{dist}[flower]=={version}" "flwr=={flwr}" -w wheels    # or: pip wheel "/path/to/checkout[flower]" -w wheels
pip install --no-index --find-links wheels "{dist}[flower]=={version}" "flwr=={flwr}"
```
'''

SETUP = '''export FLWR_HOME="${{FLWR_HOME:-$PWD/.flwr}}"
export LINK_PORT="${{LINK_PORT:-{link}}}" NODE_PORT="${{NODE_PORT:-{node}}}"
export FLWR_SUPEREXEC_TASK_POLL_INTERVAL=0.1     # start a ClientApp 0.1 s after its message arrives, not 1 s
'''

SECURE = SETUP + '''bash make_certificates.sh 127.0.0.1 {nodes}        # certificates/ and keys/, see below
mkdir -p "$FLWR_HOME" && cat > "$FLWR_HOME/config.toml" <<TOML
[superlink]
default = "federation"

[superlink.federation]
address = "127.0.0.1:$LINK_PORT"
root-certificates = "$PWD/certificates/ca.crt"
TOML
flower-superlink --port "$LINK_PORT" --ssl-ca-certfile certificates/ca.crt --ssl-certfile certificates/server.pem \\
  --ssl-keyfile certificates/server.key --enable-supernode-auth --disable-runtime-dependency-installation &
timeout {wait} bash -c 'until flwr supernode ls > /dev/null 2>&1; do sleep 1; done' \\
  || echo "The SuperLink did not answer within {wait} s: read its log above before going on."
for i in $(seq 0 {last}); do flwr supernode register "keys/supernode_$i.pub"; done
for i in $(seq 0 {last}); do
  python -m engine.flower.supernode --poll {poll} --superlink "127.0.0.1:$LINK_PORT" \\
    --root-certificates certificates/ca.crt --auth-supernode-private-key "keys/supernode_$i" \\
    --port $((NODE_PORT + i)) --node-config "partition-id=$i num-partitions={nodes}" &
done
'''

INSECURE = SETUP + '''mkdir -p "$FLWR_HOME" && cat > "$FLWR_HOME/config.toml" <<TOML
[superlink]
default = "federation"

[superlink.federation]
address = "127.0.0.1:$LINK_PORT"
insecure = true
TOML
flower-superlink --insecure --port "$LINK_PORT" --disable-runtime-dependency-installation &
timeout {wait} bash -c 'until flwr supernode ls > /dev/null 2>&1; do sleep 1; done' \\
  || echo "The SuperLink did not answer within {wait} s: read its log above before going on."
for i in $(seq 0 {last}); do
  python -m engine.flower.supernode --poll {poll} --insecure --superlink "127.0.0.1:$LINK_PORT" \\
    --port $((NODE_PORT + i)) --node-config "partition-id=$i num-partitions={nodes}" &
done
'''

SECURITY = '''## Security: what each machine holds

`bash make_certificates.sh HOST {nodes}` (HOST: the SuperLink's address as the SuperNodes reach it) makes
`certificates/ca.key` and `ca.crt` (the federation's certificate authority: keep `ca.key` on the
SuperLink's machine, give `ca.crt` to every machine), the SuperLink's `server.pem` and `server.key`
(signed by the authority, for HOST), and `keys/supernode_N` with `supernode_N.pub` (SuperNode N's
authentication key pair, ECDSA P-384). The SuperLink's operator registers every public key with
`flwr supernode register keys/supernode_N.pub` and gives SuperNode N its private key `keys/supernode_N`
only; a SuperNode whose key is not registered is refused (`Failed to activate SuperNode`), and
`flwr supernode unregister NODE_ID` removes one. The messages travel under TLS (SuperNodes and `flwr`
check the SuperLink's certificate against `ca.crt`).

On several machines: run `make_certificates.sh` with the SuperLink's host name or address, start the
SuperLink there, copy `certificates/ca.crt` and each node's private key to its machine, and replace
`127.0.0.1` by that address in `--superlink` and in `config.toml`. The agent's index (its sub-region)
is the node's `partition-id`: give each registered key one index and keep the list. The server binds
each index to the node that first replied for it; a later reply for that index from another node is
not used (and is logged), so a registered key cannot take over another agent's place mid-run.
'''


def readme_commands(nodes: int, insecure: bool) -> str:
    """The bash block that starts the SuperLink (and waits until it answers) and the SuperNodes."""
    template = INSECURE if insecure else SECURE
    return template.format(nodes=nodes, last=nodes - 1, link=LINK_PORT, node=NODE_PORT, wait=LINK_WAIT_SECONDS,
                           poll=NODE_POLL_SECONDS)


def run_section(nodes: int, insecure: bool) -> str:
    mode = ("insecure: no TLS, no authentication" if insecure
            else "TLS and SuperNode authentication on")
    return (f"## Run it on one machine ({mode})\n\nStart the SuperLink, wait until it answers (at most "
            f"{LINK_WAIT_SECONDS} s), then one SuperNode per participant (`python -m engine.flower.supernode` is "
            f"Flower's `flower-supernode` asking for work every {NODE_POLL_SECONDS} s instead of every 3 s):\n\n"
            f"```bash\n{readme_commands(nodes, insecure)}```\n\nRun the app (the ServerApp waits up to 60 s for "
            f"the {nodes} nodes and prints a `RESULT` line):\n\n```bash\nflwr run . --stream\n```\n\nStop "
            f"everything with `kill %1 %2 ...` (the jobs above) when done.\n")


def pyproject_dependencies() -> str:
    return f'"{ENGINE_DISTRIBUTION}[flower]=={engine.__version__}", "flwr=={FLWR_VERSION}"'


def install_section() -> str:
    return INSTALL.format(dist=ENGINE_DISTRIBUTION, version=engine.__version__, flwr=FLWR_VERSION)


def security_section(nodes: int, insecure: bool) -> str:
    if insecure:
        return f"## Security\n\n{INSECURE_WARNING} Export without `--insecure` for TLS and SuperNode authentication.\n"
    return SECURITY.format(nodes=nodes)


def certificate_script(nodes: int) -> str:
    return CERTIFICATES % {"nodes": nodes}
