//! The embedded file's schema versions. Every schema change ships as the next migration in
//! [`migrations`]; a file is brought to the newest version when it is opened, in one transaction,
//! so an upgrade never strands the data of an older build, and a file written by a newer build
//! is refused instead of being misread. The version lives in SQLite's `user_version`.

use crate::error::sqlite_error;
use rusqlite::{Connection, TransactionBehavior};
use rusqlite_migration::{M, Migrations};

use seatclaim_core::ports::BackendError;

/// Every migration, oldest first; version N is the first N applied. Never edit a released one.
fn migrations() -> Migrations<'static> {
    Migrations::new(vec![
        M::up(include_str!("migrations/v1.sql")),
        M::up(include_str!("migrations/v2.sql")),
        M::up(include_str!("migrations/v3.sql")),
        M::up(include_str!("migrations/v4.sql")),
        M::up(include_str!("migrations/v5.sql")),
        M::up(include_str!("migrations/v6.sql")),
        M::up(include_str!("migrations/v7.sql")),
        M::up(include_str!("migrations/v8.sql")),
        M::up(include_str!("migrations/v9.sql")),
        M::up(include_str!("migrations/v10.sql")),
        M::up(include_str!("migrations/v11.sql")),
        M::up(include_str!("migrations/v12.sql")),
        M::up(include_str!("migrations/v13.sql")),
        M::up(include_str!("migrations/v14.sql")),
        M::up(include_str!("migrations/v15.sql")),
        M::up(include_str!("migrations/v16.sql")),
        M::up(include_str!("migrations/v17.sql")),
        M::up(include_str!("migrations/v18.sql")),
        M::up(include_str!("migrations/v19.sql")),
    ])
}

/// The schema version this build writes and reads: the number of migrations.
pub(super) const SCHEMA_VERSION: usize = 19;

/// The columns of version 1, checked before a file at `user_version` 0 that already has tables is
/// stamped version 1: a file from a build older than the 407513e one also has `user_version` 0,
/// but different tables, which `IF NOT EXISTS` would silently keep. It is refused, not half-read.
const V1_COLUMNS: &[(&str, &[&str])] = &[
    ("events", &["event_id", "name", "hold_ms", "created_at"]),
    (
        "seats",
        &[
            "event_id",
            "seat_id",
            "section",
            "position",
            "state",
            "job_id",
            "hold_until",
        ],
    ),
    (
        "jobs",
        &[
            "job_id",
            "event_id",
            "buyer_id",
            "request",
            "status",
            "seat_ids",
            "hold_until",
            "reason",
            "accepted_at",
            "updated_at",
            "first_error",
            "last_error",
        ],
    ),
    (
        "idempotency",
        &["buyer_id", "key", "fingerprint", "job_id", "created_at"],
    ),
    (
        "outbox",
        &["seq", "job_id", "body", "created_at", "published_at"],
    ),
    (
        "messages",
        &[
            "message_id",
            "queue",
            "body",
            "job_id",
            "sent_at",
            "visible_at",
            "receive_count",
            "delivery",
            "reason",
        ],
    ),
];

fn check_unversioned_tables(conn: &Connection) -> Result<(), BackendError> {
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |row| row.get(0),
        )
        .map_err(sqlite_error)?;
    if schema_version(conn)? != 0 || tables == 0 {
        return Ok(());
    }
    let mut query = conn
        .prepare("SELECT name FROM pragma_table_info(?1)")
        .map_err(sqlite_error)?;
    for (table, columns) in V1_COLUMNS {
        let found: Vec<String> = query
            .query_map([table], |row| row.get(0))
            .map_err(sqlite_error)?
            .collect::<Result<_, _>>()
            .map_err(sqlite_error)?;
        if let Some(missing) = columns.iter().find(|c| !found.iter().any(|f| f == *c)) {
            return Err(BackendError::permanent(format!(
                "table {table} has no column {missing}: the file was written by a build older \
                 than schema version 1, which cannot be migrated"
            )));
        }
    }
    Ok(())
}

/// Brings the file behind `conn` to [`SCHEMA_VERSION`], or refuses a file newer than this build.
/// The migration takes the write lock up front; a process that loses the race to migrate a file
/// finds it migrated when it looks again.
pub(super) fn migrate(conn: &mut Connection) -> Result<(), BackendError> {
    conn.set_transaction_behavior(TransactionBehavior::Immediate);
    let mut result = check_not_newer(conn)
        .and_then(|()| check_unversioned_tables(conn))
        .and_then(|()| apply(conn));
    if result.is_err() && schema_version(conn)? == SCHEMA_VERSION {
        result = Ok(());
    }
    conn.set_transaction_behavior(TransactionBehavior::Deferred);
    result
}

