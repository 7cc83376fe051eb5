"""Test fixtures for the AWS edge: fake credentials, and a guard that no test reaches the network.

moto answers the operations it implements in-process; an operation it lacks (S3 Vectors
QueryVectors, Textract AnalyzeDocument) would otherwise be sent to the real endpoint. `aws_offline`
sets fake credentials and a region, clears profiles and endpoint overrides, and makes every socket
connection to anything but loopback or a Unix socket fail, so such a call fails here instead of
leaving the machine. Use it in every test that builds a boto3 client (a parameter `aws_offline`, or
`pytest.mark.usefixtures("aws_offline")`); tests/conftest.py loads this module as a plugin, so no import.
"""
from __future__ import annotations

import contextlib
import ipaddress
import socket
from typing import Any, Iterator

import pytest

FAKE_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
            "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1"}
CLEARED = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE",
           "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL_S3VECTORS", "AWS_ENDPOINT_URL_TEXTRACT")


class NetworkBlocked(OSError):
    pass


def _loopback(address: Any) -> bool:
    if isinstance(address, (str, bytes)):          # AF_UNIX path
        return True
    host = address[0] if isinstance(address, tuple) and address else ""
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(str(host).split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture
def aws_offline(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    """Yields the list of addresses a test tried to reach and was refused (normally empty)."""
    for k, v in FAKE_ENV.items():
        monkeypatch.setenv(k, v)
    for k in CLEARED:
        monkeypatch.delenv(k, raising=False)
    empty = tmp_path_factory.mktemp("aws-config") / "none"
    monkeypatch.setenv("AWS_CONFIG_FILE", str(empty))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(empty))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    blocked: list[str] = []
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def connect(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            blocked.append(repr(address))
            raise NetworkBlocked(f"test tried to reach {address!r}: tests must not leave the machine")
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> Any:
        if not _loopback(address):
            blocked.append(repr(address))
            raise NetworkBlocked(f"test tried to reach {address!r}: tests must not leave the machine")
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in (None, "localhost") and not _loopback((host,)):
            blocked.append(str(host))
            raise NetworkBlocked(f"test tried to resolve {host!r}: tests must not leave the machine")
        return real_getaddrinfo(host, *args, **kwargs)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield blocked


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """A moto server on loopback (a real HTTP endpoint, usable from other processes); yields its URL.

    Point boto3 at it with `AWS_ENDPOINT_URL=<url>` (plus fake credentials, see FAKE_ENV)."""
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)        # one line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()


def emulate_query_vectors(events: Any) -> None:
    """Answer S3 Vectors QueryVectors (which moto lacks) from the vectors moto stores: exact
    cosine distance, the metadata filter evaluated by `matches_filter`, nearest first, topK.
    `events` is a client's `meta.events` or a session's `events` (clients made afterwards)."""
    import boto3
    import numpy as np
    from botocore.awsrequest import AWSResponse

    from docassay.extractors.format_index import matches_filter

    asked: list[dict] = []

    def remember(params: dict, **_: Any) -> None:          # the caller's parameters, before serialising
        asked.append(dict(params))

    def answer(**_: Any) -> Any:
        params = asked.pop()
        reader = boto3.client("s3vectors", region_name="us-east-1")
        where = {"vectorBucketName": params["vectorBucketName"], "indexName": params["indexName"]}
        stored = reader.list_vectors(**where, returnData=True, returnMetadata=True)["vectors"]
        q = np.asarray(params["queryVector"]["float32"], dtype=np.float32)
        hits = []
        for v in stored:
            meta = v.get("metadata") or {}
            if params.get("filter") and not matches_filter(meta, params["filter"]):
                continue
            d = np.asarray(v["data"]["float32"], dtype=np.float32)
            cos = float(q @ d / (np.linalg.norm(q) * np.linalg.norm(d)))
            hits.append({"key": v["key"], "distance": 1.0 - cos, "metadata": meta})
        hits.sort(key=lambda h: h["distance"])
        return AWSResponse("", 200, {}, None), {"vectors": hits[:params["topK"]], "distanceMetric": "cosine"}

    events.register("before-parameter-build.s3vectors.QueryVectors", remember)
    events.register("before-call.s3vectors.QueryVectors", answer)
