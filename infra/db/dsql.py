"""Aurora DSQL: recognising its endpoints and signing in with an IAM auth token.

DSQL has no passwords: the password is a short-lived token that the client signs locally with
its AWS credentials (boto3's `generate_db_connect_admin_auth_token` for the `admin` role,
`generate_db_connect_auth_token` for any other role). Signing makes no network call. A DSN that
names a DSQL endpoint and carries no password gets a fresh token at every connect; TLS is
required.

    dsql_dsn("dsql://<cluster id or endpoint>[:port][/dbname][?region=..&user=..]") -> libpq DSN
    dsql_violations(sql_text) -> list[str]     what in SQL text Aurora DSQL would refuse

What docassay keeps inside DSQL's limits (checked by `dsql_violations` in the tests, for every
migration, the example rule packs and the inbox ledger's statements): no foreign keys, sequences
(serial, identity, nextval), temporary tables, triggers, extensions, PL/pgSQL, advisory locks,
TRUNCATE or LISTEN/NOTIFY; JSON in text columns; one DDL statement per transaction (infra/db/
migrate.py). Writes are short transactions that modify far fewer rows than DSQL's per-transaction
limit (3,000), and every write is retried on an optimistic-concurrency conflict (SQLSTATE 40001,
OC000/OC001; infra/db/retry.py). A DSQL connection lasts at most an hour; tokens are only checked
when a connection opens.
"""
from __future__ import annotations

import os
import re
from urllib.parse import parse_qsl, unquote, urlsplit

from psycopg.conninfo import conninfo_to_dict, make_conninfo

from docassay.infra.db.errors import SqlTextError
from docassay.infra.db.sqltext import split_statements, tokenize
from docassay.infra.errors import ConfigError

__all__ = ["is_dsql_host", "dsql_region", "with_iam_token", "is_dsql_url", "dsql_dsn", "dsql_violations",
           "DSQL_SCHEME"]

DSQL_SCHEME = "dsql://"
_CLUSTER_ID = re.compile(r"^[a-z0-9]{20,40}$")

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


def is_dsql_url(db: str | None) -> bool:
    return bool(db) and str(db).startswith(DSQL_SCHEME)


def dsql_dsn(url: str) -> str:
    """`dsql://HOST[:port][/dbname][?region=R&user=U]` as a libpq DSN for `with_iam_token`.

    HOST is a cluster endpoint (`<id>.dsql.<region>.on.aws`) or a bare cluster id, which becomes
    the endpoint in `region` (else `$AWS_REGION`). User defaults to `admin`, database to
    `postgres`, sslmode to `require`; other query parameters pass through as libpq parameters.
    """
    parts = urlsplit(url)
    if parts.scheme != "dsql" or not parts.hostname:
        raise ConfigError(f"{url!r} is not a DSQL URL (dsql://<cluster endpoint or id>[/dbname])", setting="db")
    if parts.password:
        raise ConfigError("a DSQL URL carries no password: docassay signs an IAM auth token", setting="db")
    query = dict(parse_qsl(parts.query))
    region = query.pop("region", None)
    host = parts.hostname
    if _CLUSTER_ID.match(host):
        from docassay.infra.aws import default_region
        host = f"{host}.dsql.{region or default_region()}.on.aws"
    elif not is_dsql_host(host):
        raise ConfigError(f"{host!r} is neither an Aurora DSQL endpoint (<id>.dsql.<region>.on.aws) "
                          "nor a cluster id", setting="db")
    params = {"host": host, "port": str(parts.port or 5432),
              "user": unquote(parts.username) if parts.username else query.pop("user", "admin"),
              "dbname": unquote(parts.path.lstrip("/")) or "postgres", "sslmode": query.pop("sslmode", "require"),
              **query}
    return make_conninfo("", **params)


# What DSQL refuses, as sequences of bare words (comments, strings and quoted names never match).
_REFUSED: tuple[tuple[tuple[str, ...], str], ...] = (
    (("references",), "foreign keys"), (("foreign", "key"), "foreign keys"),
    (("create", "temp"), "temporary tables"), (("create", "temporary"), "temporary tables"),
    (("create", "global", "temporary"), "temporary tables"), (("create", "local", "temporary"), "temporary tables"),
    (("create", "sequence"), "sequences"), (("serial",), "sequences"), (("bigserial",), "sequences"),
    (("smallserial",), "sequences"), (("as", "identity"), "identity columns"), (("nextval",), "sequences"),
    (("create", "trigger"), "triggers"), (("create", "or", "replace", "trigger"), "triggers"),
    (("create", "extension"), "extensions"), (("plpgsql",), "PL/pgSQL"), (("truncate",), "TRUNCATE"),
    (("listen",), "LISTEN/NOTIFY"), (("notify",), "LISTEN/NOTIFY"), (("vacuum",), "VACUUM"),
)
_DDL_ONLY: tuple[tuple[str, str], ...] = (("jsonb", "jsonb columns (store JSON as text)"),
                                          ("json", "json columns (store JSON as text)"))


def dsql_violations(sql_text: str) -> list[str]:
    """What in `sql_text` (one or more statements) Aurora DSQL would refuse; [] when nothing.

    A lexical check over bare words: it sees through comments, string literals and quoted
    identifiers, and does not parse SQL. Casts such as `record::jsonb` are fine in queries; a
    `jsonb` column type in CREATE/ALTER TABLE is not.
    """
    try:
        statements = split_statements(sql_text)
    except SqlTextError as exc:
        return [f"unreadable SQL: {exc}"]
    found: list[str] = []
    for st in statements:
        toks = [t for t in tokenize(st.text) if t.kind not in ("space", "comment")]
        words = [t.word if t.kind == "word" else "" for t in toks]
        head = " ".join(w for w in words[:2])
        where = f"line {st.line}: " if getattr(st, "line", None) else ""
        for seq, what in _REFUSED:
            n = len(seq)
            if any(tuple(words[i:i + n]) == seq for i in range(len(words) - n + 1)):
                found.append(f"{where}{what} ({' '.join(seq).upper()})")
        if any(w.startswith("pg_advisory") for w in words):
            found.append(f"{where}advisory locks")
        if head in ("create table", "alter table"):
            for i, w in enumerate(words):
                prev = toks[i - 1].text if i else ""
                for word, what in _DDL_ONLY:
                    if w == word and prev != ":":          # `::jsonb` is a cast, not a column type
                        found.append(f"{where}{what}")
    return list(dict.fromkeys(found))
