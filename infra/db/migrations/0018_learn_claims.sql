-- 0018_learn_claims: learning a new format is claimed in the database (extractors/library.py).
--
-- A process about to learn a format locks the claim row (SELECT ... FOR UPDATE in a transaction
-- on a connection of its own), matches again, learns, and commits. Two processes on one home (or
-- one database) therefore never learn the same layout twice; a process that dies releases the
-- claim with its connection. On Aurora DSQL the lock does not block (optimistic concurrency), so
-- there the claim narrows the race instead of closing it.
CREATE TABLE IF NOT EXISTS learn_claims (
    name        text PRIMARY KEY,
    holder      text,
    claimed_at  timestamptz,
    claims      bigint NOT NULL DEFAULT 0
)
