-- Schema version 8: queue positions (issue 27). A PENDING job's place in its event's line is the
-- number of the event's PENDING jobs admitted before it. This index holds only PENDING jobs,
-- ordered by their time-ordered ids, so that count reads just the line ahead, admissions append
-- at its end and decisions take from its front. Each event counts its decisions, from which
-- the API learns the rate its line moves at.
CREATE INDEX jobs_pending ON jobs (event_id, job_id) WHERE status = 'PENDING';
ALTER TABLE events ADD COLUMN decided INTEGER NOT NULL DEFAULT 0;
