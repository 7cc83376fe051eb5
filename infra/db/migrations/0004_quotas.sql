-- 0004_quotas: daily model-token quotas (infra/quota.py) and the status of every document of a run.
--
-- Aurora DSQL compatible (see infra/db/migrate.py): no sequences, foreign keys or triggers.
-- Counters only ever change through single guarded UPDATEs (infra/quota.py), which are atomic on
-- PostgreSQL (row lock, re-checked condition) and on DSQL (optimistic conflict, retried).

-- A limit set for one project or user, at most the configured default (NULL: the default applies).
CREATE TABLE IF NOT EXISTS quota_limits (
    scope          text NOT NULL CHECK (scope IN ('project', 'user')),
    subject        text NOT NULL,
    input_tokens   bigint CHECK (input_tokens >= 0),
    output_tokens  bigint CHECK (output_tokens >= 0),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, subject)
);

-- Tokens per subject and quota day (the calendar date in the configured time zone): `used` holds
-- settled true counts, `reserved` what running model calls have set aside. calls / refused count
-- model calls settled and reservations turned down.
CREATE TABLE IF NOT EXISTS quota_usage (
    scope            text NOT NULL,
    subject          text NOT NULL,
    day              date NOT NULL,
    used_input       bigint NOT NULL DEFAULT 0,
    used_output      bigint NOT NULL DEFAULT 0,
    reserved_input   bigint NOT NULL DEFAULT 0,
    reserved_output  bigint NOT NULL DEFAULT 0,
    calls            bigint NOT NULL DEFAULT 0,
    refused          bigint NOT NULL DEFAULT 0,
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, subject, day)
);

-- Open reservations, one row per subject charged: settling deletes them; one left behind by a
-- crashed worker is released after `expires_at`, so it cannot hold the quota for the rest of the day.
CREATE TABLE IF NOT EXISTS quota_reservations (
    id             text NOT NULL,
    scope          text NOT NULL,
    subject        text NOT NULL,
    day            date NOT NULL,
    input_tokens   bigint NOT NULL,
    output_tokens  bigint NOT NULL,
    expires_at     timestamptz NOT NULL,
    PRIMARY KEY (id, scope, subject)
);

CREATE INDEX IF NOT EXISTS quota_reservations_expiry_idx ON quota_reservations (expires_at);

-- The outcome of every document of a run, readable ones or not (documents holds one row per content
-- hash; unreadable inputs have none). status as in results.jsonl.
CREATE TABLE IF NOT EXISTS run_documents (
    run_id         text NOT NULL,
    idx            integer NOT NULL,
    source         text NOT NULL,
    sha256         text,
    status         text NOT NULL,
    format_id      text,
    error_kind     text,
    error_message  text,
    input_tokens   bigint NOT NULL DEFAULT 0,
    output_tokens  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, idx)
);

CREATE INDEX IF NOT EXISTS run_documents_status_idx ON run_documents (run_id, status);
