"""How an exported Flower app is installed, secured and started: the README's commands and the certificate script.

Secured by default: ``make_certificates.sh`` makes a certificate authority and the SuperLink's TLS certificate
for its host (and, on one machine, one authentication key pair per SuperNode; on several machines each SuperNode
makes its own and sends only the public key). The SuperLink runs with TLS and SuperNode authentication
(``--enable-supernode-auth``) on the operator's loopback only, so its Control API (registering nodes, starting
runs) is the operator's; the agents reach only the Fleet API, through :mod:`engine.flower.gateway`. The operator
registers each SuperNode's public key and every SuperNode starts with its private key. Insecure mode (no TLS, no
authentication, one machine) only when the export is asked for it, with a warning.

Every README block begins with the same variables (:data:`SETUP`), so each works in a new shell; every command
runs with Flower's telemetry off; the run block ends with :mod:`engine.flower.outcome`, whose exit status says
whether the run completed. ``tests/test_flower_federation.py`` runs the blocks as written, each in its own shell,
on 127.0.0.1.
"""

from __future__ import annotations

import engine
from engine.flower.supernode import DEFAULT_POLL_SECONDS

FLWR_VERSION = "1.42.0"
ENGINE_DISTRIBUTION = "dpbo-explorer"
LINK_PORT, FLEET_PORT, NODE_PORT = 9093, 9092, 9101
LINK_WAIT_SECONDS = 180
NODE_POLL_SECONDS = DEFAULT_POLL_SECONDS    # a SuperNode asks the SuperLink for work this often (Flower: 3 s)
SUPEREXEC_POLL_SECONDS = 0.5   # a node's SuperExec looks for a ClientApp to start this often (Flower: every 1 s)
FLWR_HOME_DEFAULT = "$HOME/.flwr-dpbo"
INSECURE_WARNING = ("Warning: this app runs without TLS and without SuperNode authentication: anyone who can reach "
                    "the SuperLink can read the messages and join as an agent. Use it on one trusted machine only.")
TELEMETRY = ("Flower sends usage telemetry to telemetry.flower.ai unless `FLWR_TELEMETRY_ENABLED=0`, which every "
             "block here sets (and every command of the several-machines section starts with) so that no machine "
             "of the federation sends any.")

CERTIFICATES = '''#!/usr/bin/env bash
# Makes certificates/ (a certificate authority, valid 10 years, and the SuperLink's TLS certificate for HOST, valid
# 365 days) and keys/ (NODES authentication key pairs, for SuperNodes on this machine only; on several machines pass
# 0: each SuperNode makes its own key pair and sends only its public key) next to this script; files that exist are
# kept. RENEW=1 re-issues the SuperLink's certificate from the same authority (nothing changes on the SuperNodes).
# Usage: bash make_certificates.sh HOST [NODES]
set -euo pipefail
HOST="${1:?give the host name or address of the SuperLink, as the SuperNodes reach it}"
NODES="${2:-%(nodes)d}"
cd "$(dirname "$0")"
mkdir -p certificates keys
if [ ! -f certificates/ca.crt ]; then
  openssl req -x509 -newkey rsa:3072 -nodes -keyout certificates/ca.key -out certificates/ca.crt -days 3650 \\
    -subj "/CN=federation certificate authority" 2>/dev/null
  chmod 600 certificates/ca.key
fi
if [ ! -f certificates/server.pem ] || [ "${RENEW:-0}" = 1 ]; then
  if [[ "$HOST" =~ ^[0-9.]+$ || "$HOST" == *:* ]]; then SAN="IP:$HOST"; else SAN="DNS:$HOST"; fi
  openssl req -newkey rsa:2048 -nodes -keyout certificates/server.key -out certificates/server.csr \\
    -subj "/CN=$HOST" 2>/dev/null
  printf "subjectAltName=%%s,IP:127.0.0.1,DNS:localhost\\n" "$SAN" > certificates/server.ext
  openssl x509 -req -in certificates/server.csr -CA certificates/ca.crt -CAkey certificates/ca.key \\
    -CAcreateserial -out certificates/server.pem -days 365 -sha256 -extfile certificates/server.ext 2>/dev/null
  chmod 600 certificates/server.key
fi
openssl x509 -noout -ext subjectAltName -in certificates/server.pem | grep -qF "$HOST" \\
  || echo "certificates/server.pem does not name $HOST: run RENEW=1 bash make_certificates.sh $HOST 0" >&2
echo "SuperLink certificate for $HOST, $(openssl x509 -noout -enddate -in certificates/server.pem)"
for i in $(seq 0 $((NODES - 1))); do
  [ -f "keys/supernode_$i" ] || ssh-keygen -q -t ecdsa -b 384 -N "" -C "supernode-$i" -f "keys/supernode_$i"
done
'''

