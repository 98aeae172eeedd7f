-- Schema version 4: one row per intent, and an outbox the relay follows by a cursor (issue 25).
-- Every admission wrote an idempotency row beside its job, and the relay rewrote every outbox
-- row it published (and two partial indexes with it): writes per decision that bought nothing.

-- The key and the fingerprint of the request it was first used for move into the job's row;
-- keys stay scoped to the buyer, unique per buyer. Every job was admitted with exactly one key.
ALTER TABLE jobs ADD COLUMN idempotency_key TEXT;
ALTER TABLE jobs ADD COLUMN fingerprint TEXT;
UPDATE jobs SET idempotency_key = i.key, fingerprint = i.fingerprint
    FROM idempotency AS i WHERE i.job_id = jobs.job_id;
CREATE UNIQUE INDEX jobs_by_key ON jobs (buyer_id, idempotency_key);
DROP TABLE idempotency;

-- Every outbox entry with seq <= published_through is published; an entry beyond it is
-- published if its published_at is set (an event recorded as published by the AWS-style
-- path, or one published past an entry the publisher refused). The newest entry is never
-- deleted, so seq never goes back and no entry is written below the cursor.
CREATE TABLE relay_cursor (
    id                INTEGER PRIMARY KEY CHECK (id = 1),
    published_through INTEGER NOT NULL
) STRICT;
INSERT INTO relay_cursor (id, published_through)
    SELECT 1, coalesce(
        (SELECT min(seq) - 1 FROM outbox WHERE published_at IS NULL),
        (SELECT max(seq) FROM outbox),
        0);
DROP INDEX outbox_unpublished;
DROP INDEX outbox_published;
