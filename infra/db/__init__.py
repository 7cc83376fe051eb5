"""docassay's database layer: embedded PostgreSQL by default, any PostgreSQL or Aurora DSQL by DSN.

    connect(settings) -> psycopg.Connection        autocommit, schema migrated
    Database(dsn).connect() / .write(fn)           explicit DSN; write = one retried transaction
    resolve_dsn(settings) -> str                   settings.db, or the embedded server's DSN
    transact(conn, fn) / retry_on_conflict(fn)     retry 40001 / DSQL OC00x conflicts with backoff
    apply_migrations(conn, dialect=...)            numbered migrations, each once (infra/db/migrations/)
    embedded.ensure_running(home) / embedded.stop(data_dir) / embedded.data_dir_for(home)
    dump_json / load_json                          JSON in text columns (DSQL has no jsonb columns)
"""
from docassay.infra.db import embedded
from docassay.infra.db.connection import Database, connect, dialect_of, resolve_dsn
from docassay.infra.db.errors import EmbeddedServerError, MigrationError, SqlTextError
from docassay.infra.db.jsontext import dump_json, load_json
from docassay.infra.db.migrate import Migration, apply_migrations, discover
from docassay.infra.db.retry import DEFAULT_RETRY, RetryPolicy, is_retryable, retry_on_conflict, transact

__all__ = [
    "Database", "connect", "resolve_dsn", "dialect_of", "embedded",
    "apply_migrations", "discover", "Migration",
    "RetryPolicy", "DEFAULT_RETRY", "is_retryable", "retry_on_conflict", "transact",
    "dump_json", "load_json",
    "EmbeddedServerError", "MigrationError", "SqlTextError",
]
