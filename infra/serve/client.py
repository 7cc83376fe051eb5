"""The client of a model server (what `--model-url` and `docassay model scale|status` use).

    client = ModelClient("http://127.0.0.1:8765")
    scores = client.score([(ids, id_start, num), ...])     # float32 [N_i] per document, bit for bit
    spans = client.read([layout_doc, ...])                   # a layout server: (begin, end) logits per document
    client.status()                                          # ServerStatus
    client.scale(2, token=...)                               # ReconfigReport as a dict

Thread-safe: one keep-alive connection per thread. A full queue (503 serve_busy) and a connection
that fails (refused, reset: a server starting or restarting) are retried with backoff until the
request's deadline; other errors raise at once (`infra.serve.errors`), a server that answers it is
failed or stopping included.
"""
from __future__ import annotations

import http.client
import json
import threading
import time
from typing import Any, Sequence
from urllib.parse import urlsplit

import numpy as np

from docassay.infra.serve.errors import RequestTimeout, ServeError, ServerBusy, ServerUnavailable, for_status
from docassay.infra.serve.status import ServerStatus
from docassay.infra.serve.wire import decode_array, decode_spans, encode_doc, encode_layout_doc

__all__ = ["ModelClient", "MODEL_URL_ENV", "DEFAULT_URL"]

MODEL_URL_ENV = "DOCASSAY_MODEL_URL"
DEFAULT_URL = "http://127.0.0.1:8765"
_RETRY = (ServerBusy, ServerUnavailable)


class ModelClient:
    def __init__(self, url: str = DEFAULT_URL, *, timeout_s: float = 300.0, token: str | None = None,
                 backoff_s: float = 0.05, max_backoff_s: float = 1.0) -> None:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        if parts.scheme not in ("http", "") or not parts.hostname:
            raise ServeError(f"model URL must be http://host:port, got {url!r}", status=400)
        self.url = f"http://{parts.hostname}:{parts.port or 80}"
        self.host, self.port = parts.hostname, parts.port or 80
        self.timeout_s, self.token = timeout_s, token
        self.backoff_s, self.max_backoff_s = backoff_s, max_backoff_s
        self._local = threading.local()

    # -- API ------------------------------------------------------------------------------------------

    def score(self, docs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray]], *,
              timeout_s: float | None = None) -> list[np.ndarray]:
        """sigmoid(logit) float32 [N_i] for each document (ids [T], id_start [N_i + 1], num [N_i, F])."""
        timeout = timeout_s or self.timeout_s
        body = {"documents": [encode_doc(*d) for d in docs], "timeout_s": timeout}
        out = self._call("POST", "/v1/score", body, timeout_s=timeout)
        scores = out.get("scores")
        if not isinstance(scores, list) or len(scores) != len(docs):
            raise ServeError("malformed answer from the model server", status=502)
        return [decode_array(s, "float32", 1, "scores") for s in scores]

    def read(self, docs: Sequence, *, timeout_s: float | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """A layout server's reading of each `infra.model.layout.LayoutDoc`: (begin [F, N+1] logits, the
        last column "absent"; end [F, N] logits), the in-process `LayoutReader`'s bits."""
        timeout = timeout_s or self.timeout_s
        body = {"documents": [encode_layout_doc(d) for d in docs], "timeout_s": timeout}
        out = self._call("POST", "/v1/score", body, timeout_s=timeout)
        spans = out.get("spans")
        if not isinstance(spans, list) or len(spans) != len(docs):
            raise ServeError("malformed answer from the model server (a ranker server answers 'scores', "
                             "a layout server 'spans')", status=502)
        return [decode_spans(s, f"spans[{i}]") for i, s in enumerate(spans)]

    def score_one(self, ids: np.ndarray, id_start: np.ndarray, num: np.ndarray) -> np.ndarray:
        return self.score([(ids, id_start, num)])[0]

    def status(self, *, refresh: bool = False) -> ServerStatus:
        """The server's status; `refresh` asks every rank for fresh memory figures first."""
        path = "/v1/status?refresh=1" if refresh else "/v1/status"
        return ServerStatus.from_json(self._call("GET", path, retry=False))

    def health(self) -> str:
        """The server's state; raises ServerUnavailable when it does not answer 200."""
        return self._call("GET", "/v1/health", retry=False)["state"]

    def scale(self, ranks: int, *, token: str | None = None, wait: bool = True) -> dict[str, Any]:
        """Scale to `ranks` active ranks; with `wait`, returns the reconfiguration report."""
        return self._call("POST", "/v1/admin/scale", {"ranks": ranks, "wait": wait}, token=token or self.token,
                          retry=False)

    def shutdown(self, *, token: str | None = None) -> None:
        self._call("POST", "/v1/admin/shutdown", {}, token=token or self.token, retry=False)

    def announce(self, tokens: int, ttl_s: float = 60.0) -> int:
        """Tell the server (its autoscaler) that about `tokens` model tokens will follow within `ttl_s`."""
        return self._call("POST", "/v1/demand", {"tokens": int(tokens), "ttl_s": ttl_s}, token=self.token,
                          retry=False)["announced_tokens"]

    def wait_ready(self, timeout_s: float = 120.0) -> str:
        """Poll /v1/health until the server serves (or raise ServerUnavailable after `timeout_s`)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self.health()
            except ServerUnavailable:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- transport ------------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: dict | None = None, *, token: str | None = None,
              timeout_s: float | None = None, retry: bool = True) -> dict[str, Any]:
        timeout = timeout_s or self.timeout_s
        deadline = time.monotonic() + timeout
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        wait = self.backoff_s
        while True:
            try:
                return self._once(method, path, data, headers, max(deadline - time.monotonic(), 0.1) + 5.0)
            except _RETRY as exc:
                gone = isinstance(exc, ServerUnavailable) and exc.status != 0     # failed or stopping: it said so
                if not retry or gone or time.monotonic() + wait > deadline:
                    if isinstance(exc, ServerUnavailable) and exc.status == 0 and retry:
                        raise RequestTimeout(f"model server {self.url} unreachable for {timeout:.0f} s: {exc.message}",
                                             status=0) from exc
                    raise
                time.sleep(wait)
                wait = min(wait * 2, self.max_backoff_s)

    def _once(self, method: str, path: str, data: bytes | None, headers: dict[str, str], timeout: float) -> dict[str, Any]:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            raw = resp.read()
        except TimeoutError as exc:
            self.close()
            raise RequestTimeout(f"no answer from {self.url} within {timeout:.0f} s", status=0) from exc
        except (ConnectionError, http.client.HTTPException, OSError) as exc:
            self.close()
            raise ServerUnavailable(f"{self.url}: {type(exc).__name__}: {exc}", status=0) from exc
        if resp.getheader("Connection", "").lower() == "close":
            self.close()
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError as exc:
            raise ServeError(f"{self.url}{path}: answer is not JSON (HTTP {resp.status})", status=resp.status) from exc
        if resp.status >= 400:
            err = payload.get("error") if isinstance(payload, dict) else None
            err = err if isinstance(err, dict) else {}
            raise for_status(resp.status, err.get("kind"), err.get("message") or f"HTTP {resp.status}")
        return payload
