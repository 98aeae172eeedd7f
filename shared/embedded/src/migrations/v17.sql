-- Schema version 17: a channel's own opening (issue 39). A channel with a `sale_starts_at` of its
-- own opens its own pre-queue at that start: `channel_openings` keeps each such start and its
-- draw (`opening`, the published record as JSON) as `events` keeps the event's own, and a
-- pre-queued intent names the channel whose start it waits for (`prequeue.channel`; NULL: the
-- event's, as every intent pre-queued before). A buyer waits once in each pre-queue. The events
-- stored before get a row for each channel that announced a start.
CREATE TABLE channel_openings (
    event_id          TEXT NOT NULL,
    channel           TEXT NOT NULL,
    sale_starts_at    INTEGER NOT NULL,
    opening           TEXT,
    opening_published INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (event_id, channel)
) STRICT, WITHOUT ROWID;
CREATE INDEX channel_openings_due ON channel_openings (sale_starts_at) WHERE opening IS NULL;
INSERT INTO channel_openings (event_id, channel, sale_starts_at)
    SELECT events.event_id, json_extract(c.value, '$.name'),
           json_extract(c.value, '$.sale_starts_at')
    FROM events, json_each(events.channels, '$.channels') AS c
    WHERE events.channels IS NOT NULL
      AND json_extract(c.value, '$.sale_starts_at') IS NOT NULL;
ALTER TABLE prequeue ADD COLUMN channel TEXT;
DROP INDEX prequeue_buyers;
CREATE UNIQUE INDEX prequeue_buyers ON prequeue (event_id, ifnull(channel, ''), buyer_id);
DROP INDEX prequeue_order;
CREATE INDEX prequeue_order ON prequeue (event_id, channel, drawn);
