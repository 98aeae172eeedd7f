//! The use cases that end a hold: the buyer's confirm or cancel, and the sweep that expires
//! lapsed ones. The domain decides each (`Job::settle`); the inventory executes it.

use crate::domain::{JobAction, JobId, Tender};
use crate::ports::{Backend, BackendError, Settled};

/// Confirms or cancels a job for its buyer, decided at the instant the store writes it; a
/// confirm sells a priced hold only for its payment (`tender`), unless payments are waived.
pub async fn settle(
    backend: &Backend,
    job_id: JobId,
    action: JobAction,
    tender: &Tender,
) -> Result<Settled, BackendError> {
    backend.inventory.settle(job_id, action, tender).await
}

/// Jobs expired per backend call; a large backlog is worked through in several calls.
const SWEEP_PAGE: usize = 500;

/// Expires every hold that has lapsed by now; returns how many.
pub async fn sweep_once(backend: &Backend) -> Result<usize, BackendError> {
    let mut total = 0;
    loop {
        let released = backend
            .inventory
            .release_lapsed_holds(backend.clock.now(), SWEEP_PAGE)
            .await?;
        total += released;
        if released < SWEEP_PAGE {
            return Ok(total);
        }
    }
}
