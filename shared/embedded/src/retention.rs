//! The embedded backend's retention: a bounded delete, run periodically by the worker, of the
//! decided jobs the domain's `Retention` lets go (their rows carry their idempotency keys), with
//! their history, and of reservation events published that happened long ago. Each call is one short write transaction.

use crate::error::sqlite_error;
use rusqlite::{Transaction, params, params_from_iter};

use seatclaim_core::codec::to_ms;
use seatclaim_core::domain::JobStatus;
use seatclaim_core::ports::BackendError;

/// Deletes up to `limit` jobs in `statuses` last changed before `cutoff` (each with its key and
/// history, unless an event of it is unpublished or its intent is still in a queue), then up to
/// `limit` published events that happened before `cutoff`; returns how many jobs it deleted.
pub(super) fn purge(
    tx: &Transaction<'_>,
    statuses: &[JobStatus],
    cutoff: jiff::Timestamp,
    limit: usize,
) -> Result<usize, BackendError> {
    let cutoff = to_ms(cutoff);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let names: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
    let mut select = tx
        .prepare(&expiring_jobs(names.len()))
        .map_err(sqlite_error)?;
    let values = names
        .iter()
        .map(|name| rusqlite::types::Value::Text((*name).to_owned()))
        .chain([cutoff.into(), limit.into()]);
    let jobs: Vec<String> = select
        .query_map(params_from_iter(values), |row| row.get(0))
        .map_err(sqlite_error)?
        .collect::<Result<_, _>>()
        .map_err(sqlite_error)?;
    // The newest outbox entry always stays, as a placeholder naming no job if its job goes:
    // `seq` would otherwise be handed out again, below the relay's cursor and the decision
    // follower's position.
    for job in &jobs {
        tx.prepare_cached(
            "UPDATE outbox SET job_id = '', body = '' \
             WHERE job_id = ?1 AND seq = (SELECT max(seq) FROM outbox)",
        )
        .map_err(sqlite_error)?
        .execute([job])
        .map_err(sqlite_error)?;
        tx.prepare_cached("DELETE FROM outbox WHERE job_id = ?1")
            .map_err(sqlite_error)?
            .execute([job])
            .map_err(sqlite_error)?;
        tx.prepare_cached("DELETE FROM prequeue WHERE job_id = ?1")
            .map_err(sqlite_error)?
            .execute([job])
            .map_err(sqlite_error)?;
        tx.prepare_cached("DELETE FROM jobs WHERE job_id = ?1")
            .map_err(sqlite_error)?
            .execute([job])
            .map_err(sqlite_error)?;
    }
    // The oldest published entries first, by seq (the order they happened in): the walk stops
    // after `limit` rows instead of testing every published entry for its age.
    tx.prepare_cached(
        "DELETE FROM outbox WHERE created_at < ?1 AND seq IN (SELECT seq FROM outbox \
         WHERE seq <= (SELECT published_through FROM relay_cursor) \
           AND seq < (SELECT max(seq) FROM outbox) ORDER BY seq LIMIT ?2)",
    )
    .map_err(sqlite_error)?
    .execute(params![cutoff, limit])
    .map_err(sqlite_error)?;
    Ok(jobs.len())
}

/// The select of [`purge`]'s jobs for `statuses` bound as `?1..`, the cutoff and the limit after
/// them. The statuses are a chain of comparisons, as the partial index `jobs_decided` states its
/// condition (schema 19): bound in that order ([`Retention::EXPIRING`]), SQLite matches each
/// parameter's value to the index's and walks only the decided jobs, oldest first.
///
/// [`Retention::EXPIRING`]: seatclaim_core::domain::Retention::EXPIRING
fn expiring_jobs(statuses: usize) -> String {
    let one_of: Vec<String> = (1..=statuses).map(|k| format!("status = ?{k}")).collect();
    format!(
        "SELECT job_id FROM jobs WHERE ({one_of}) AND updated_at < ?{n} \
           AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.job_id = jobs.job_id \
                           AND o.seq > (SELECT published_through FROM relay_cursor) \
                           AND o.published_at IS NULL) \
           AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.job_id = jobs.job_id) \
         ORDER BY updated_at LIMIT ?{m}",
        one_of = one_of.join(" OR "),
        n = statuses + 1,
        m = statuses + 2,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::migrations::plans::{migrated_file, query_plan};
    use seatclaim_core::domain::Retention;

    /// The periodic delete walks the index of decided jobs, not every job of the file.
    #[test]
    fn expiring_jobs_are_found_through_the_index_of_decided_jobs() {
        let (_dir, conn) = migrated_file();
        let values = Retention::EXPIRING
            .iter()
            .map(|status| rusqlite::types::Value::Text(status.as_str().to_owned()))
            .chain([0_i64.into(), 500_i64.into()]);
        let plan = query_plan(
            &conn,
            &expiring_jobs(Retention::EXPIRING.len()),
            params_from_iter(values),
        );
        assert!(
            plan.iter()
                .any(|step| step.contains("USING INDEX jobs_decided")),
            "{plan:?}"
        );
    }
}