fn apply(conn: &mut Connection) -> Result<(), BackendError> {
    let before = schema_version(conn)?;
    migrations().to_latest(conn).map_err(|error| {
        BackendError::permanent(format!(
            "cannot migrate the database from schema version {before} to {SCHEMA_VERSION}: {error}"
        ))
    })?;
    if before != SCHEMA_VERSION {
        tracing::info!(from = before, to = SCHEMA_VERSION, "database migrated");
    }
    Ok(())
}

pub(super) fn check_not_newer(conn: &Connection) -> Result<(), BackendError> {
    let version = schema_version(conn)?;
    if version > SCHEMA_VERSION {
        return Err(BackendError::permanent(format!(
            "the database has schema version {version}, newer than this build's \
             {SCHEMA_VERSION}: it was written by a newer seatclaim; run that build (or a newer \
             one) on it, or restore a backup taken before the upgrade"
        )));
    }
    Ok(())
}

/// The file's schema version, as `/readyz` checks it.
pub(super) fn schema_version(conn: &Connection) -> Result<usize, BackendError> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(sqlite_error)?;
    usize::try_from(version)
        .map_err(|_| BackendError::permanent(format!("invalid schema version {version}")))
}

/// What the tests of statements' query plans share: a migrated file, and a statement's plan.
#[cfg(test)]
pub(crate) mod plans {
    use rusqlite::{Connection, Params};

    /// A new file in a temporary folder, migrated to this build's schema version.
    pub(crate) fn migrated_file() -> (tempfile::TempDir, Connection) {
        let (dir, mut conn) = super::tests::file();
        super::migrate(&mut conn).expect("migrate");
        (dir, conn)
    }

    /// The steps of `sql`'s query plan with `params` bound (the planner may use their values).
    pub(crate) fn query_plan(conn: &Connection, sql: &str, params: impl Params) -> Vec<String> {
        conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .expect("plan")
            .query_map(params, |row| row.get(3))
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("plan rows")
    }
}

#[cfg(test)]
mod tests {
    use super::plans::{migrated_file, query_plan};
    use super::*;

