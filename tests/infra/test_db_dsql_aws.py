"""Aurora DSQL as the database: `dsql://` URLs, the IAM token signed by boto3 (locally, no call),
and the SQL docassay sends kept inside what DSQL supports. The SQL itself runs on PostgreSQL in the
other tests (migrations on the DSQL statement-by-statement path, the inbox ledger under REPEATABLE
READ with conflict retries); no DSQL endpoint is reachable here."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from psycopg.conninfo import conninfo_to_dict

from docassay.infra.config import Settings
from docassay.infra.db import dialect_of, discover, resolve_dsn
from docassay.infra.db.dsql import dsql_dsn, dsql_violations, with_iam_token
from docassay.infra.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
ENDPOINT = "abcdefghijklmnopqrstuvwxyz.dsql.us-east-1.on.aws"


def test_dsql_urls_become_dsns() -> None:
    p = conninfo_to_dict(dsql_dsn(f"dsql://{ENDPOINT}"))
    assert p == {"host": ENDPOINT, "port": "5432", "user": "admin", "dbname": "postgres", "sslmode": "require"}
    p = conninfo_to_dict(dsql_dsn("dsql://reader@abcdefghijklmnopqrstuvwxyz/docs?region=us-east-2&connect_timeout=5"))
    assert p["host"] == "abcdefghijklmnopqrstuvwxyz.dsql.us-east-2.on.aws" and p["user"] == "reader"
    assert p["dbname"] == "docs" and p["connect_timeout"] == "5"
    for bad in ("dsql://db.example.com", "dsql://admin:secret@" + ENDPOINT, "postgresql://x", "dsql://"):
        with pytest.raises(ConfigError):
            dsql_dsn(bad)


def test_settings_db_switch_selects_dsql(aws_offline: list[str]) -> None:
    pytest.importorskip("boto3")                  # signs the IAM token
    dsn = resolve_dsn(Settings.load(db=f"dsql://{ENDPOINT}"))
    assert dialect_of(dsn) == "dsql"
    signed = conninfo_to_dict(with_iam_token(dsn))
    token = str(signed["password"])
    assert token.startswith(ENDPOINT) and "Action=DbConnectAdmin" in token and "X-Amz-Signature=" in token
    assert aws_offline == [], "the token is signed locally"


def test_cluster_ids_from_the_dsql_api_on_moto(aws_offline: list[str]) -> None:
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("moto")
    from moto import mock_aws
    with mock_aws():
        cluster = boto3.client("dsql", region_name="us-east-1").create_cluster(deletionProtectionEnabled=False)
        dsn = dsql_dsn(f"dsql://{cluster['identifier']}?region=us-east-1")
    assert conninfo_to_dict(dsn)["host"] == f"{cluster['identifier']}.dsql.us-east-1.on.aws"
    assert "X-Amz-Signature=" in str(conninfo_to_dict(with_iam_token(dsn))["password"])


@pytest.mark.parametrize("sql, what", [
    ("CREATE TABLE a (id text PRIMARY KEY, b text REFERENCES other (id))", "foreign keys"),
    ("ALTER TABLE a ADD CONSTRAINT f FOREIGN KEY (b) REFERENCES other (id)", "foreign keys"),
    ("CREATE TEMP TABLE t (a int)", "temporary tables"),
    ("create global temporary table t (a int)", "temporary tables"),
    ("CREATE TABLE t (id serial PRIMARY KEY)", "sequences"),
    ("CREATE SEQUENCE s", "sequences"),
    ("SELECT nextval('s')", "sequences"),
    ("CREATE TABLE t (id bigint GENERATED ALWAYS AS IDENTITY)", "identity columns"),
    ("CREATE EXTENSION pgcrypto", "extensions"),
    ("CREATE TRIGGER t BEFORE INSERT ON a FOR EACH ROW EXECUTE FUNCTION f()", "triggers"),
    ("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$", "PL/pgSQL"),
    ("CREATE TABLE t (doc jsonb)", "jsonb columns"),
    ("SELECT pg_advisory_xact_lock(1)", "advisory locks"),
    ("TRUNCATE documents", "TRUNCATE"),
])
def test_what_dsql_refuses_is_found(sql: str, what: str) -> None:
    found = dsql_violations(sql)
    assert any(what in f for f in found), found


def test_what_dsql_accepts_passes() -> None:
    ok = """
        -- comments may say REFERENCES, serial or temp table: they are not code
        CREATE TABLE IF NOT EXISTS t (id text PRIMARY KEY, note text DEFAULT 'references serial');
        SELECT record::jsonb ->> 'invoice_number' FROM documents WHERE status = 'passed';
        CREATE INDEX IF NOT EXISTS t_idx ON t (note)"""
    assert dsql_violations(ok) == []


def test_shipped_migrations_and_rule_packs_stay_inside_dsql() -> None:
    for m in discover():
        assert dsql_violations(m.sql) == [], f"{m.version:04d}_{m.name}"
    packs = sorted((ROOT / "examples").glob("*/rules/*.sql"))
    assert packs
    for pack in packs:
        assert dsql_violations(pack.read_text()) == [], pack


def test_rules_run_as_one_query_without_temporary_tables() -> None:
    """What the rule engine sends to the database for a rule: CTEs over bound VALUES, nothing DSQL lacks."""
    from docassay.rules.loader import load_rules
    from docassay.rules.relations import bind_record, relation_schema, wrap_rule

    schema = json.loads((ROOT / "examples/invoices/schema.json").read_text())
    bound = bind_record(relation_schema(schema), {"invoice_number": "1", "gross_total": 10, "net_total": 8,
                                                   "line_items": [{"description": "x", "line_total": 8}]})
    for rule in load_rules(ROOT / "examples/invoices/rules"):
        text = wrap_rule(bound, rule.sql).as_string(None)
        assert dsql_violations(text) == [], rule.name
