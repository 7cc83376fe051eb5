"""Aurora DSQL: recognising its endpoints and signing in with an IAM auth token.

DSQL has no passwords: the password is a short-lived token that the client signs locally with
its AWS credentials (boto3's `generate_db_connect_admin_auth_token` for the `admin` role,
`generate_db_connect_auth_token` for any other role). Signing makes no network call. A DSN that
names a DSQL endpoint and carries no password gets a fresh token at every connect; TLS is
required.
"""
from __future__ import annotations

import os
import re

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from infra.errors import ConfigError

__all__ = ["is_dsql_host", "dsql_region", "with_iam_token"]

# <cluster id>.dsql.<region>.on.aws  (also the dual-stack / FIPS variants, e.g. .dsql-fips.)
_HOST = re.compile(r"^[a-z0-9]+\.dsql(?:-[a-z0-9]+)?\.([a-z0-9-]+)\.on\.aws$", re.IGNORECASE)
TOKEN_TTL_S = 900


def is_dsql_host(host: str | None) -> bool:
    return bool(host) and _HOST.match(host or "") is not None


def dsql_region(host: str) -> str:
    m = _HOST.match(host)
    if not m:
        raise ConfigError(f"{host!r} is not an Aurora DSQL endpoint", setting="db")
    return m.group(1)


def with_iam_token(dsn: str) -> str:
    """Return `dsn` with an IAM auth token as password (and sslmode=require) for a DSQL endpoint.

    DSNs for other hosts, and DSNs that already carry a password, come back unchanged. The region
    comes from the endpoint name, else `$AWS_REGION`.
    """
    params = conninfo_to_dict(dsn)
    host = str(params.get("host") or "")
    if not is_dsql_host(host) or params.get("password"):
        return dsn
    try:
        import boto3
    except ImportError as exc:   # optional dependency: docassay[aws]
        raise ConfigError("connecting to Aurora DSQL needs boto3 (pip install 'docassay[aws]')",
                          setting="db") from exc
    region = dsql_region(host) or os.environ.get("AWS_REGION")
    user = str(params.get("user") or "admin")
    client = boto3.client("dsql", region_name=region)
    if user == "admin":
        token = client.generate_db_connect_admin_auth_token(host, region, TOKEN_TTL_S)
    else:
        token = client.generate_db_connect_auth_token(host, region, TOKEN_TTL_S)
    extra = {"password": token, "user": user, "dbname": params.get("dbname") or "postgres"}
    if not params.get("sslmode"):
        extra["sslmode"] = "require"
    return make_conninfo(dsn, **extra)
