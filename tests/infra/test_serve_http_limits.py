"""The model server's front end against hostile callers: demand needs the token, bodies are bounded."""
from __future__ import annotations

import http.client
import json
import socket
import time
from pathlib import Path

import pytest
from serve_helpers import ServerProcess, write_weights

from docassay.infra.serve.errors import Unauthorized
from docassay.infra.serve.http import HttpLimits

pytestmark = [pytest.mark.distributed, pytest.mark.slow]   # one server start: about 25 s on 2 cores

TOKEN = "limits-admin-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    weights = write_weights(tmp_path_factory.mktemp("limits") / "tiny.pt")
    srv = ServerProcess(weights, max_ranks=1, ranks=1, token=TOKEN, extra=("--autoscale",),
                        log=tmp_path_factory.mktemp("limits-log") / "server.log")
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log.read_text()[-3000:]


def _post(srv: ServerProcess, path: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    host, port = srv.url.removeprefix("http://").split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        c.request("POST", path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        r = c.getresponse()
        return r.status, json.loads(r.read() or b"{}")
    finally:
        c.close()


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_demand_needs_the_admin_token(server: ServerProcess) -> None:
    body = json.dumps({"tokens": 10_000_000, "ttl_s": 600}).encode()
    assert _post(server, "/v1/demand", body)[0] == 401
    assert _post(server, "/v1/demand", body, {"Authorization": "Bearer wrong"})[0] == 403
    with pytest.raises(Unauthorized):
        server.client(token="").announce(10_000_000, 600)
    assert server.client().announce(0, 1) == 0, "a refused announcement must not count"
    assert server.client().status().active_ranks == 1


def _oversized(srv: ServerProcess, path: str, claimed: int) -> tuple[int, dict, float]:
    """Claim `claimed` bytes, send only the first 64 KiB: the answer must come without the rest."""
    host, port = srv.url.removeprefix("http://").split(":")
    t0 = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall((f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   f"Authorization: Bearer {TOKEN}\r\nContent-Length: {claimed}\r\n\r\n").encode())
        s.sendall(b"{" + b" " * (64 * 1024))
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < 10:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    return status, json.loads(payload[:payload.rfind(b"}") + 1] or b"{}"), time.perf_counter() - t0


@pytest.mark.parametrize("path, claimed", [("/v1/score", 200 * 1024 * 1024), ("/v1/demand", 1024 * 1024),
                                           ("/v1/admin/scale", 1024 * 1024)])
def test_an_oversized_body_is_refused_before_it_is_read(server: ServerProcess, path: str, claimed: int) -> None:
    before = _rss_kb(server.proc.pid)
    status, body, _ = _oversized(server, path, claimed)
    assert status == 413 and "larger than" in body["error"]["message"]
    assert _rss_kb(server.proc.pid) - before < 32 * 1024, "the front end grew by more than 32 MB"
    assert server.client().health() == "serving"


def test_a_chunked_body_is_refused(server: ServerProcess) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(b"POST /v1/score HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n")
        head = s.recv(65536).split(b"\r\n", 1)[0]
    assert b" 411 " in head


def test_limits_are_named_and_small_endpoints_take_little(server: ServerProcess) -> None:
    assert HttpLimits.max_small_body_bytes <= 1024 * 1024 < HttpLimits.max_body_bytes <= 64 * 1024 * 1024
