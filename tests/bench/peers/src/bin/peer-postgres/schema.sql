-- peer-postgres: the schema and one function per operation, so that each is one round trip and
-- one durable transaction. A hold past its deadline (hold_until <= now()) is claimable again.
CREATE TABLE IF NOT EXISTS events (
    event_id text PRIMARY KEY,
    name text NOT NULL,
    hold_seconds int NOT NULL,
    sections text[] NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    event_id text NOT NULL,
    seat_id text NOT NULL,
    section text NOT NULL,
    ord int NOT NULL,
    state text NOT NULL DEFAULT 'AVAILABLE',
    job_id uuid,
    hold_until timestamptz,
    PRIMARY KEY (event_id, seat_id)
);
-- The free seats, which section requests take in seat order, and the holds, which may lapse.
-- (The ORDER BYs of the queries that use them keep the planner on them as seats run out.)
CREATE INDEX IF NOT EXISTS seats_free ON seats (event_id, section, ord) WHERE state = 'AVAILABLE';
CREATE INDEX IF NOT EXISTS seats_held ON seats (event_id, section, hold_until) WHERE state = 'HELD';
CREATE TABLE IF NOT EXISTS jobs (
    job_id uuid PRIMARY KEY,
    event_id text NOT NULL,
    buyer_id text NOT NULL,
    fingerprint text NOT NULL,
    status text NOT NULL,
    seat_ids text[] NOT NULL,
    hold_expires_at timestamptz,
    reason text
);
CREATE TABLE IF NOT EXISTS idempotency (key text PRIMARY KEY, job_id uuid NOT NULL);

-- The answer of reserve and settle: an outcome and the job.
DO $$ BEGIN
    CREATE TYPE job_reply AS (outcome text, job_id uuid, event_id text, buyer_id text,
        status text, seat_ids text[], hold_expires_at timestamptz, reason text);
EXCEPTION WHEN duplicate_object THEN NULL;
END $$;

CREATE OR REPLACE FUNCTION create_event(p_event text, p_name text, p_hold int,
    p_sections text[], p_rows int[], p_per_row int[]) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events VALUES (p_event, p_name, p_hold, p_sections) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN RETURN false; END IF;
    INSERT INTO seats (event_id, seat_id, section, ord)
    SELECT p_event, s.section || '-' || r || '-' || n, s.section,
           row_number() OVER (ORDER BY s.i, r, n)
    FROM unnest(p_sections, p_rows, p_per_row) WITH ORDINALITY AS s(section, nrows, per_row, i),
         generate_series(1, s.nrows) r, generate_series(1, s.per_row) n;
    RETURN true;
END $$;

-- The idempotency insert, the conditional claim (exact seats locked in id order, so claims
-- never deadlock; section seats from the free index, skipping those others are claiming), the
-- job insert. Outcomes: NEW, DUP, REUSED, NO_EVENT, UNKNOWN (reason says what).
CREATE OR REPLACE FUNCTION reserve(p_event text, p_key text, p_job uuid, p_buyer text,
    p_fp text, p_seats text[], p_section text, p_qty int) RETURNS job_reply
LANGUAGE plpgsql AS $$
DECLARE
    v_hold int;
    v_sections text[];
    v_prior uuid;
    v_ids text[];
    v_found int;
    v_free int;
    v_status text := 'HELD';
    v_reason text;
    v_until timestamptz;
    r job_reply;
