-- pgbench script for the claim-step baseline: one conditional UPDATE per claim, one transaction
-- (pgbench's default), durable commits (synchronous_commit = on, fsync = on).
\set seat random(1, :seats)
UPDATE seats SET state = 'HELD', job_id = :client_id * 1000000 + random(1, 1000000) WHERE seat_id = :seat AND state = 'AVAILABLE';
