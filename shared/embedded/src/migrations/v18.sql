-- Schema version 18: fewer index pages per claim (issue 40). The indexes a claim reads its free
-- seats through keep only the free seats (a partial index, `WHERE state = 'AVAILABLE'`) instead
-- of every seat under its state: a hold then deletes one entry from each instead of moving it
-- (a delete and an insert, on two pages apart), a sale touches none of them, and a release
-- inserts one. The index by state and position goes: since version 11 no statement reads
-- through it (each seat statement's query plan names another index or the key).
DROP INDEX seats_by_section_state;
DROP INDEX seats_free_rows;
DROP INDEX seats_best;
CREATE INDEX seats_free_rows ON seats (event_id, section, row_order, position)
    WHERE state = 'AVAILABLE';
CREATE INDEX seats_free_best ON seats (event_id, section, preference) WHERE state = 'AVAILABLE';
