-- Schema version 11: the best seats (issue 29). Each seat keeps its place (row order, position,
-- its row's middle, rank: JSON, NULL for every older seat, which is adjacent to none) and its
-- place in the event's order of preference, which section claims read the seats in (an older
-- event's seats in the organiser's order, as before). An event keeps its preference.
ALTER TABLE seats ADD COLUMN preference INTEGER;
ALTER TABLE seats ADD COLUMN place TEXT;
UPDATE seats SET preference = position;
ALTER TABLE events ADD COLUMN best TEXT NOT NULL DEFAULT 'front-center';
CREATE INDEX seats_best ON seats (event_id, section, state, preference);
