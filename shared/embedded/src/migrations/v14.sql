-- Schema version 14: waiting seats count against the per-buyer limit (issue 37, item 3). The
-- limit's count reads a buyer's WAITLISTED jobs beside the HELD and SOLD ones, so the partial
-- index it reads by (event, buyer) covers them too; WAITLISTED jobs are few, as HELD ones are.
DROP INDEX IF EXISTS jobs_holding;
CREATE INDEX IF NOT EXISTS jobs_counted ON jobs (event_id, buyer_id)
    WHERE status IN ('HELD', 'SOLD', 'WAITLISTED');
