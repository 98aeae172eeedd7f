-- Schema version 10: sale openings (issue 28). An event may announce when its sale starts
-- (milliseconds since the epoch; NULL for every older event). Intents admitted before it wait
-- in the pre-queue, undecided, at most one per buyer and event, in admission order (`seq`); at
-- the start the receive that first finds it due draws their order (`drawn`, 0-based), enqueues
-- them in it and records the draw on the event (`opening`, the published record as JSON), for
-- the relay to publish (`opening_published`).
ALTER TABLE events ADD COLUMN sale_starts_at INTEGER;
ALTER TABLE events ADD COLUMN opening TEXT;
ALTER TABLE events ADD COLUMN opening_published INTEGER NOT NULL DEFAULT 0;
CREATE INDEX events_due_openings ON events (sale_starts_at)
    WHERE sale_starts_at IS NOT NULL AND opening IS NULL;
CREATE TABLE prequeue (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id TEXT NOT NULL,
    buyer_id TEXT NOT NULL,
    job_id TEXT NOT NULL UNIQUE,
    intent TEXT NOT NULL,
    drawn INTEGER
);
CREATE UNIQUE INDEX prequeue_buyers ON prequeue (event_id, buyer_id);
CREATE INDEX prequeue_order ON prequeue (event_id, drawn);
