"""A loopback HTTP/1.1 server for LoopbackParityTests.

Binds 127.0.0.1 on an ephemeral port and prints the port on the first line of stdout. It ends
when its standard input closes (the test process stopped or went away), on SIGTERM, or after
LIFETIME seconds at the latest, so it never outlives the test run.

Every request may carry an `X-Parity-Case` header naming the test case; the server remembers
"METHOD PATH" per case, and `/log?case=NAME` answers the list as JSON.

Routes:
  /plain            200, a JSON body and `X-Parity: plain`
  /head             HEAD: 200 with the headers of a 12-byte text body, and no body
  /redirect         302 to /plain
  /missing          404 with a JSON body
  /slow             200 after SLOW_SECONDS (for a request that times out sooner)
  /hold             never answers; returns when the client closes the connection
  /arrived?case=N   200 once a /hold request of case N has arrived (504 after WAIT_SECONDS)
  /log?case=N       the requests case N made, as a JSON array of "METHOD PATH"
"""

import json
import os
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

LIFETIME = 600
SLOW_SECONDS = 2.0
WAIT_SECONDS = 10.0
HOLD_SECONDS = 30.0

PLAIN_BODY = json.dumps({"login": "octocat", "id": 1}, separators=(",", ":")).encode()
HEAD_BODY = b"twelve bytes"
MISSING_BODY = json.dumps({"message": "Not Found"}, separators=(",", ":")).encode()

_lock = threading.Condition()
_seen = {}  # case -> ["METHOD PATH", ...]
_held = set()  # cases whose /hold request has arrived


def _exit_when_stdin_closes():
    try:
        while sys.stdin.buffer.read(4096):
            pass
    finally:
        os._exit(0)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "ParityServer/1"

    def log_message(self, format, *args):
        pass  # quiet: the test reads stdout for the port only

    def _record(self):
        case = self.headers.get("X-Parity-Case")
        if case is None:
            return
        with _lock:
            _seen.setdefault(case, []).append(f"{self.command} {urlsplit(self.path).path}")
            _lock.notify_all()

    def _answer(self, status, body=b"", content_type=None, extra=None, send_body=True):
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body and body:
            self.wfile.write(body)

    def do_HEAD(self):
        self._record()
        path = urlsplit(self.path).path
        if path == "/head":
            self._answer(200, HEAD_BODY, "text/plain; charset=utf-8", send_body=False)
        else:
            self._answer(404, MISSING_BODY, "application/json", send_body=False)

    def do_GET(self):
        self._record()
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        path = parts.path
        try:
            if path == "/plain":
                self._answer(200, PLAIN_BODY, "application/json", {"X-Parity": "plain"})
            elif path == "/redirect":
                self._answer(302, extra={"Location": "/plain"})
            elif path == "/missing":
                self._answer(404, MISSING_BODY, "application/json")
            elif path == "/slow":
                threading.Event().wait(SLOW_SECONDS)
                self._answer(200, PLAIN_BODY, "application/json")
            elif path == "/hold":
                self._hold()
            elif path == "/arrived":
                self._arrived(query.get("case", [""])[0])
            elif path == "/log":
                with _lock:
                    lines = list(_seen.get(query.get("case", [""])[0], []))
                self._answer(200, json.dumps(lines).encode(), "application/json")
            else:
                self._answer(404, MISSING_BODY, "application/json")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went first (a timeout, a cancel)

    def _hold(self):
        case = self.headers.get("X-Parity-Case", "")
        with _lock:
            _held.add(case)
            _lock.notify_all()
        # Wait for the client to close the connection; reading returns b"" then.
        self.connection.settimeout(HOLD_SECONDS)
        try:
            while self.connection.recv(4096):
                pass
        except OSError:
            pass
        self.close_connection = True

    def _arrived(self, case):
        with _lock:
            arrived = _lock.wait_for(lambda: case in _held, timeout=WAIT_SECONDS)
        self._answer(200 if arrived else 504, b"arrived" if arrived else b"not yet")


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().server_bind()


def main():
    limit = threading.Timer(LIFETIME, os._exit, (0,))
    limit.daemon = True
    limit.start()
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=_exit_when_stdin_closes, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
