"""Errors of the model server and its client.

    DocassayError (infra.errors)
    └── ServeError                 kind "serve": the server failed a request for a reason below
        ├── BadRequest             "serve_bad_request": malformed input (HTTP 400, 404, 413); never retried
        ├── Unauthorized           "serve_unauthorized": admin call without the token (401) or a wrong one (403)
        ├── ServerBusy             "serve_busy": the request queue is full (503 + Retry-After); the client retries
        ├── ServerUnavailable      "serve_unavailable": starting, stopping, failed, or not reachable
        ├── RequestTimeout         "serve_timeout": no answer within the deadline (504, or the client's own)
        └── WeightsUnreadable      "serve_weights": a lost rank's experts could not be read again (rank 0 only)

Each carries `status` (the HTTP status, 0 when no answer came) and the server's message.
"""
from __future__ import annotations

from typing import Any

from docassay.infra.errors import DocassayError

__all__ = ["ServeError", "BadRequest", "Unauthorized", "ServerBusy", "ServerUnavailable", "RequestTimeout",
           "WeightsUnreadable", "for_status"]


class ServeError(DocassayError):
    kind = "serve"
    status = 500

    def __init__(self, message: str, *, status: int | None = None, **context: Any) -> None:
        super().__init__(message, **context)
        if status is not None:
            self.status = status


class BadRequest(ServeError):
    kind = "serve_bad_request"
    status = 400


class Unauthorized(ServeError):
    kind = "serve_unauthorized"
    status = 401


class ServerBusy(ServeError):
    kind = "serve_busy"
    status = 503


class ServerUnavailable(ServeError):
    kind = "serve_unavailable"
    status = 503


class RequestTimeout(ServeError):
    kind = "serve_timeout"
    status = 504


class WeightsUnreadable(ServeError):
    kind = "serve_weights"
    status = 503


_BY_KIND = {c.kind: c for c in (ServeError, BadRequest, Unauthorized, ServerBusy, ServerUnavailable, RequestTimeout)}


def for_status(status: int, kind: str | None, message: str) -> ServeError:
    """The error a client raises for an HTTP error answer."""
    cls = _BY_KIND.get(kind or "")
    if cls is None:
        cls = {400: BadRequest, 401: Unauthorized, 403: Unauthorized, 404: BadRequest, 413: BadRequest,
               503: ServerUnavailable, 504: RequestTimeout}.get(status, ServeError)
    return cls(message, status=status)
