-- Schema version 11: the best seats (issue 29). Each seat keeps its place (row order, position,
-- its row's middle, rank: JSON, NULL for every older seat, which is adjacent to none), its row's
-- order apart (a block's claim reads the section row by row, front first, and stops at the row
-- that has its block) and its place in the event's order of preference, which other section
-- claims read the seats in (an older event's seats in the organiser's order, as before). An
-- event keeps its preference.
ALTER TABLE seats ADD COLUMN preference INTEGER;
ALTER TABLE seats ADD COLUMN place TEXT;
ALTER TABLE seats ADD COLUMN row_order INTEGER;
CREATE INDEX seats_free_rows ON seats (event_id, section, state, row_order, position);
UPDATE seats SET preference = position;
ALTER TABLE events ADD COLUMN best TEXT NOT NULL DEFAULT 'front-center';
CREATE INDEX seats_best ON seats (event_id, section, state, preference);
