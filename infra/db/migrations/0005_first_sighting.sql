-- 0005_first_sighting: where a document (by content hash) was first seen, so that the same bytes
-- arriving again under another name or in another batch can name their first sighting
-- (results row `duplicate_of`). `created_at` already holds when; `first_source` holds where.
--
-- Aurora DSQL compatible: an added nullable column without a default.

ALTER TABLE documents ADD COLUMN IF NOT EXISTS first_source text;
