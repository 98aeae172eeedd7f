-- Schema version 13: a line in admission order, or drawn order for a sale's pre-queue (issue 37,
-- item 2). A job that joins a section's line is given its place (`line_place`, the domain's
-- `line_place`: its admission time and id, or the sale's start and its place in the draw for a job
-- of the pre-queue) in the step that decides it; before, a line was ordered by job id, which is
-- the arrival order and put a pre-queue's losers back in the order they arrived. Jobs already
-- waiting keep the order they had.
ALTER TABLE jobs ADD COLUMN line_place TEXT;
UPDATE jobs SET line_place = printf('%013d#%s', accepted_at, job_id)
WHERE status = 'WAITLISTED';
DROP INDEX jobs_waitlisted;
CREATE INDEX jobs_waitlisted
    ON jobs (event_id, json_extract(request, '$.section.section'), line_place)
    WHERE status = 'WAITLISTED';
