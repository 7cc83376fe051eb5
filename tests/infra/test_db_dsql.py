"""Aurora DSQL endpoints: recognised by name, signed in with a locally generated IAM token."""
from __future__ import annotations

import pytest
from psycopg.conninfo import conninfo_to_dict

from docassay.infra.db import dialect_of
from docassay.infra.db.dsql import dsql_region, is_dsql_host, with_iam_token

HOST = "abcdefghijklmnopqrstuvwxyz.dsql.eu-west-1.on.aws"


def test_dsql_hosts_are_recognised() -> None:
    assert is_dsql_host(HOST) and dsql_region(HOST) == "eu-west-1"
    assert not is_dsql_host("db.example.com") and not is_dsql_host("/tmp/sock") and not is_dsql_host("")
    assert dialect_of(f"host={HOST} user=admin") == "dsql"
    assert dialect_of("postgresql://postgres:@/postgres?host=/tmp/x") == "postgresql"


def test_iam_token_fills_the_password(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("boto3")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    params = conninfo_to_dict(with_iam_token(f"host={HOST} user=admin"))
    assert params["host"] == HOST and params["sslmode"] == "require" and params["dbname"] == "postgres"
    token = str(params["password"])
    assert token.startswith(HOST) and "Action=DbConnectAdmin" in token and "X-Amz-Signature=" in token
    other = conninfo_to_dict(with_iam_token(f"host={HOST} user=reader"))
    assert "Action=DbConnect&" in str(other["password"])


def test_other_dsns_are_left_alone() -> None:
    dsn = "host=db.example.com user=u password=p"
    assert with_iam_token(dsn) == dsn
    assert with_iam_token(f"host={HOST} user=admin password=given") == f"host={HOST} user=admin password=given"
