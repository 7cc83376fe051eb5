"""Fixtures shared by the infra tests."""
from __future__ import annotations

import socket

import pytest


@pytest.fixture(scope="module")
def world():
    """A torch.distributed world of one rank (gloo) on a free loopback port, closed after the module."""
    from docassay.infra.serve.comm import init_world

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    w = init_world(0, 1, "127.0.0.1", port, timeout_s=60)
    try:
        yield w
    finally:
        w.close()
