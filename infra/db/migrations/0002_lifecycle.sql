-- 0002_lifecycle: the life of a format (version provenance, health for drift, golden documents'
-- bytes), stale-value history and human review.
--
-- Aurora DSQL compatible (see infra/db/migrate.py): no foreign keys, sequences or triggers; added
-- columns are nullable without defaults; JSON is text (infra.db.dump_json / load_json).

-- Who or what produced a version, why, from which document, and the reference gate's verdict:
-- {"reason": "first document" | "drift" | "person", "parent": 1, "source": "<sha256>",
--  "reference": {"cases": 3, "kept": 3, "new_failures": 0, ...}, "decided_by": "..."}.
ALTER TABLE format_versions ADD COLUMN IF NOT EXISTS meta text;

-- Golden documents keep their bytes in object storage so that a proposed version can be replayed.
ALTER TABLE golden ADD COLUMN IF NOT EXISTS object_key text;
ALTER TABLE golden ADD COLUMN IF NOT EXISTS added_by text;

-- What a reviewer needs beside the record: repair attempts, where the bytes are, which schema.
ALTER TABLE documents ADD COLUMN IF NOT EXISTS attempts integer;
ALTER TABLE documents ADD COLUMN IF NOT EXISTS repairs text;
ALTER TABLE documents ADD COLUMN IF NOT EXISTS object_key text;
ALTER TABLE documents ADD COLUMN IF NOT EXISTS schema_key text;

-- A format's health: consecutive documents whose replay failed its first verification (drift),
-- reset by a document that verifies on the first try.
CREATE TABLE IF NOT EXISTS format_health (
    format_id             text PRIMARY KEY,
    consecutive_failures  integer NOT NULL DEFAULT 0,
    failures              integer NOT NULL DEFAULT 0,
    passes                integer NOT NULL DEFAULT 0,
    last_failure_at       timestamptz,
    last_pass_at          timestamptz,
    updated_at            timestamptz NOT NULL DEFAULT now()
);

-- Values of accepted documents that must not repeat (x-docassay "unique"): an invoice number
-- per seller. value_key and scope_key are normalised (verifiers.history.value_key).
CREATE TABLE IF NOT EXISTS accepted_values (
    schema_key   text NOT NULL,
    field        text NOT NULL,
    value_key    text NOT NULL,
    scope_key    text NOT NULL,
    sha256       text NOT NULL,
    format_id    text,
    accepted_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (schema_key, field, value_key, scope_key, sha256)
);

CREATE INDEX IF NOT EXISTS accepted_values_sha_idx ON accepted_values (sha256);

-- A person's decision on a document: accept it as extracted, or correct values
-- (corrections: {"field": {"from": ..., "to": ...}}).
CREATE TABLE IF NOT EXISTS reviews (
    id           text PRIMARY KEY,
    sha256       text NOT NULL,
    action       text NOT NULL CHECK (action IN ('accept', 'correct')),
    reviewer     text NOT NULL,
    corrections  text,
    note         text,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX IF NOT EXISTS reviews_sha_idx ON reviews (sha256);