INSTALL = '''## Install (every machine of the federation, once)

The explorer is not on a package registry: install it from a checkout of the project or from its wheel
(`dpbo_explorer-{version}-py3-none-any.whl`), with Flower:

```bash
export DPBO_SOURCE=/path/to/dp-bo-explorer     # the project's checkout, or the path of its wheel
pip install "$DPBO_SOURCE[flower]" "flwr=={flwr}"
```

This app was exported with {dist} {version} and Flower {flwr}; its `pyproject.toml` depends on exactly
those. Nothing is installed at run time: the SuperLink runs with
`--disable-runtime-dependency-installation` (it uses the installed environment instead of running
`uv sync` against a package registry) and SuperNodes never install. For machines without a registry,
make the wheels once where there is one, copy `wheels/` to every machine and install from it:

```text
pip wheel "$DPBO_SOURCE[flower]" "flwr=={flwr}" -w wheels
pip install --no-index --find-links wheels "{dist}[flower]=={version}" "flwr=={flwr}"
```
'''

SETUP = '''export FLWR_HOME="${{FLWR_HOME:-{home}}}" FLWR_TELEMETRY_ENABLED=0
export LINK_PORT="${{LINK_PORT:-{link}}}" FLEET_PORT="${{FLEET_PORT:-{fleet}}}" NODE_PORT="${{NODE_PORT:-{node}}}"
export FLWR_SUPEREXEC_TASK_POLL_INTERVAL={superexec_poll}   # a ClientApp starts at most this late, not 1 s
'''

CONFIG = '''mkdir -p "$FLWR_HOME" && cat > "$FLWR_HOME/config.toml" <<TOML
[superlink]
default = "federation"

[superlink.federation]
address = "127.0.0.1:$LINK_PORT"
{tls}
TOML
'''

WAIT = '''timeout {wait} bash -c 'until flwr supernode ls federation > /dev/null 2>&1; do sleep 1; done' \\
  || echo "The SuperLink did not answer within {wait} s: read its log above before going on."
'''

SECURE_CONFIG = CONFIG.replace("{tls}", 'root-certificates = "$PWD/certificates/ca.crt"')
INSECURE_CONFIG = CONFIG.replace("{tls}", "insecure = true")
SECURE = SETUP + '''bash make_certificates.sh 127.0.0.1 {nodes}        # certificates/ and keys/, see below
''' + SECURE_CONFIG + '''flower-superlink --host 127.0.0.1 --port "$LINK_PORT" --ssl-ca-certfile certificates/ca.crt \\
  --ssl-certfile certificates/server.pem --ssl-keyfile certificates/server.key --enable-supernode-auth \\
  --disable-runtime-dependency-installation &
echo $! >> "$FLWR_HOME/link.pids"
python -m engine.flower.gateway --listen "127.0.0.1:$FLEET_PORT" --superlink "127.0.0.1:$LINK_PORT" \\
  --certfile certificates/server.pem --keyfile certificates/server.key --ca certificates/ca.crt &
echo $! >> "$FLWR_HOME/link.pids"
''' + WAIT + '''for i in $(seq 0 {last}); do flwr supernode register "keys/supernode_$i.pub" federation; done
for i in $(seq 0 {last}); do
  python -m engine.flower.supernode --poll {poll} --superlink "127.0.0.1:$FLEET_PORT" \\
    --root-certificates certificates/ca.crt --auth-supernode-private-key "keys/supernode_$i" \\
    --port $((NODE_PORT + i)) --node-config "partition-id=$i num-partitions={nodes}" &
  echo $! >> "$FLWR_HOME/nodes.pids"
done
'''

INSECURE = SETUP + INSECURE_CONFIG + '''flower-superlink --insecure --host 127.0.0.1 --port "$LINK_PORT" \\
  --disable-runtime-dependency-installation &
echo $! >> "$FLWR_HOME/link.pids"
''' + WAIT + '''for i in $(seq 0 {last}); do
  python -m engine.flower.supernode --poll {poll} --insecure --superlink "127.0.0.1:$LINK_PORT" \\
    --port $((NODE_PORT + i)) --node-config "partition-id=$i num-partitions={nodes}" &
  echo $! >> "$FLWR_HOME/nodes.pids"
done
'''

RUN = SETUP + '''flwr run . federation --stream 2>&1 | tee run.log
python -m engine.flower.outcome run.log      # what the run released and spent; exits 1 unless it completed
'''

