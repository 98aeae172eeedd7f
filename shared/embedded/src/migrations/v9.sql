-- Schema version 9: waitlists (issue 27). An event keeps whether its sections have lines
-- ('none', 'open', or 'closed' by an operator; 'none' for every older event). WAITLISTED jobs
-- are found on their own partial index, by event and the section their request names, in
-- admission order (time-ordered ids): a hand-out reads its line's head and a position counts the
-- jobs before it, and no other job writes the index.
ALTER TABLE events ADD COLUMN waitlist TEXT NOT NULL DEFAULT 'none';
CREATE INDEX jobs_waitlisted
    ON jobs (event_id, json_extract(request, '$.section.section'), job_id)
    WHERE status = 'WAITLISTED';
