-- Schema version 2: the per-buyer seat limit (issue 12). An event may limit how many of its
-- seats one buyer holds or has bought; the claim counts the buyer's HELD and SOLD seats in the
-- event inside its own transaction, through the index on (event, buyer), which also serves the
-- audit's reads by event and so replaces the index on the event alone.

ALTER TABLE events ADD COLUMN max_seats_per_buyer INTEGER
    CHECK (max_seats_per_buyer IS NULL OR max_seats_per_buyer BETWEEN 1 AND 100);

DROP INDEX IF EXISTS jobs_by_event;
CREATE INDEX jobs_by_event_buyer ON jobs (event_id, buyer_id);
