-- Schema version 3: retention. Decided jobs are deleted some days after their decision, with
-- their idempotency records and their history, and published reservation events likewise
-- (`retention.rs`); these indexes let that periodic delete find them without a scan.
CREATE INDEX jobs_decided ON jobs (updated_at)
    WHERE status IN ('REJECTED', 'FAILED', 'EXPIRED', 'CANCELLED');
CREATE INDEX idempotency_by_job ON idempotency (job_id);
CREATE INDEX outbox_published ON outbox (published_at) WHERE published_at IS NOT NULL;
