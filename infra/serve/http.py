"""The HTTP front end of the model server (standard library `ThreadingHTTPServer`, HTTP/1.1 keep-alive).

    GET  /v1/health                 {"state": ...}; 200 while serving, scaling or recovering, 503 otherwise
    GET  /v1/status[?refresh=1]     `ServerStatus` as JSON (refresh: ask every rank for its memory first)
    POST /v1/score                  {"documents": [doc, ...]} -> {"scores": [float32 [N_i], ...]}  (wire.py)
                                    a layout reader: {"documents": [layout doc, ...]} -> {"spans": [{"begin", "end"}, ...]}
    POST /v1/demand                 {"tokens": n, "ttl_s": s}: work a client expects to send  (token)
    POST /v1/admin/scale            {"ranks": K, "wait": true} -> the reconfiguration report     (token)
    POST /v1/admin/shutdown                                                                     (token)

Calls marked (token) need `Authorization: Bearer <token>` (the admin token): none -> 401, a wrong
one -> 403 (compared in constant time); /v1/demand is among them because announced demand makes an
autoscaling server grow. Errors are {"error": {"kind": ..., "message": ...}} with the status of
`infra.serve.errors`; a full queue is 503 with `Retry-After`.

Request bodies are bounded per endpoint (HttpLimits): a Content-Length over the bound is refused
with 413 before a byte of the body is read, and the connection is closed, so a hostile body never
reaches memory; a body without Content-Length (chunked) is refused with 411.
"""
from __future__ import annotations

import hmac
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from docassay.infra.serve.engine import Engine
from docassay.infra.serve.errors import BadRequest, ServeError, ServerBusy, Unauthorized
from docassay.infra.serve.wire import decode_doc, decode_layout_doc, encode_array, encode_spans

__all__ = ["ModelHTTPServer", "HttpLimits"]

log = logging.getLogger("docassay.serve")


class HttpLimits:
    max_body_bytes = 32 * 1024 * 1024      # POST /v1/score: documents' encoded features
    max_small_body_bytes = 64 * 1024       # every other endpoint: a few small JSON fields
    max_documents = 256            # per request
    max_tokens = 200_000           # per document
    max_words = 4096               # per layout document (attention is quadratic; the scorer reads 3000)
    idle_timeout_s = 120.0         # a keep-alive connection with no request is closed after this


class ModelHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], engine: Engine, admin_token: str,
                 on_shutdown: Callable[[], None] | None = None) -> None:
        if not admin_token:
            raise ValueError("an admin token is required")
        super().__init__(address, _Handler)
        self.engine = engine
        self.admin_token = admin_token
        self.on_shutdown = on_shutdown
        cfg = engine.front.cfg
        self.kind = engine.front.kind
        self.decode: Callable[[Any, int], Any]
        self.answer: Callable[[list], dict[str, Any]]
        if self.kind == "layout":                     # words and field queries in, span logits out
            self.decode = lambda d, i: decode_layout_doc(d, cfg.n_buckets, cfg.n_flags, HttpLimits.max_words, i)
            self.answer = lambda results: {"spans": [encode_spans(r) for r in results]}
        else:                                         # the ranker: proposal features in, scores out
            self.decode = lambda d, i: decode_doc(d, cfg.n_buckets, cfg.n_numeric, HttpLimits.max_tokens, i)
            self.answer = lambda results: {"scores": [encode_array(p) for p in results]}

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ModelHTTPServer
    timeout = HttpLimits.idle_timeout_s

    def log_message(self, fmt: str, *args: Any) -> None:       # rank 0 logs, at debug level
        log.debug("%s " + fmt, self.address_string(), *args)

    # -- routing ------------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._dispatch({"/v1/health": self._health, "/v1/status": self._status})

    def do_POST(self) -> None:
        self._dispatch({"/v1/score": self._score, "/v1/demand": self._demand,
                        "/v1/admin/scale": self._scale, "/v1/admin/shutdown": self._shutdown})

    def _dispatch(self, routes: dict[str, Callable[[], tuple[int, Any]]]) -> None:
        path = self.path.split("?", 1)[0]
        self._body_read = False                     # one handler serves every request of a keep-alive connection
        try:
            route = routes.get(path)
            if route is None:
                raise BadRequest(f"no such endpoint: {self.command} {path}", status=404)
            status, body = route()
        except ServeError as exc:
            self._drain_body()
            headers = {"Retry-After": "1"} if isinstance(exc, ServerBusy) or exc.status == 503 else {}
            if exc.status == 401:
                headers["WWW-Authenticate"] = 'Bearer realm="docassay-admin"'
            self._send(exc.status, {"error": {"kind": exc.kind, "message": exc.message}}, headers)
            return
        self._send(status, body)

    # -- endpoints ----------------------------------------------------------------------------------

    def _health(self) -> tuple[int, Any]:
        state = self.server.engine.state
        return (200 if state in ("serving", "scaling", "recovering") else 503), {"state": state}

    def _status(self) -> tuple[int, Any]:
        if "refresh=1" in self.path.partition("?")[2].split("&"):
            self.server.engine.refresh_memory()
        return 200, self.server.engine.status().to_json()

    def _score(self) -> tuple[int, Any]:
        body = self._json()
        docs = body.get("documents")
        if not isinstance(docs, list) or not docs:
            raise BadRequest("body must be {\"documents\": [ ... ]} with at least one document")
        if len(docs) > HttpLimits.max_documents:
            raise BadRequest(f"at most {HttpLimits.max_documents} documents per request", status=413)
        s = self.server
        parsed = [s.decode(d, i) for i, d in enumerate(docs)]
        timeout = body.get("timeout_s")
        if timeout is not None and not (isinstance(timeout, (int, float)) and timeout > 0):
            raise BadRequest("timeout_s must be a positive number")
        return 200, s.answer(s.engine.submit(parsed, timeout))

    def _demand(self) -> tuple[int, Any]:
        self._authorize()
        body = self._json()
        tokens, ttl = body.get("tokens"), body.get("ttl_s", 60)
        if not isinstance(tokens, int) or tokens < 0 or not isinstance(ttl, (int, float)) or not 0 < ttl <= 3600:
            raise BadRequest("body must be {\"tokens\": n >= 0, \"ttl_s\": 0 < s <= 3600}")
        self.server.engine.announce(tokens, float(ttl))
        return 200, {"announced_tokens": self.server.engine.announced_tokens()}

    def _scale(self) -> tuple[int, Any]:
        self._authorize()
        body = self._json()
        k, wait = body.get("ranks"), body.get("wait", True)
        if not isinstance(k, int) or isinstance(k, bool):
            raise BadRequest("body must be {\"ranks\": K}")
        report = self.server.engine.request_scale(k, wait=bool(wait))
        return (200, report.to_json()) if report is not None else (202, {"accepted": True, "ranks": k})

    def _shutdown(self) -> tuple[int, Any]:
        self._authorize()
        self._json()
        if self.server.on_shutdown is not None:
            threading.Thread(target=self.server.on_shutdown, name="docassay-serve-shutdown", daemon=True).start()
        return 202, {"stopping": True}

    # -- helpers ------------------------------------------------------------------------------------

    def _authorize(self) -> None:
        got = self.headers.get("Authorization", "")
        if not got:
            raise Unauthorized("admin endpoint: send the server's admin token as 'Authorization: Bearer <token>'")
        scheme, _, token = got.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.server.admin_token.encode()):
            raise Unauthorized("admin endpoint: wrong token", status=403)

    def _json(self) -> dict[str, Any]:
        n = self._length(self._body_limit())
        raw = self.rfile.read(n) if n else b"{}"
        self._body_read = True
        try:
            body = json.loads(raw or b"{}")
        except ValueError as exc:
            raise BadRequest(f"body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise BadRequest("body must be a JSON object")
        return body

    def _body_limit(self) -> int:
        path = self.path.split("?", 1)[0]
        return HttpLimits.max_body_bytes if path == "/v1/score" else HttpLimits.max_small_body_bytes

    def _length(self, limit: int) -> int:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            self.close_connection = True
            raise BadRequest("send the body with a Content-Length, not chunked", status=411)
        try:
            n = int(self.headers.get("Content-Length", "0"))
        except ValueError as exc:
            self.close_connection = True
            raise BadRequest("bad Content-Length") from exc
        if n < 0 or n > limit:
            self.close_connection = True              # the body is never read: drop the connection
            self._body_read = True
            raise BadRequest(f"body of {n:,} bytes is larger than this endpoint takes ({limit:,} bytes)", status=413)
        return n

    def _drain_body(self) -> None:
        if getattr(self, "_body_read", False) or self.command != "POST":
            return
        try:
            n = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            n = -1
        if 0 < n <= self._body_limit():
            self.rfile.read(n)
        elif n != 0:
            self.close_connection = True
        self._body_read = True

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
