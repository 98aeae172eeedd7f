-- Schema version 19: no temporary table per job write (issue 40). SQLite evaluates a partial
-- index's `status IN (...)` of more than two values through a temporary B-tree built for each
-- statement that writes a row: every job inserted or moved paid to open, fill and close two.
-- The same conditions as a chain of comparisons cost a few compares. The statements that read
-- through these indexes say their conditions the same way, so the planner still matches them.
DROP INDEX jobs_decided;
CREATE INDEX jobs_decided ON jobs (updated_at)
    WHERE status = 'REJECTED' OR status = 'FAILED' OR status = 'EXPIRED' OR status = 'CANCELLED';
DROP INDEX jobs_counted;
CREATE INDEX jobs_counted ON jobs (event_id, buyer_id)
    WHERE status = 'HELD' OR status = 'SOLD' OR status = 'WAITLISTED';
