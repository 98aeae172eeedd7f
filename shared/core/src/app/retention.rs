//! Retention: deleting what the domain's `Retention` lets go, so the stores stay bounded over
//! years of sales. The worker runs it periodically; DynamoDB's TTL does the same on AWS, where
//! this deletes nothing.

use crate::domain::Retention;
use crate::ports::{Backend, BackendError};

/// Jobs deleted per backend call: each call is one short transaction beside the sale's writes.
const PURGE_PAGE: usize = 500;

/// Deletes every decided job (with its key and history) and published event past `retention`
/// by now; returns how many jobs.
pub async fn purge_once(backend: &Backend, retention: Retention) -> Result<usize, BackendError> {
    let cutoff = retention.cutoff(backend.clock.now());
    let mut total = 0;
    loop {
        let purged = backend
            .jobs
            .purge_decided(&Retention::EXPIRING, cutoff, PURGE_PAGE)
            .await?;
        total += purged;
        if purged < PURGE_PAGE {
            return Ok(total);
        }
    }
}
