-- Schema version 7: hold extension (issue 27). An event's extension terms (JSON: how many
-- milliseconds each extension adds and how many one hold may have; NULL allows none, as for
-- every older event) are read inside the extension's write; a job counts its extensions, so the
-- most an event allows is checked against the job alone.
ALTER TABLE events ADD COLUMN extension TEXT;
ALTER TABLE jobs ADD COLUMN hold_extensions INTEGER NOT NULL DEFAULT 0;
