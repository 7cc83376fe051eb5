"""The review station's guard: who may talk to it, from where, and what a page may load.

    Guard(config) wraps the ASGI app:
      * Host: without a token (loopback), only the loopback names (no DNS rebinding onto
        127.0.0.1); with a token, any name unless `allowed_hosts` lists them;
      * token: required unless bound to loopback; given once as `?token=` (then kept in an
        HttpOnly SameSite=Strict cookie and stripped from the address) or as
        `Authorization: Bearer TOKEN`; anything else is 401;
      * CSRF: every state-changing request must be JSON, carry `X-CSRF-Token` equal to the
        session's token (in a SameSite=Strict cookie and in the page), and come from our own
        Origin when the browser names one; otherwise 403;
      * headers: a Content-Security-Policy that allows only our own scripts, styles and images
        (no inline script, no CDN), nosniff, no framing, no referrer.
"""
from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field
from urllib.parse import urlencode

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["SecurityConfig", "Guard", "is_loopback", "CSP", "TOKEN_COOKIE", "CSRF_COOKIE", "CSRF_HEADER"]

TOKEN_COOKIE = "docassay_review_token"
CSRF_COOKIE = "docassay_review_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {"content-security-policy": CSP, "x-content-type-options": "nosniff", "x-frame-options": "DENY",
           "referrer-policy": "no-referrer", "cross-origin-opener-policy": "same-origin",
           "cross-origin-resource-policy": "same-origin"}


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass
class SecurityConfig:
    host: str = "127.0.0.1"
    port: int = 8790
    token: str | None = None                     # required when `host` is not loopback
    allowed_hosts: tuple[str, ...] = ()          # extra Host names (a proxy's public name)
    csrf_token: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def __post_init__(self) -> None:
        if not is_loopback(self.host) and not self.token:
            raise ValueError(f"serving on {self.host} (not loopback) needs a token")

    def host_names(self) -> set[str]:
        names = {self.host, *self.allowed_hosts}
        if is_loopback(self.host):
            names |= {"127.0.0.1", "localhost", "[::1]"}
        return {n.lower() for n in names}


def _same(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a).encode(), str(b).encode())


class Guard:
    def __init__(self, app: ASGIApp, config: SecurityConfig) -> None:
        self.app, self.config = app, config
        self.names = config.host_names()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        req = Request(scope)
        early = self._check(req)
        send = self._with_headers(send, req)
        if early is not None:
            await early(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check(self, req: Request) -> Response | None:
        host = (req.headers.get("host") or "").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        cfg = self.config
        if (not cfg.token or cfg.allowed_hosts) and name not in self.names:
            return PlainTextResponse("unknown host", status_code=400)
        if cfg.token:
            given = req.query_params.get("token")
            if given is not None and req.method in SAFE_METHODS:
                if not _same(given, cfg.token):
                    return PlainTextResponse("wrong token", status_code=401)
                rest = [(k, v) for k, v in req.query_params.multi_items() if k != "token"]
                url = URL(path=req.url.path, query=urlencode(rest))
                resp = RedirectResponse(str(url), status_code=303)
                resp.set_cookie(TOKEN_COOKIE, cfg.token, httponly=True, samesite="strict", path="/")
                return resp
            auth = req.headers.get("authorization") or ""
            bearer = auth[7:].strip() if auth.lower().startswith("bearer ") else None
            if not (_same(req.cookies.get(TOKEN_COOKIE), cfg.token) or _same(bearer, cfg.token)):
                return PlainTextResponse("a token is required: open the address `review serve` printed", status_code=401)
        if req.method not in SAFE_METHODS:
            origin = req.headers.get("origin")
            if origin is not None and origin != "null" and \
                    origin.lower().split("://", 1)[-1] != host:
                return PlainTextResponse("cross-origin request refused", status_code=403)
            if origin == "null":
                return PlainTextResponse("cross-origin request refused", status_code=403)
            if not (req.headers.get("content-type") or "").startswith("application/json"):
                return PlainTextResponse("state changes take JSON", status_code=415)
            if not (_same(req.headers.get(CSRF_HEADER), cfg.csrf_token)
                    and _same(req.cookies.get(CSRF_COOKIE), cfg.csrf_token)):
                return PlainTextResponse("missing or wrong CSRF token: reload the page", status_code=403)
        return None

    def _with_headers(self, send: Send, req: Request) -> Send:
        csrf = self.config.csrf_token
        set_csrf = req.cookies.get(CSRF_COOKIE) != csrf

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {k.lower() for k, _ in headers}
                for k, v in HEADERS.items():
                    if k.encode() not in present:
                        headers.append((k.encode(), v.encode()))
                if set_csrf:
                    headers.append((b"set-cookie", f"{CSRF_COOKIE}={csrf}; Path=/; SameSite=Strict; HttpOnly".encode()))
                message = {**message, "headers": headers}
            await send(message)
        return wrapped