BEGIN
    SELECT hold_seconds, sections INTO v_hold, v_sections FROM events WHERE event_id = p_event;
    IF NOT FOUND THEN r.outcome := 'NO_EVENT'; RETURN r; END IF;
    IF p_section IS NOT NULL AND NOT p_section = ANY (v_sections) THEN
        r.outcome := 'UNKNOWN'; r.reason := p_section || ' does not exist in this event';
        RETURN r;
    END IF;
    INSERT INTO idempotency VALUES (p_key, p_job) ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
        SELECT i.job_id INTO v_prior FROM idempotency i WHERE i.key = p_key;
        SELECT 'DUP', j.job_id, j.event_id, j.buyer_id, j.status, j.seat_ids,
               j.hold_expires_at, j.reason, j.fingerprint
          INTO r.outcome, r.job_id, r.event_id, r.buyer_id, r.status, r.seat_ids,
               r.hold_expires_at, r.reason, v_reason
          FROM jobs j WHERE j.job_id = v_prior;
        IF v_reason IS DISTINCT FROM p_fp THEN r := NULL; r.outcome := 'REUSED'; END IF;
        RETURN r;
    END IF;
    IF p_seats IS NOT NULL THEN
        SELECT count(*), count(*) FILTER (WHERE state = 'AVAILABLE'
                   OR (state = 'HELD' AND hold_until <= now()))
          INTO v_found, v_free
          FROM (SELECT state, hold_until FROM seats
                 WHERE event_id = p_event AND seat_id = ANY (p_seats)
                 ORDER BY seat_id FOR UPDATE) s;
        IF v_found < cardinality(p_seats) THEN
            DELETE FROM idempotency WHERE key = p_key;
            r.outcome := 'UNKNOWN'; r.reason := 'seat_ids names seats the event does not have';
            RETURN r;
        END IF;
        IF v_free = v_found THEN v_ids := p_seats; END IF;
        v_reason := 'seat no longer available';
    ELSE
        SELECT array_agg(seat_id) INTO v_ids FROM (SELECT seat_id FROM seats
             WHERE event_id = p_event AND section = p_section AND state = 'AVAILABLE'
             ORDER BY ord LIMIT p_qty FOR UPDATE SKIP LOCKED) s;
        v_ids := coalesce(v_ids, '{}');
        IF cardinality(v_ids) < p_qty THEN
            -- Lapsed holds may make up the rest.
            v_ids := v_ids || ARRAY(SELECT seat_id FROM seats
                 WHERE event_id = p_event AND section = p_section AND state = 'HELD'
                   AND hold_until <= now()
                 ORDER BY hold_until LIMIT p_qty - cardinality(v_ids) FOR UPDATE SKIP LOCKED);
        END IF;
        IF cardinality(v_ids) < p_qty THEN v_ids := NULL; END IF;
        v_reason := 'not enough seats available in section ' || p_section;
    END IF;
    IF v_ids IS NULL THEN
        v_status := 'REJECTED';
        v_ids := '{}';
    ELSE
        v_reason := NULL;
        v_until := now() + make_interval(secs => v_hold);
        UPDATE seats SET state = 'HELD', job_id = p_job, hold_until = v_until
         WHERE event_id = p_event AND seat_id = ANY (v_ids);
    END IF;
    INSERT INTO jobs VALUES (p_job, p_event, p_buyer, p_fp, v_status, v_ids, v_until, v_reason);
    SELECT 'NEW', p_job, p_event, p_buyer, v_status, v_ids, v_until, v_reason INTO r;
    RETURN r;
END $$;

-- Confirm (HELD -> SOLD) or cancel (HELD -> CANCELLED, seats freed) a live hold; a repeat is
-- DONE. Seats are locked in id order first, as reserve locks them. Outcomes: DONE, CONFLICT,
-- NOT_FOUND.
CREATE OR REPLACE FUNCTION settle(p_job uuid, p_target text) RETURNS job_reply
LANGUAGE plpgsql AS $$
DECLARE
    j jobs;
    v_owned int;
    r job_reply;
BEGIN
    SELECT * INTO j FROM jobs WHERE job_id = p_job FOR UPDATE;
    IF NOT FOUND THEN r.outcome := 'NOT_FOUND'; RETURN r; END IF;
    r := ROW('CONFLICT', j.job_id, j.event_id, j.buyer_id, j.status, j.seat_ids,
             j.hold_expires_at, j.reason);
    IF j.status = p_target THEN r.outcome := 'DONE'; RETURN r; END IF;
    IF j.status <> 'HELD' OR j.hold_expires_at <= now() THEN RETURN r; END IF;
    SELECT count(*) FILTER (WHERE state = 'HELD' AND job_id = p_job) INTO v_owned
      FROM (SELECT state, job_id FROM seats
             WHERE event_id = j.event_id AND seat_id = ANY (j.seat_ids)
             ORDER BY seat_id FOR UPDATE) s;
    IF v_owned < cardinality(j.seat_ids) THEN RETURN r; END IF;
    IF p_target = 'SOLD' THEN
        UPDATE seats SET state = 'SOLD', hold_until = NULL
         WHERE event_id = j.event_id AND seat_id = ANY (j.seat_ids);
    ELSE
        UPDATE seats SET state = 'AVAILABLE', job_id = NULL, hold_until = NULL
         WHERE event_id = j.event_id AND seat_id = ANY (j.seat_ids);
    END IF;
    UPDATE jobs SET status = p_target WHERE job_id = p_job;
    r.outcome := 'DONE'; r.status := p_target;
    RETURN r;
END $$;
