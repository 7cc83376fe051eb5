"""The model server's front end under a hostile body: its RSS before, at peak and after.

    python -m bench.serve_hostile [--code DIR] [--mb 200]

Starts `docassay model serve --max-ranks 1` of the checkout `--code` (default this one) with the
shipped weights, reads rank 0's VmRSS/VmHWM from /proc, posts one `--mb` MB body of valid JSON (one
document whose `ids` is a huge base64 string) to /v1/score, sent in full as a client that ignores
an early answer would, and reads them again.
Also posts /v1/demand without a token and reports the answer's status line.
"""
from __future__ import annotations

import argparse
import socket
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-hostile-token"


def _mem(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def _post(host: str, port: int, path: str, body_len: int, headers: str = "") -> str:
    with socket.create_connection((host, port), timeout=300) as s:
        s.sendall((f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{headers}"
                   f"Content-Length: {body_len}\r\n\r\n").encode())
        head, tail = b'{"documents": [{"ids": "', b'"}]}'      # valid JSON: one huge base64 string
        filler = b"A" * (1 << 20)
        sent = 0
        try:
            s.sendall(head)
            sent = len(head)
            while sent < body_len - len(tail):
                part = filler[: min(len(filler), body_len - len(tail) - sent)]
                s.sendall(part)
                sent += len(part)
            s.sendall(tail)
            sent += len(tail)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            return s.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
        except (ConnectionResetError, OSError):
            return f"connection closed by the server after {sent:,} bytes"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", type=Path, default=ROOT)
    ap.add_argument("--mb", type=int, default=200)
    args = ap.parse_args(argv)
    code = args.code.resolve()
    sys.path.insert(0, str(code))
    from docassay.infra.serve.process import ServerProcess

    log = Path("/tmp/docassay-serve-hostile.log")
    srv = ServerProcess(code / "infra/model/weights/moe.pt", max_ranks=1, ranks=1, token=TOKEN, log=log,
                        extra=("--autoscale",))
    try:
        host, port = srv.url.removeprefix("http://").split(":")
        time.sleep(1.0)
        rss0, _ = _mem(srv.proc.pid)
        status = _post(host, int(port), "/v1/score", args.mb * 1024 * 1024)
        time.sleep(2.0)
        rss1, hwm = _mem(srv.proc.pid)
        with socket.create_connection((host, int(port)), timeout=30) as s:
            body = b'{"tokens": 100000000, "ttl_s": 600}'
            s.sendall(b"POST /v1/demand HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            demand = s.recv(4096).split(b"\r\n", 1)[0].decode()
        print(f"code: {code}")
        print(f"POST /v1/score with a {args.mb} MB body: {status}; front end RSS {rss0:.0f} MB before, "
              f"peak {hwm:.0f} MB, {rss1:.0f} MB after")
        print(f"POST /v1/demand without a token: {demand}")
    finally:
        srv.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
