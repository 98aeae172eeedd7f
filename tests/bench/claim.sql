-- pgbench script for the claim-step baseline: one conditional UPDATE per claim, one transaction
-- (pgbench's default), durable commits (synchronous_commit = on, fsync = on).
\set seat random(1, :seats)
\set job random(1, 1000000000)
UPDATE seats SET state = 'HELD', job_id = :job WHERE seat_id = :seat AND state = 'AVAILABLE';
