-- Schema version 1: the embedded backend's tables as the 407513e build (the last one without
-- migrations) wrote them. One SQLite file holds the catalog, the inventory, the jobs, the outbox
-- and the queue, so that admission and every claim are single local transactions. Instants are
-- Unix milliseconds. The statements say IF NOT EXISTS because files written before migrations
-- existed already hold these tables at user_version 0; this step only stamps them version 1.
-- Never edit a released migration: add the next one.

CREATE TABLE IF NOT EXISTS events (
    event_id   TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    hold_ms    INTEGER NOT NULL,
    created_at INTEGER NOT NULL
) STRICT;

-- The inventory, the authority on seats. job_id/hold_until are set while HELD, job_id while SOLD.
CREATE TABLE IF NOT EXISTS seats (
    event_id   TEXT NOT NULL,
    seat_id    TEXT NOT NULL,
    section    TEXT NOT NULL,
    position   INTEGER NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('AVAILABLE', 'HELD', 'SOLD')),
    job_id     TEXT,
    hold_until INTEGER,
    PRIMARY KEY (event_id, seat_id)
) STRICT, WITHOUT ROWID;

-- "Any N free seats in section S": free seats first, in the organiser's order.
CREATE INDEX IF NOT EXISTS seats_by_section_state ON seats (event_id, section, state, position);

-- A section claim's fallback, holds that have lapsed: only HELD seats are in it, by deadline, so
-- the lookup does not walk every held seat of a sold-out section.
CREATE INDEX IF NOT EXISTS seats_lapsing ON seats (event_id, section, hold_until) WHERE state = 'HELD';

CREATE TABLE IF NOT EXISTS jobs (
    job_id      TEXT PRIMARY KEY,
    event_id    TEXT NOT NULL,
    buyer_id    TEXT NOT NULL,
    request     TEXT NOT NULL,
    status      TEXT NOT NULL,
    seat_ids    TEXT NOT NULL,
    hold_until  INTEGER,
    reason      TEXT,
    accepted_at INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    first_error TEXT,
    last_error  TEXT
) STRICT, WITHOUT ROWID;

-- The audit reads an event's jobs.
CREATE INDEX IF NOT EXISTS jobs_by_event ON jobs (event_id);

-- The sweeper's work list: only HELD jobs are in it, ordered by deadline.
CREATE INDEX IF NOT EXISTS held_jobs_by_deadline ON jobs (hold_until) WHERE status = 'HELD';

-- Idempotency keys are scoped to the buyer; the fingerprint tells a retry from a reused key.
CREATE TABLE IF NOT EXISTS idempotency (
    buyer_id    TEXT NOT NULL,
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_id      TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (buyer_id, key)
) STRICT, WITHOUT ROWID;

-- Entries are never deleted, so seq only grows without AUTOINCREMENT's bookkeeping: the relay
-- and the decision follower read in seq order.
CREATE TABLE IF NOT EXISTS outbox (
    seq          INTEGER PRIMARY KEY,
    job_id       TEXT NOT NULL,
    body         TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    published_at INTEGER
) STRICT;

CREATE INDEX IF NOT EXISTS outbox_unpublished ON outbox (seq) WHERE published_at IS NULL;
-- A job's history.
CREATE INDEX IF NOT EXISTS outbox_by_job ON outbox (job_id, seq);

-- Both queues in one table: 'intents' (the main queue) and 'dead' (its dead-letter queue).
-- In 'dead', visible_at is when the message was dead-lettered.
-- delivery counts every delivery of the message and is never reset (receive_count restarts on
-- replay, as in SQS); a receipt names the message and its delivery, so a stale receipt cannot
-- acknowledge a later delivery of the same message.
CREATE TABLE IF NOT EXISTS messages (
    message_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    queue         TEXT NOT NULL,
    body          TEXT NOT NULL,
    job_id        TEXT,
    sent_at       INTEGER NOT NULL,
    visible_at    INTEGER NOT NULL,
    receive_count INTEGER NOT NULL DEFAULT 0,
    delivery      INTEGER NOT NULL DEFAULT 0,
    reason        TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS messages_ready ON messages (queue, visible_at);