STOP = SETUP + '''kill $(cat "$FLWR_HOME/nodes.pids") 2> /dev/null; sleep 2     # the SuperNodes first: they sign off
kill $(cat "$FLWR_HOME/link.pids") 2> /dev/null; rm -f "$FLWR_HOME/nodes.pids" "$FLWR_HOME/link.pids"
'''

SECURITY = '''## Security: who sees what

- **A participant** (a SuperNode's owner) sees the run config in `pyproject.toml` (every setting, the seed
  included), the app's code, its own replies and every message it is sent ({sent}). It does not see the
  other nodes' replies, and it cannot regenerate anyone's noise: {noise}
- **The server's operator** sees {server}.
- **An outsider** on the network sees TLS traffic to the gateway's port only; without a registered key it
  cannot join (`Failed to activate SuperNode`), and it reaches neither the SuperLink's Control API (registering
  nodes, starting runs) nor its Runtime API, which listen on the SuperLink machine's loopback.

What each machine holds: `certificates/ca.key` (the federation's certificate authority: it stays on the
SuperLink's machine), `ca.crt` (on every machine: SuperNodes and `flwr` check the SuperLink's certificate
against it), the SuperLink's `server.pem` and `server.key` (for its host name or address), and each SuperNode's
own key pair (`keys/supernode_N` here; on several machines made on the node's machine). The operator registers
every public key with `flwr supernode register KEY.pub federation`; a SuperNode whose key is not registered is
refused, and `flwr supernode unregister NODE_ID federation` removes one. The server binds each agent index to
the node that first replied for it; a reply naming an index outside 0..N-1, an index already used in the round
or bound to another node is not used and is logged, so a registered key cannot take another agent's place or
stop the run.

Test-only: `DPBO_FLOWER_SERVER_SECRET` in the SuperLink's environment (and `DPBO_FLOWER_NODE_SECRET` in a
SuperNode's) makes a federation reproducible for tests without telling the nodes; never set them in a
deployment (two runs with the same secret and seed reuse the same noise).

## On several machines

The SuperLink's machine (the operator's; HOST below is its name or address as the SuperNodes reach it) runs the
SuperLink on its loopback and the gateway on the port the agents reach; each SuperNode runs on its own machine.
Every command starts with `FLWR_TELEMETRY_ENABLED=0`, as on one machine. Install everything on every machine
first (above), then:

### 1. The SuperLink's machine: certificates and start

`bash make_certificates.sh HOST 0` makes the authority and the SuperLink's certificate for HOST (no node keys);
give `certificates/ca.crt` to every SuperNode's machine. Then, in this folder:

```text
export FLWR_HOME="$HOME/.flwr-dpbo" FLWR_TELEMETRY_ENABLED=0 LINK_PORT={link} FLEET_PORT={fleet}
mkdir -p "$FLWR_HOME" && cat > "$FLWR_HOME/config.toml" <<TOML
[superlink]
default = "federation"

[superlink.federation]
address = "127.0.0.1:$LINK_PORT"
root-certificates = "$PWD/certificates/ca.crt"
TOML
FLWR_TELEMETRY_ENABLED=0 flower-superlink --host 127.0.0.1 --port "$LINK_PORT" --ssl-ca-certfile certificates/ca.crt \
  --ssl-certfile certificates/server.pem --ssl-keyfile certificates/server.key --enable-supernode-auth \
  --disable-runtime-dependency-installation &
FLWR_TELEMETRY_ENABLED=0 python -m engine.flower.gateway --listen "0.0.0.0:$FLEET_PORT" \
  --superlink "127.0.0.1:$LINK_PORT" --certfile certificates/server.pem --keyfile certificates/server.key \
  --ca certificates/ca.crt &
```

Open port {fleet} (the gateway: the Fleet API only) to the SuperNodes' machines and nothing else; the SuperLink's
port {link} listens on 127.0.0.1 only, so registering nodes and starting runs happen on this machine alone.

### 2. Each SuperNode's machine: its own key pair

```text
ssh-keygen -q -t ecdsa -b 384 -N "" -C "supernode" -f supernode_key
```

Send only `supernode_key.pub` to the operator: the private key never leaves the machine.

### 3. The SuperLink's machine: register each public key

`FLWR_TELEMETRY_ENABLED=0 flwr supernode register supernode_key.pub federation` for each key received (it
prints the node's id); tell that node its agent index N (0..{last}) and keep the list.

### 4. Each SuperNode's machine: start

```text
FLWR_TELEMETRY_ENABLED=0 python -m engine.flower.supernode --poll {poll} --superlink HOST:{fleet} \
  --root-certificates ca.crt --auth-supernode-private-key supernode_key \
  --node-config "partition-id=N num-partitions={nodes}" &
```

### 5. The SuperLink's machine: run

The run block above, in this folder.

### Renewal and revocation

Renewal: the SuperLink's certificate is valid 365 days (`openssl x509 -noout -enddate -in
certificates/server.pem`); before it ends, `RENEW=1 bash make_certificates.sh HOST 0` re-issues it from the same
authority and the SuperLink and the gateway are restarted; the SuperNodes keep their `ca.crt` (valid 10 years)
and their keys (Flower's node keys do not expire). Revocation: a node's key is revoked with `flwr supernode ls
federation` (its NODE_ID) and `flwr supernode unregister NODE_ID federation`; a new key is registered as in
step 3. A leaked `server.key` or `ca.key` cannot be revoked alone (there is no revocation list): delete
`certificates/`, make a new authority with `make_certificates.sh`, give the new `ca.crt` to every machine and
restart everything.
'''

