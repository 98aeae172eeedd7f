-- Schema version 5: the per-buyer index holds only the jobs the seat limit counts (issue 25).
-- Every admission wrote an entry keyed by (event, buyer) into a B-tree ordered by buyer, a write
-- to a random page of it per intent, although the limit counts only HELD and SOLD jobs, a few
-- percent of a sale's intents. The audit's reads by event, rare, scan the jobs instead.
DROP INDEX jobs_by_event_buyer;
CREATE INDEX jobs_holding ON jobs (event_id, buyer_id) WHERE status IN ('HELD', 'SOLD');
