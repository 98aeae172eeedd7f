-- Schema version 15: reasons a client can match (issue 38, item 3). A REJECTED or FAILED job
-- keeps the stable code of its reason (`reason_code`, one of the domain's `ReasonCode`s) beside
-- its text. Jobs decided before have none stored: they read with the code their status and
-- fixed text say (the codec's `reason_code`), so nothing is rewritten here.
ALTER TABLE jobs ADD COLUMN reason_code TEXT;