SENT = {"fbo": "the broadcasts of every release", "hype": "the vote's instructions and, through SecAgg+, "
        "the other clients' public keys and encrypted key shares"}
NOISE = {"fbo": ("the server's subsample and noise and every agent's own draws come from the operating system's "
                 "entropy of the machine that draws them, never from the run config's seed, which seeds only what "
                 "is meant to be shared (the shared random features and the simulated objective)."),
         "hype": ("every client's share of the noise comes from its machine's operating system entropy, never from "
                  "the run config's seed, which seeds only the simulated losses.")}
SERVER_SEES = {"fbo": ("the agents' replies (their omega vectors) and the broadcasts, not the agents' data; the "
                       "differential privacy of the broadcasts protects each agent from the other participants "
                       "and from anyone who receives them"),
               "hype": ("only the sum of the clients' noisy votes (SecAgg+ masks each one), and the winner; a "
                        "coalition of clients that pooled their own noise shares would remove them from the sum")}


def variables() -> dict:
    return dict(link=LINK_PORT, fleet=FLEET_PORT, node=NODE_PORT, home=FLWR_HOME_DEFAULT, wait=LINK_WAIT_SECONDS,
                poll=NODE_POLL_SECONDS, superexec_poll=SUPEREXEC_POLL_SECONDS)


def readme_commands(nodes: int, insecure: bool) -> str:
    """The bash block that starts the SuperLink (and waits until it answers), the gateway and the SuperNodes."""
    template = INSECURE if insecure else SECURE
    return template.format(nodes=nodes, last=nodes - 1, **variables())


def run_section(nodes: int, insecure: bool) -> str:
    mode = ("insecure: no TLS, no authentication" if insecure
            else "TLS, SuperNode authentication, the agents reaching the Fleet API only")
    gateway = "" if insecure else ", the gateway that lets the SuperNodes reach the Fleet API and nothing else"
    return (f"## Run it on one machine ({mode})\n\nEvery block starts with the same variables, so each works "
            f"in a new shell opened in this folder. {TELEMETRY}\n\nStart the SuperLink{gateway}, wait until "
            f"it answers (at most {LINK_WAIT_SECONDS} s), then one SuperNode per participant (`python -m "
            f"engine.flower.supernode` is Flower's `flower-supernode` asking for work every {NODE_POLL_SECONDS} s "
            f"instead of every 3 s):\n\n```bash\n{readme_commands(nodes, insecure)}```\n\nRun the app (the "
            f"ServerApp waits up to 60 s for the {nodes} nodes and prints a `RESULT` line; `flwr run` exits 0 "
            "whatever happened to the run, so the last line says what the run released and spent, and exits "
            f"non-zero unless it completed):\n\n```bash\n{RUN.format(**variables())}```\n\nStop everything "
            f"started above:\n\n```bash\n{STOP.format(**variables())}```\n")


def pyproject_dependencies() -> str:
    return f'"{ENGINE_DISTRIBUTION}[flower]=={engine.__version__}", "flwr=={FLWR_VERSION}"'


def install_section() -> str:
    return INSTALL.format(dist=ENGINE_DISTRIBUTION, version=engine.__version__, flwr=FLWR_VERSION)


def security_section(tool: str, nodes: int, insecure: bool) -> str:
    if insecure:
        return f"## Security\n\n{INSECURE_WARNING} Export without `--insecure` for TLS and SuperNode authentication.\n"
    return SECURITY.format(nodes=nodes, last=nodes - 1, sent=SENT[tool], server=SERVER_SEES[tool], noise=NOISE[tool],
                           **variables())


def certificate_script(nodes: int) -> str:
    return CERTIFICATES % {"nodes": nodes}