    /// A new, empty file in a temporary folder.
    pub(super) fn file() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().expect("temp dir");
        let conn = Connection::open(dir.path().join("db.sqlite3")).expect("open");
        (dir, conn)
    }

    #[test]
    fn the_migrations_are_well_formed_and_end_at_this_builds_version() {
        assert_eq!(migrations().validate(), Ok(()));
        assert_eq!(
            migrations().pending_migrations(&Connection::open_in_memory().expect("db")),
            Ok(i32::try_from(SCHEMA_VERSION).expect("small"))
        );
        let (_dir, mut conn) = file();
        migrate(&mut conn).expect("migrate");
        assert_eq!(schema_version(&conn).expect("version"), SCHEMA_VERSION);
        migrate(&mut conn).expect("a second open changes nothing");
        assert_eq!(schema_version(&conn).expect("version"), SCHEMA_VERSION);
    }

    #[test]
    fn a_sale_is_found_by_its_payment_through_the_index() {
        let (_dir, conn) = migrated_file();
        let plan = query_plan(&conn, crate::jobs::SOLD_BY_PAYMENT, ["pi_1"]);
        assert!(
            plan.iter()
                .any(|step| step.contains("jobs_sold_by_payment")),
            "{plan:?}"
        );
    }

    #[test]
    fn a_buyers_seats_are_counted_through_the_index() {
        let (_dir, conn) = migrated_file();
        let plan = query_plan(
            &conn,
            crate::terms::COUNTED_SEATS,
            rusqlite::params!["e1", "b1", 0],
        );
        assert!(
            plan.iter().any(|step| step.contains("jobs_counted")),
            "{plan:?}"
        );
    }

    /// Writing a job (inserting one, or moving it to another status) opens no temporary table:
    /// a partial index's condition on the status is a chain of comparisons, not an `IN` list,
    /// which SQLite would evaluate through a temporary B-tree built for each statement.
    #[test]
    fn a_job_write_opens_no_temporary_table() {
        let (_dir, conn) = migrated_file();
        for write in [
            "INSERT INTO jobs (job_id, event_id, buyer_id, request, status, seat_ids, accepted_at,
                               updated_at)
             VALUES ('j', 'e', 'b', '{}', 'HELD', '[]', 0, 0)",
            "UPDATE jobs SET status = 'SOLD', updated_at = 1 WHERE job_id = 'j'",
        ] {
            let opcodes: Vec<String> = conn
                .prepare(&format!("EXPLAIN {write}"))
                .expect("explain")
                .query_map([], |row| row.get(1))
                .expect("rows")
                .collect::<Result<_, _>>()
                .expect("opcodes");
            assert!(!opcodes.is_empty(), "{write}");
            assert!(
                !opcodes.iter().any(|op| op == "OpenEphemeral"),
                "{write}: {opcodes:?}"
            );
        }
    }

    /// A section claim reads its free seats through the partial indexes of free seats, in the
    /// order it needs, with nothing left to sort.
    #[test]
    fn a_claims_free_seats_are_read_through_the_partial_indexes() {
        let (_dir, conn) = migrated_file();
        for (tail, index) in [
            (crate::candidates::FREE_BY_PREFERENCE, "seats_free_best"),
            (crate::candidates::FREE_BY_ROWS, "seats_free_rows"),
        ] {
            let plan = query_plan(&conn, &format!("SELECT seat_id {tail}"), ["e1", "A"]);
            assert!(plan.iter().any(|step| step.contains(index)), "{plan:?}");
            assert!(
                !plan.iter().any(|step| step.contains("TEMP B-TREE")),
                "{plan:?}"
            );
        }
    }

    /// Version 17 gives each channel with a start of its own an opening, and keeps the
    /// intents already pre-queued in their event's own.
    #[test]
    fn version_17_opens_the_channels_that_announced_a_start() {
        let (_dir, mut conn) = file();
        migrations().to_version(&mut conn, 16).expect("version 16");
        conn.execute_batch(
            r#"INSERT INTO events (event_id, name, hold_ms, created_at, channels)
               VALUES ('e1', 'presale', 600000, 0, '{"channels": [
                   {"name": "fanclub", "sale_starts_at": 5000, "seats": 2},
                   {"name": "partner", "seats": 1}], "sections": {}}');
               INSERT INTO prequeue (event_id, buyer_id, job_id, intent)
               VALUES ('e1', 'b1', 'j1', '{}');"#,
        )
        .expect("a version 16 event");
        migrate(&mut conn).expect("migrate");
        let openings: Vec<(String, i64)> = conn
            .prepare("SELECT channel, sale_starts_at FROM channel_openings")
            .and_then(|mut select| {
                select
                    .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                    .collect()
            })
            .expect("channel openings");
        assert_eq!(openings, [("fanclub".to_owned(), 5000)]);
        let channel: Option<String> = conn
            .query_row(
                "SELECT channel FROM prequeue WHERE job_id = 'j1'",
                [],
                |row| row.get(0),
            )
            .expect("the pre-queued intent");
        assert_eq!(channel, None, "it waits for the event's own start");
        conn.execute(
            "INSERT INTO prequeue (event_id, buyer_id, job_id, intent, channel)
             VALUES ('e1', 'b1', 'j2', '{}', 'fanclub')",
            [],
        )
        .expect("a buyer waits once in each pre-queue");
    }

    #[test]
    fn a_file_from_a_newer_build_is_refused_untouched() {
        let (_dir, mut conn) = file();
        migrate(&mut conn).expect("migrate");
        conn.pragma_update(None, "user_version", 99).expect("stamp");
        let error = migrate(&mut conn).expect_err("refused");
        assert!(error.message.contains("schema version 99"), "{error}");
        assert!(!error.is_transient());
        assert_eq!(schema_version(&conn).expect("version"), 99);
    }

    #[test]
    fn a_file_older_than_version_one_is_refused_and_left_as_it_was() {
        let (_dir, mut conn) = file();
        conn.execute_batch("CREATE TABLE messages (message_id INTEGER PRIMARY KEY, body TEXT)")
            .expect("an old table");
        let error = migrate(&mut conn).expect_err("refused");
        assert!(error.message.contains("no column"), "{error}");
        assert_eq!(schema_version(&conn).expect("version"), 0);
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(tables, 1, "the failed migration rolled back");
    }
}
