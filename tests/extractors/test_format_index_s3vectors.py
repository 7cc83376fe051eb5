"""The S3 Vectors format index: put/get/list/delete on moto; QueryVectors (which moto lacks)
through botocore's Stubber, and through an in-test emulation over moto's stored vectors that
checks the backend ranks formats exactly as the faiss index does.

No call leaves the machine: `aws_offline` blocks every non-loopback connection, and a test shows
that an unstubbed QueryVectors inside `mock_aws` is stopped by it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pytest

from awsmock import emulate_query_vectors
from docassay.extractors.format_index import FormatIndex, FormatIndexBase
from docassay.extractors.format_index_s3vectors import S3VectorsFormatIndex, parse_s3vectors_url
from docassay.infra.errors import ConfigError

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto")

DIM = 16
pytestmark = pytest.mark.usefixtures("aws_offline")


def vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def moto_client(aws_offline: None) -> Iterator[Any]:
    from moto import mock_aws
    with mock_aws():
        yield boto3.client("s3vectors", region_name="us-east-1")


def test_urls() -> None:
    assert parse_s3vectors_url("s3vectors://formats-bucket/invoices") == ("formats-bucket", "invoices")
    for bad in ("s3://b/i", "s3vectors://only-bucket", "s3vectors://b/i/extra"):
        with pytest.raises(ConfigError):
            parse_s3vectors_url(bad)


def test_put_get_list_remove_on_moto(moto_client: Any) -> None:
    ix = S3VectorsFormatIndex("formats-bucket", "formats", DIM, client=moto_client, max_exemplars=3)
    assert isinstance(ix, FormatIndexBase) and ix.dim == DIM and ix.formats() == []
    ix.add("fmt-a", vec(1), {"schema": "k1", "status": "active"})
    ix.add("fmt-a", vec(2))                                   # a second exemplar keeps the format's meta
    ix.add("fmt-a", vec(2) * 3.0)                              # same direction: a duplicate, not stored
    ix.add("fmt-b", vec(3), {"schema": "k2"})
    assert ix.formats() == ["fmt-a", "fmt-b"] and len(ix) == 2
    assert ix.exemplars("fmt-a").shape == (2, DIM)
    np.testing.assert_allclose(ix.exemplars("fmt-a")[0], vec(1), atol=1e-6)
    assert ix.get_meta("fmt-a") == {"schema": "k1", "status": "active"}
    stored = moto_client.get_vectors(vectorBucketName="formats-bucket", indexName="formats", keys=["fmt-a#1"],
                                     returnMetadata=True)["vectors"][0]
    assert stored["metadata"] == {"schema": "k1", "status": "active", "format_id": "fmt-a"}

    ix.set_meta("fmt-a", {"schema": "k1", "status": "archived"})
    assert ix.get_meta("fmt-a")["status"] == "archived"
    for s in (4, 5, 6):                                        # beyond max_exemplars: #0 always stays
        ix.add("fmt-a", vec(s))
    ex = ix.exemplars("fmt-a")
    assert ex.shape == (3, DIM)
    np.testing.assert_allclose(ex[0], vec(1), atol=1e-6)
    assert ix.remove("fmt-a") and not ix.remove("fmt-a")
    assert ix.formats() == ["fmt-b"]
    with pytest.raises(KeyError):
        ix.get_meta("fmt-a")
    with pytest.raises(KeyError):
        ix.set_meta("fmt-a", {})


def test_opening_checks_dimension_and_metric(moto_client: Any) -> None:
    S3VectorsFormatIndex("formats-bucket", "formats", DIM, client=moto_client)
    assert S3VectorsFormatIndex.from_url("s3vectors://formats-bucket/formats", client=moto_client).dim == DIM
    with pytest.raises(ConfigError, match="16-dimensional"):
        S3VectorsFormatIndex("formats-bucket", "formats", DIM * 2, client=moto_client)
    moto_client.create_index(vectorBucketName="formats-bucket", indexName="euclid", dataType="float32",
                             dimension=DIM, distanceMetric="euclidean")
    with pytest.raises(ConfigError, match="cosine"):
        S3VectorsFormatIndex("formats-bucket", "euclid", DIM, client=moto_client)
    with pytest.raises(Exception, match="NotFound"):
        S3VectorsFormatIndex("formats-bucket", "missing", DIM, client=moto_client, create=False)


def test_bad_vectors_and_metadata_are_refused(moto_client: Any) -> None:
    ix = S3VectorsFormatIndex("formats-bucket", "formats", DIM, client=moto_client)
    with pytest.raises(ValueError):
        ix.add("fmt", np.zeros(DIM))
    with pytest.raises(ValueError):
        ix.add("fmt", vec(1)[:4])
    with pytest.raises(ValueError):
        ix.add("a#b", vec(1))
    with pytest.raises(ValueError):
        ix.add("fmt", vec(1), {"nested": {"a": 1}})
    with pytest.raises(ValueError):
        ix.add("fmt", vec(1), {"format_id": "other"})


def test_query_request_and_response_through_the_stubber(aws_offline: None) -> None:
    from botocore.stub import ANY, Stubber

    client = boto3.client("s3vectors", region_name="us-east-1")
    index_info = {"index": {"vectorBucketName": "formats-bucket", "indexName": "formats", "dimension": DIM,
                            "distanceMetric": "cosine", "dataType": "float32",
                            "indexArn": "arn:aws:s3vectors:us-east-1:123456789012:bucket/formats-bucket/index/formats",
                            "creationTime": "2026-01-01T00:00:00Z"}}
    where = {"vectorBucketName": "formats-bucket", "indexName": "formats"}
    with Stubber(client) as stub:
        stub.add_response("get_index", index_info, where)
        ix = S3VectorsFormatIndex("formats-bucket", "formats", DIM, client=client, max_exemplars=4)
        flt = {"$and": [{"schema": "k1"}, {"status": {"$in": ["active", "pending_review"]}}]}
        stub.add_response("query_vectors", {
            "vectors": [{"key": "fmt-a#1", "distance": 0.05, "metadata": {"format_id": "fmt-a", "schema": "k1"}},
                        {"key": "fmt-a#0", "distance": 0.10, "metadata": {"format_id": "fmt-a", "schema": "k1"}},
                        {"key": "fmt-b#0", "distance": 0.40, "metadata": {"format_id": "fmt-b", "schema": "k1"}},
                        {"key": "fmt-c#0", "distance": 0.90, "metadata": {"format_id": "fmt-c", "schema": "k1"}}],
            "distanceMetric": "cosine"},
            {**where, "topK": 8, "queryVector": {"float32": ANY}, "filter": flt, "returnMetadata": True,
             "returnDistance": True})
        found = ix.search(vec(1), k=2, filter=flt)
        assert [(m.format_id, round(m.similarity, 6), m.meta) for m in found] == [
            ("fmt-a", 0.95, {"schema": "k1"}), ("fmt-b", 0.6, {"schema": "k1"})]

        # a callable filter is applied to the returned metadata; the query asks for the most hits
        stub.add_response("query_vectors", {
            "vectors": [{"key": "fmt-a#0", "distance": 0.1, "metadata": {"format_id": "fmt-a", "n": 1}},
                        {"key": "fmt-b#0", "distance": 0.2, "metadata": {"format_id": "fmt-b", "n": 2}}],
            "distanceMetric": "cosine"},
            {**where, "topK": 100, "queryVector": {"float32": ANY}, "returnMetadata": True, "returnDistance": True})
        found = ix.search(vec(1), k=5, filter=lambda fid, meta: meta["n"] == 2)
        assert [m.format_id for m in found] == ["fmt-b"]
        stub.assert_no_pending_responses()
    with Stubber(client) as stub:
        stub.add_response("query_vectors", {"vectors": [{"key": "fmt-a#0", "distance": 0.3,
                                                         "metadata": {"format_id": "fmt-a"}}],
                                                "distanceMetric": "cosine"})
        assert ix.match(vec(1), threshold=0.8) is None       # similarity 0.7 is below the threshold


def test_ranks_like_the_faiss_index(moto_client: Any, tmp_path: Path) -> None:
    """Same adds, same queries: the S3 Vectors backend and faiss find the same formats."""
    s3v = S3VectorsFormatIndex("formats-bucket", "formats", DIM, client=moto_client, max_exemplars=4)
    emulate_query_vectors(moto_client.meta.events)
    local = FormatIndex(tmp_path, DIM, max_exemplars=4)
    rng = np.random.default_rng(0)
    for i in range(12):
        for ix in (s3v, local):
            ix.add(f"fmt-{i}", vec(i), {"schema": "k1" if i % 2 else "k2", "n": i})
    for i in range(0, 12, 3):
        extra = vec(i) + 0.2 * vec(100 + i)
        for ix in (s3v, local):
            ix.add(f"fmt-{i}", extra)
    for q in range(8):
        query = vec(q) + 0.3 * rng.normal(size=DIM).astype(np.float32)
        for flt in (None, {"schema": "k1"}, {"n": {"$gte": 6}}):
            a = [(m.format_id, round(m.similarity, 4), m.meta) for m in s3v.search(query, k=3, filter=flt)]
            b = [(m.format_id, round(m.similarity, 4), m.meta) for m in local.search(query, k=3, filter=flt)]
            assert a == b, (q, flt)


def test_an_unmocked_query_never_leaves_the_machine(aws_offline: list[str]) -> None:
    """moto has no QueryVectors: inside mock_aws the call goes on to AWS. The guard stops it."""
    from botocore.config import Config
    from botocore.exceptions import EndpointConnectionError
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("s3vectors", region_name="us-east-1", config=Config(retries={"max_attempts": 1}))
        S3VectorsFormatIndex("formats-bucket", "formats", DIM, client=client)
        with pytest.raises(EndpointConnectionError):
            client.query_vectors(vectorBucketName="formats-bucket", indexName="formats", topK=1,
                                 queryVector={"float32": vec(1).tolist()})
    assert aws_offline and all(a.startswith("s3vectors.") for a in aws_offline), aws_offline
