-- 0016: a reviewer may reject a document (the record is not to be used; it never becomes golden).
-- The action is checked where reviews are written (infra.review_store.REVIEW_ACTIONS); dropping the
-- old CHECK is idempotent.
ALTER TABLE reviews DROP CONSTRAINT IF EXISTS reviews_action_check;
