"""``python -m engine.flower.gateway``: the agents' only door to the SuperLink, passing the Fleet API alone.

Flower 1.42's SuperLink serves its Fleet API (what a SuperNode calls), its Control API (registering and removing
SuperNodes, starting and stopping runs: what ``flwr`` calls) and its Runtime API on one HTTP port, and the open
distribution has no operator authentication for Control (``flwr/superlink/config_loader.py``: OIDC account
authentication is not in it). Anyone who can reach that port with the federation's ``ca.crt`` can register a key
of their own and start runs. So the SuperLink listens on the operator's loopback only (``--host 127.0.0.1``) and
this gateway listens where the agents can reach it: a threaded HTTPS server with the SuperLink's own certificate
that forwards a POST to one of the Fleet endpoints a registered SuperNode uses (:data:`FLEET_PATHS`) to the
SuperLink, over TLS checked against ``ca.crt``, and answers everything else with 404 (logged). SuperNode
authentication is untouched: the SuperLink checks every forwarded request's signed headers as before. Standard
library only; it does not change Flower.

    python -m engine.flower.gateway --listen 0.0.0.0:9092 --superlink 127.0.0.1:9093 \\
        --certfile certificates/server.pem --keyfile certificates/server.key --ca certificates/ca.crt
"""

from __future__ import annotations

import argparse
import http.client
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

# What a registered SuperNode calls (flwr/supernode/fleet_http_client.py), without register-node and
# unregister-node: only the operator adds or removes nodes (flwr supernode register / unregister, on loopback).
FLEET_PATHS = frozenset("/v1/fleet/" + name for name in (
    "activate-node", "deactivate-node", "send-node-heartbeat", "pull-messages", "push-messages", "get-run",
    "get-fab", "push-object", "pull-object", "confirm-message-received"))
HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade", "host", "content-length"))
UPSTREAM_SECONDS = 120.0     # a forwarded request's time limit
IDLE_SECONDS = 300.0         # an idle agent connection is closed after this
HANDSHAKE_SECONDS = 30.0
MAX_BODY_MB = 256


def address(text: str, what: str) -> tuple[str, int]:
    """HOST:PORT (an IPv6 host in brackets) as (host, port); raises ValueError with one sentence."""
    host, _, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{what} must be HOST:PORT, e.g. 127.0.0.1:9093, got {text!r}.")
    return host, int(port)


class FleetGateway(ThreadingHTTPServer):
    """The gateway's server: TLS with the SuperLink's certificate, one thread per agent connection."""

    daemon_threads = True

    def __init__(self, listen: tuple[str, int], superlink: tuple[str, int], certfile: str, keyfile: str, ca: str,
                 max_body_mb: float = MAX_BODY_MB):
        self.server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.server_side.load_cert_chain(certfile, keyfile)
        super().__init__(listen, FleetHandler)
        self.upstream = superlink
        self.client_side = ssl.create_default_context(cafile=ca)
        self.max_body = int(max_body_mb * 1e6)
        self.refused = 0
        self.lock = threading.Lock()

    def finish_request(self, request, client_address) -> None:
        """The TLS handshake in the connection's own thread (a slow agent does not hold up the others)."""
        request.settimeout(HANDSHAKE_SECONDS)
        try:
            request = self.server_side.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            request.close()
            return
        request.settimeout(IDLE_SECONDS)
        super().finish_request(request, client_address)

    def connection(self) -> http.client.HTTPSConnection:
        host, port = self.upstream
        return http.client.HTTPSConnection(host, port, context=self.client_side, timeout=UPSTREAM_SECONDS)


class FleetHandler(BaseHTTPRequestHandler):
    """Forwards the Fleet endpoints, refuses the rest; keeps one SuperLink connection per agent connection."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_SECONDS
    server: FleetGateway

    def setup(self) -> None:
        super().setup()
        self.upstream: http.client.HTTPSConnection | None = None

    def finish(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
        super().finish()

    def log_message(self, format, *args) -> None:      # noqa: A002 - the base class's name
        pass        # forwarded requests are not logged (a round makes many); refusals are, in _refuse

    def _refuse(self, status: int, why: str) -> None:
        with self.server.lock:
            self.server.refused += 1
        print(f"gateway: refused {self.command} {self.path[:200]} from {self.client_address[0]}: {why}",
              file=sys.stderr, flush=True)
        body = f"{why}\n".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _read_body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            self._refuse(411, "a request body must come with its Content-Length")
            return None
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = -1
        if not 0 <= length <= self.server.max_body:
            self.close_connection = True
            self._refuse(413, "the request body is missing its length or too large")
            return None
        return self.rfile.read(length)

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None:
            return
        if urlsplit(self.path).path not in FLEET_PATHS:
            self._refuse(404, "only the Fleet API is served here; the federation is controlled on the "
                              "SuperLink's machine")
            return
        headers = {name: value for name, value in self.headers.items() if name.lower() not in HOP_BY_HOP}
        for attempt in (1, 2):       # a kept-alive SuperLink connection may have closed: one new one
            try:
                if self.upstream is None:
                    self.upstream = self.server.connection()
                self.upstream.request("POST", self.path, body=body, headers=headers)
                response = self.upstream.getresponse()
                payload = response.read()
                break
            except (OSError, http.client.HTTPException) as err:
                if self.upstream is not None:
                    self.upstream.close()
                self.upstream = None
                if attempt == 2:
                    self._refuse(502, f"the SuperLink did not answer ({type(err).__name__})")
                    return
        self.send_response(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _not_post(self) -> None:
        self._read_body()
        self._refuse(405, "only POST to the Fleet API is served here")

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _not_post


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.flower.gateway", description=__doc__.splitlines()[0])
    parser.add_argument("--listen", default="0.0.0.0:9092", help="where the SuperNodes connect (HOST:PORT)")
    parser.add_argument("--superlink", default="127.0.0.1:9093", help="the SuperLink on this machine (HOST:PORT)")
    parser.add_argument("--certfile", default="certificates/server.pem", help="the SuperLink's TLS certificate")
    parser.add_argument("--keyfile", default="certificates/server.key", help="its private key")
    parser.add_argument("--ca", default="certificates/ca.crt", help="the federation's certificate authority")
    parser.add_argument("--max-body-mb", type=float, default=MAX_BODY_MB, help="largest request body, MB")
    args = parser.parse_args(argv)
    try:
        listen, superlink = address(args.listen, "--listen"), address(args.superlink, "--superlink")
        gateway = FleetGateway(listen, superlink, args.certfile, args.keyfile, args.ca, args.max_body_mb)
    except (ValueError, OSError, ssl.SSLError) as err:
        print(f"The gateway cannot start: {err}", file=sys.stderr)
        return 2
    print(f"gateway: serving the Fleet API on {args.listen}, forwarding to the SuperLink at {args.superlink}",
          flush=True)
    try:
        gateway.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        gateway.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
