-- Schema version 16: presale channels and access codes (issue 39). An event may set sections
-- aside for sales channels (`channels`: the channels and the section each holds, JSON; NULL for
-- an event without channels). A job keeps the channel and access code it was admitted under
-- (`access`, JSON; NULL for a public job and every job stored before), and a code's seats are
-- counted in the claim's transaction on the index below. Codes are kept as their keyed hashes,
-- never in the clear.
ALTER TABLE events ADD COLUMN channels TEXT;
ALTER TABLE jobs ADD COLUMN access TEXT;
CREATE INDEX jobs_by_access_code ON jobs (event_id, json_extract(access, '$.code'))
    WHERE access IS NOT NULL;
CREATE TABLE access_codes (
    event_id    TEXT NOT NULL,
    hash        TEXT NOT NULL,
    channel     TEXT NOT NULL,
    max_seats   INTEGER NOT NULL,
    valid_from  INTEGER,
    valid_until INTEGER,
    bind        INTEGER NOT NULL,
    bound_to    TEXT,
    revoked     INTEGER NOT NULL DEFAULT 0,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (event_id, hash)
) STRICT, WITHOUT ROWID;
