-- 0003_inbox: scheduled runs over an inbox (flows/inbox.py): who holds an inbox, which documents
-- were claimed (by content hash), finished and reported, and each run's report.
--
-- Aurora DSQL compatible (see infra/db/migrate.py and infra/db/dsql.py): no foreign keys,
-- sequences, triggers, temporary tables or advisory locks; ids are application-made text; the
-- results row is JSON in a text column. Every change is one short guarded statement, atomic on
-- PostgreSQL (row lock) and on DSQL (optimistic conflict, retried).

-- One run at a time per inbox: a lease with an expiry, renewed by the holder's heartbeat. A run
-- that dies stops renewing; the next run takes the inbox once the lease has expired.
CREATE TABLE IF NOT EXISTS inbox_leases (
    inbox        text PRIMARY KEY,             -- the inbox URL (a folder path or s3://bucket/prefix/)
    holder       text NOT NULL,                -- run id
    host         text,
    pid          integer,
    acquired_at  timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);

-- A document of an inbox, by content hash. state: claimed (a run is on it) -> done (its row is
-- stored and its result object written). A `claimed` row whose run no longer holds the lease
-- belongs to a run that died: the next lease holder takes it over (attempts + 1).
CREATE TABLE IF NOT EXISTS inbox_claims (
    inbox        text NOT NULL,
    sha256       text NOT NULL,
    source       text NOT NULL,                -- where the document was found
    state        text NOT NULL CHECK (state IN ('claimed', 'done')),
    run_id       text NOT NULL,                -- the run that holds (claimed) or finished (done) it
    attempts     integer NOT NULL DEFAULT 1,
    status       text,                         -- the results row's status, once done
    result       text,                         -- the results.jsonl row (JSON text), once done
    result_key   text,                         -- key of the per-document result object under the destination
    archived_to  text,                         -- where the document was moved after it was done
    reported_in  text,                         -- the run whose results.jsonl lists it
    claimed_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    PRIMARY KEY (inbox, sha256)
);

CREATE INDEX IF NOT EXISTS inbox_claims_report_idx ON inbox_claims (inbox, reported_in);

-- One row per inbox run; report_key is set once its results.jsonl is written ('' when it had
-- nothing to report).
CREATE TABLE IF NOT EXISTS inbox_runs (
    id           text PRIMARY KEY,
    inbox        text NOT NULL,
    dest         text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    report_key   text,
    summary      text
);

CREATE INDEX IF NOT EXISTS inbox_runs_inbox_idx ON inbox_runs (inbox, report_key);
