"""S3 as an ObjectStore through boto3: on moto in-process, and on a moto server on loopback
(a real HTTP endpoint, as a scheduled run in another process sees it)."""
from __future__ import annotations

from typing import Any, Iterator

import pytest

from awsmock import moto_server
from docassay.infra.errors import ConfigError, StorageError
from docassay.infra.objects import ObjectStore
from docassay.infra.s3 import S3ObjectStore, parse_s3_url, read_url

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto")
pytestmark = pytest.mark.usefixtures("aws_offline")


@pytest.fixture
def s3(aws_offline: list[str]) -> Iterator[Any]:
    from moto import mock_aws
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="docs")
        yield client


def exercise(store: S3ObjectStore, raw: Any) -> None:
    """The ObjectStore contract, checked against what S3 itself holds."""
    store.put("a/one.pdf", b"%PDF-1 one")
    store.put("a/two.txt", b"two", content_type="text/plain")
    store.put("b.json", b"{}")
    assert raw.get_object(Bucket="docs", Key="inbox/a/one.pdf")["Body"].read() == b"%PDF-1 one"
    assert store.get("a/two.txt") == b"two" and store.exists("b.json") and not store.exists("nope")
    assert list(store.list()) == ["a/one.pdf", "a/two.txt", "b.json"]
    assert list(store.list("a/")) == ["a/one.pdf", "a/two.txt"]
    head = store.head("a/one.pdf")
    assert head is not None and head.size == 10 and head.etag
    assert store.head("missing") is None
    store.move("a/one.pdf", "done/one.pdf")
    assert not store.exists("a/one.pdf") and store.get("done/one.pdf") == b"%PDF-1 one"
    store.delete("b.json")
    assert not store.exists("b.json")
    store.delete("b.json")                                  # deleting twice is not an error
    with pytest.raises(KeyError):
        store.get("b.json")
    with pytest.raises(StorageError) as err:
        store.get("a/two.txt", max_bytes=2)
    assert err.value.kind == "too_large"
    assert read_url("s3://docs/inbox/a/two.txt") == b"two"


def test_object_store_on_moto_in_process(s3: Any) -> None:
    store = ObjectStore.open("s3://docs/inbox/")
    assert isinstance(store, S3ObjectStore) and store.url == "s3://docs/inbox/"
    exercise(store, s3)
    s3.put_object(Bucket="docs", Key="inbox/folder/", Body=b"")   # console-made "folder" marker
    assert "folder/" not in list(store.list())


def test_keys_are_checked_and_errors_name_the_object(s3: Any) -> None:
    store = S3ObjectStore.from_url("s3://docs/inbox")
    for bad in ("../escape", "/abs", "a//b", "a\x00b"):
        with pytest.raises(ConfigError):
            store.put(bad, b"x")
    missing = S3ObjectStore.from_url("s3://no-such-bucket/x")
    with pytest.raises(StorageError) as err:
        missing.put("k", b"x")
    assert "NoSuchBucket" in err.value.message and "s3://no-such-bucket/x/k" in err.value.message
    with pytest.raises(StorageError):
        list(missing.list())


def test_urls() -> None:
    assert parse_s3_url("s3://bucket/a/b.pdf") == ("bucket", "a/b.pdf")
    assert parse_s3_url("s3://bucket") == ("bucket", "")
    for bad in ("https://x/y", "s3:///key"):
        with pytest.raises(ConfigError):
            parse_s3_url(bad)
    with pytest.raises(ConfigError):
        read_url("s3://bucket")


def test_object_store_on_a_moto_server_over_http(aws_offline: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from docassay.extractors.parsers import parse

    with moto_server() as url:
        monkeypatch.setenv("AWS_ENDPOINT_URL", url)            # what a scheduled run's environment sets
        raw = boto3.client("s3", region_name="us-east-1")
        raw.create_bucket(Bucket="docs")
        store = ObjectStore.open("s3://docs/inbox")
        exercise(store, raw)
        store.put("note.txt", b"Invoice 42\nTotal 9.00\n")
        doc = parse("s3://docs/inbox/note.txt")               # a document read from S3 by the parsers
        assert "Invoice 42" in doc.text and doc.source == "s3://docs/inbox/note.txt"
    assert aws_offline == [], "everything went to the loopback server"
