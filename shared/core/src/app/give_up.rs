//! What happens to an intent that is not claimed: a stale one is rejected ("request expired"),
//! one that failed transiently is retried after a backoff, and one that cannot succeed has its
//! job FAILED and its message dead-lettered. Never acknowledged without a final state.

use tracing::{Instrument, info, info_span, warn};

use super::backoff;
use super::batch::BatchOutcome;
use crate::domain::{Closure, Intent};
use crate::ports::{Backend, BackendError, Delivery, ErrorKind};

/// Rejects a stale intent's job ("request expired"); returns whether the message may be
/// acknowledged. Closing is conditional on PENDING, so a stale redelivery of a decided job changes nothing.
pub(super) async fn expire(backend: &Backend, intent: &Intent, outcome: &mut BatchOutcome) -> bool {
    match backend
        .jobs
        .close(intent.job_id, &Closure::RequestExpired, backend.clock.now())
        .await
    {
        Ok(closed) => {
            if closed {
                outcome.expired += 1;
                metrics::counter!("seatclaim_claims_total", "outcome" => "expired").increment(1);
                info!(job_id = %intent.job_id, "rejected: request expired");
            }
            true
        }
        Err(error) => {
            warn!(%error, job_id = %intent.job_id, "could not expire a stale intent; it will be redelivered");
            false
        }
    }
}

/// Reschedules a delivery whose claim failed transiently, with a jittered backoff, or gives up
/// on it once its attempts are spent or the failure is permanent.
pub(super) async fn retry_or_give_up(
    backend: &Backend,
    delivery: &Delivery,
    error: &BackendError,
    max_attempts: u32,
    outcome: &mut BatchOutcome,
) {
    let retry_after = match error.kind {
        ErrorKind::Transient if delivery.receive_count >= max_attempts => None,
        ErrorKind::Transient => Some(backoff::delay_after(delivery.receive_count)),
        ErrorKind::Permanent => None,
    };
    match retry_after {
        Some(delay) => {
            warn!(%error, ?delay, "claim failed; will retry");
            outcome.retried += 1;
            metrics::counter!("seatclaim_retries_total").increment(1);
            if let Some(job_id) = delivery.job_id
                && let Err(error) = backend.jobs.note_failure(job_id, &error.message).await
            {
                warn!(%error, "could not record the failure on the job");
            }
            if let Err(error) = backend.queue.retry_after(&delivery.receipt, delay).await {
                warn!(%error, "could not reschedule; the visibility timeout will bring it back");
            }
        }
        None => {
            let reason = format!(
                "failed after {} attempts: {}",
                delivery.receive_count, error.message
            );
            give_up(backend, delivery, &reason, outcome).await;
        }
    }
}

/// Fails the job (so the buyer sees a final state) and then dead-letters the message (so operators
/// can inspect and replay it). If failing the job does not work, the message stays in the queue
/// and comes back after its visibility timeout: never acknowledged without a final state.
pub(super) async fn give_up(
    backend: &Backend,
    delivery: &Delivery,
    reason: &str,
    outcome: &mut BatchOutcome,
) {
    let job = delivery
        .job_id
        .map_or_else(|| "unknown".to_owned(), |id| id.to_string());
    let span = info_span!("intent", job_id = %job, receive_count = delivery.receive_count);
    async {
        if let Some(job_id) = delivery.job_id
            && let Err(error) = backend
                .jobs
                .close(
                    job_id,
                    &Closure::Failed {
                        reason: reason.to_owned(),
                    },
                    backend.clock.now(),
                )
                .await
        {
            warn!(%error, reason, "could not fail the job; leaving the message for redelivery");
            return;
        }
        match backend.queue.dead_letter(delivery, reason).await {
            Ok(()) => {
                outcome.dead_lettered += 1;
                metrics::counter!("seatclaim_dead_lettered_total").increment(1);
                metrics::counter!("seatclaim_claims_total", "outcome" => "failed").increment(1);
                warn!(reason, "dead-lettered");
            }
            Err(error) => warn!(%error, reason, "could not dead-letter; it will be redelivered"),
        }
    }
    .instrument(span)
    .await;
}
