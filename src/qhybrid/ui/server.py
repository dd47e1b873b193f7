"""The dashboard's HTTP server: the standard library's ``ThreadingHTTPServer``, no dependency.

Secure by default: bound to 127.0.0.1; every request (pages, script, API) must carry the random
token printed in the URL (``?token=`` or the ``X-Qhybrid-Token`` header), else 401 (none) or 403
(a wrong one); the ``Host`` header must name this server (127.0.0.1 or localhost at its port),
else 403, which stops DNS-rebinding pages; the one action, cancel, is a POST. Pages are static
files that fill themselves from the API with ``textContent`` (never HTML from a job), under a
Content-Security-Policy that allows only this server's own script.

    >>> board = Dashboard(port=0)           # a free port
    >>> board.start()                       # in a thread; board.url has the token
    >>> board.stop()
"""
from __future__ import annotations

import hmac
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import parse_qs, quote, unquote, urlsplit

from qhybrid.ui import api

LOOPBACK = "127.0.0.1"
PAGES = {"/": "jobs.html", "/jobs.html": "jobs.html", "/job": "job.html", "/compare": "compare.html"}
STATIC = {"/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
          "/static/style.css": ("style.css", "text/css; charset=utf-8")}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # the token is in the URL
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


def _asset(name: str) -> bytes:
    return resources.files("qhybrid.ui").joinpath("static", name).read_bytes()


class _Handler(BaseHTTPRequestHandler):
    """One request: the Host and token checks, then a page, a static file or the API."""

    server_version = "qhybrid-ui"
    sys_version = ""
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        if self.server.board.verbose:
            super().log_message(format, *args)

    # -- checks ---------------------------------------------------------------
    def _refused(self, query: dict) -> tuple[int, str] | None:
        """Why this request is refused (status, message), or None."""
        host = (self.headers.get("Host") or "").lower()
        if host not in self.server.board.allowed_hosts:
            return HTTPStatus.FORBIDDEN, f"Host {host!r} is not this dashboard"
        token = self.headers.get("X-Qhybrid-Token") or (query.get("token") or [""])[0]
        if not token:
            return HTTPStatus.UNAUTHORIZED, "a token is needed: open the URL that qhybrid ui printed"
        if not hmac.compare_digest(token.encode(), self.server.board.token.encode()):
            return HTTPStatus.FORBIDDEN, "wrong token: open the URL that qhybrid ui printed"
        return None

    # -- answers --------------------------------------------------------------
    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in SECURITY_HEADERS.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, doc) -> None:
        self._send(status, api.dumps(doc), "application/json; charset=utf-8")

    def _page(self, name: str) -> None:
        html = _asset(name).decode().replace("{{TOKEN}}", quote(self.server.board.token, safe=""))
        self._send(HTTPStatus.OK, html.encode(), "text/html; charset=utf-8")

    def _route(self, method: str) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        refused = self._refused(query)
        if refused:
            self._json(refused[0], {"error": refused[1]})
            return
        path = unquote(url.path)
        if method == "GET" and path in PAGES:
            self._page(PAGES[path])
        elif method == "GET" and path in STATIC:
            name, kind = STATIC[path]
            self._send(HTTPStatus.OK, _asset(name), kind)
        elif path.startswith("/api/"):
            status, doc = api.answer(method, path, query)
            self._json(status, doc)
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no page {path!r}"})

    def do_GET(self):  # noqa: N802 - http.server's names
        self._route("GET")

    def do_HEAD(self):  # noqa: N802
        self._route("GET")

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(min(length, 1 << 16))
        self._route("POST")


def _host_names(host: str) -> set[str]:
    """The names a browser may put in the Host header: loopback's, the bound address, and for a
    wildcard bind (0.0.0.0, ::) this machine's name and addresses."""
    import socket

    names = {"127.0.0.1", "localhost"}
    if host not in ("0.0.0.0", "::", ""):
        return names | {f"[{host}]" if ":" in host else host}
    names |= {socket.gethostname(), socket.getfqdn()}
    try:
        names |= {info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None)}
    except OSError:
        pass
    return {f"[{n}]" if ":" in n else n for n in names}


class Dashboard:
    """The dashboard server, in a thread (``start``/``stop``) or in the foreground (``serve_forever``).

    Args:
        host: the interface to bind (127.0.0.1 by default; another one is reachable from elsewhere).
        port: the port (0: a free one).
        token: the access token (default: 32 random URL-safe bytes).
        verbose: log each request on stderr.
    """

    def __init__(self, *, host: str = LOOPBACK, port: int = 8765, token: str | None = None, verbose: bool = False):
        self.token = token or secrets.token_urlsafe(32)
        self.verbose = verbose
        self.httpd = ThreadingHTTPServer((host, port), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.board = self
        self.host, self.port = host, self.httpd.server_address[1]
        self.allowed_hosts = {f"{n.lower()}:{self.port}" for n in _host_names(host)}
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The jobs table's URL, with the token."""
        shown = "127.0.0.1" if self.host in (LOOPBACK, "0.0.0.0", "::", "") else self.host
        return f"http://{shown}:{self.port}/?token={self.token}"

    def start(self) -> "Dashboard":
        """Serve in a daemon thread; return self."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="qhybrid-ui", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve until interrupted."""
        self.httpd.serve_forever()

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


def serve(*, host: str = LOOPBACK, port: int = 8765, open_browser: bool = True, announce=print) -> None:
    """Run the dashboard in the foreground until Ctrl-C, printing its URL (with the token).

    Raises:
        UIError: the port is taken or the interface cannot be bound.
    """
    from qhybrid.errors import UIError

    try:
        board = Dashboard(host=host, port=port)
    except OSError as err:
        raise UIError(f"cannot serve on {host}:{port}: {err.strerror or err}; choose another --port") from None
    announce(f"qhybrid ui: {board.url}")
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(board.url,)).start()
    try:
        board.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        board.httpd.server_close()

