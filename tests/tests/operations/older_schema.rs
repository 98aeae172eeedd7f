//! Taking a migrated data file back to an earlier schema version, as an older build left it, so
//! that an upgrade test can open it with this build and watch the migrations run again. Each
//! version's undo is written once, here, beside the migration it undoes
//! (`shared/embedded/src/migrations/vN.sql`).

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

/// What undoes each version, newest first: `(version, SQL)`.
const UNDO: &[(usize, &str)] = &[
    (
        19,
        "DROP INDEX jobs_decided;
         DROP INDEX jobs_counted;
         CREATE INDEX jobs_decided ON jobs (updated_at)
             WHERE status IN ('REJECTED', 'FAILED', 'EXPIRED', 'CANCELLED');
         CREATE INDEX jobs_counted ON jobs (event_id, buyer_id)
             WHERE status IN ('HELD', 'SOLD', 'WAITLISTED');",
    ),
    (
        18,
        "DROP INDEX seats_free_rows;
         DROP INDEX seats_free_best;
         CREATE INDEX seats_by_section_state ON seats (event_id, section, state, position);
         CREATE INDEX seats_free_rows ON seats (event_id, section, state, row_order, position);
         CREATE INDEX seats_best ON seats (event_id, section, state, preference);",
    ),
    (
        17,
        "DROP TABLE channel_openings;
         DROP INDEX prequeue_buyers;
         DROP INDEX prequeue_order;
         ALTER TABLE prequeue DROP COLUMN channel;
         CREATE UNIQUE INDEX prequeue_buyers ON prequeue (event_id, buyer_id);
         CREATE INDEX prequeue_order ON prequeue (event_id, drawn);",
    ),
    (
        16,
        "DROP INDEX jobs_by_access_code;
         DROP TABLE access_codes;
         ALTER TABLE jobs DROP COLUMN access;
         ALTER TABLE events DROP COLUMN channels;",
    ),
    (15, "ALTER TABLE jobs DROP COLUMN reason_code;"),
    (
        14,
        "DROP INDEX jobs_counted;
         CREATE INDEX jobs_holding ON jobs (event_id, buyer_id) WHERE status IN ('HELD', 'SOLD');",
    ),
    (
        13,
        "DROP INDEX jobs_waitlisted;
         ALTER TABLE jobs DROP COLUMN line_place;
         CREATE INDEX jobs_waitlisted
             ON jobs (event_id, json_extract(request, '$.section.section'), job_id)
             WHERE status = 'WAITLISTED';",
    ),
    (12, "DROP INDEX jobs_sold_by_payment;"),
];

/// Takes `file`, at this build's schema version, back to `version` (12 or later: what is older
/// comes from the version-one fixture).
pub(super) fn take_back(file: &rusqlite::Connection, version: usize) {
    let newest = UNDO.first().map(|(newest, _)| *newest);
    assert_eq!(
        newest,
        Some(
            file.pragma_query_value(None, "user_version", |row| row.get::<_, usize>(0))
                .unwrap()
        ),
        "the file is at the newest version this file knows how to undo"
    );
    assert!(
        UNDO.iter().any(|(undone, _)| *undone == version + 1),
        "no undo for version {}",
        version + 1
    );
    for (_, undo) in UNDO.iter().take_while(|(undone, _)| *undone > version) {
        file.execute_batch(undo).unwrap();
    }
    file.pragma_update(None, "user_version", version).unwrap();
}
