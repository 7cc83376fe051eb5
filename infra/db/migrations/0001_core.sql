-- 0001_core: the tables the pipeline needs.
--
-- Aurora DSQL compatible (see infra/db/migrate.py): no foreign keys, sequences, temporary
-- tables, triggers or extensions; ids are application-made text (sha256, uuid, slug).
-- JSON documents are stored as text holding JSON (DSQL has jsonb only at query run time);
-- query them with a cast, e.g. `record::jsonb ->> 'invoice_number'`, and write them with
-- infra.db.dump_json / read them with infra.db.load_json.

-- A document format: its fingerprint (float32 vector, little-endian bytes) and lifecycle.
CREATE TABLE IF NOT EXISTS formats (
    id           text PRIMARY KEY,
    status       text NOT NULL DEFAULT 'pending_review'
                 CHECK (status IN ('pending_review', 'active', 'archived')),
    fingerprint  bytea,
    meta         text NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Versions of a format's extraction instructions (version 1, 2, ... per format).
-- produced_by: who wrote it (model | fixer | human | ...); status: proposed | active | rejected | superseded.
CREATE TABLE IF NOT EXISTS format_versions (
    format_id     text NOT NULL,
    version       integer NOT NULL CHECK (version >= 1),
    instructions  text NOT NULL,
    produced_by   text NOT NULL,
    status        text NOT NULL DEFAULT 'proposed',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (format_id, version)
);

-- One row per distinct document (by content hash): its latest outcome.
-- status: passed | repaired | needs_review | failed | quota_exceeded | error (as in results.jsonl).
CREATE TABLE IF NOT EXISTS documents (
    sha256          text PRIMARY KEY,
    source          text NOT NULL,
    format_id       text,
    format_version  integer,
    status          text NOT NULL,
    record          text,
    verification    text,
    provenance      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS documents_format_idx ON documents (format_id, format_version);

-- A format's golden set: accepted records, the reference for a proposed new version.
CREATE TABLE IF NOT EXISTS golden (
    format_id  text NOT NULL,
    sha256     text NOT NULL,
    record     text NOT NULL,
    reason     text,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (format_id, sha256)
);

-- One row per batch run.
CREATE TABLE IF NOT EXISTS runs (
    id           text PRIMARY KEY,
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    summary      text
);
