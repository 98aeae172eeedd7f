//! The worker's heart: deciding one received batch. Every message is settled on its own
//! (acknowledged, retried later, or dead-lettered), so one bad intent never holds up the rest.

use std::time::Instant;

use jiff::SignedDuration;
use seatclaim_shared::Backend;
use seatclaim_shared::domain::{Closure, Intent};
use seatclaim_shared::ports::{BackendError, ClaimOutcome, Delivery, ErrorKind, Receipt};
use tracing::{Instrument, info, info_span, warn};

use crate::backoff;

/// The limits a batch is decided under.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Receives an intent gets before its job is failed and the message dead-lettered.
    pub max_attempts: u32,
    /// An intent older than this when it is processed is rejected as "request expired".
    pub max_intent_age: SignedDuration,
}

impl Limits {
    /// `max_attempts` with the default maximum age (15 minutes).
    #[must_use]
    pub fn attempts(max_attempts: u32) -> Self {
        Self {
            max_attempts,
            max_intent_age: SignedDuration::from_mins(15),
        }
    }
}

/// What happened to each message of a batch; the loop logs it and the tests assert on it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct BatchOutcome {
    /// Jobs that now hold their seats.
    pub held: usize,
    /// Jobs rejected because the seats were not available.
    pub rejected: usize,
    /// Jobs rejected because their intent was too old ("request expired").
    pub expired: usize,
    /// Redeliveries of jobs decided earlier; acknowledged without change.
    pub already_decided: usize,
    /// Messages left in the queue to be retried after a backoff.
    pub retried: usize,
    /// Messages dead-lettered, their jobs FAILED.
    pub dead_lettered: usize,
}

/// Decides a batch of deliveries under `limits` and acknowledges the decided ones.
///
/// Order matters for the invariants: a claim commits before its message is acknowledged, so a
/// crash in between only causes a redelivery, which finds the job decided and changes nothing.
pub async fn process_batch(
    backend: &Backend,
    deliveries: Vec<Delivery>,
    limits: Limits,
) -> BatchOutcome {
    let (outcome, decided) = decide_batch(backend, deliveries, limits).await;
    if !decided.is_empty() {
        if let Err(error) = backend.queue.delete(&decided).await {
            // The claims are committed; the messages will come back and be acknowledged as already decided.
            warn!(%error, count = decided.len(), "could not acknowledge decided intents");
        }
    }
    outcome
}

/// Decides a batch of deliveries under `limits` and returns the receipts of the decided ones,
/// for the caller to acknowledge: the worker loop does it together with its next receive.
pub async fn decide_batch(
    backend: &Backend,
    deliveries: Vec<Delivery>,
    limits: Limits,
) -> (BatchOutcome, Vec<Receipt>) {
    metrics::histogram!("seatclaim_batch_size").record(deliveries.len() as f64);
    let mut outcome = BatchOutcome::default();
    let mut acknowledged: Vec<Receipt> = Vec::with_capacity(deliveries.len());
    let mut work: Vec<(Delivery, Intent)> = Vec::with_capacity(deliveries.len());
    let now = backend.clock.now();
    for delivery in deliveries {
        match serde_json::from_str::<Intent>(&delivery.body) {
            Err(error) => {
                give_up(
                    backend,
                    &delivery,
                    &format!("undecodable intent: {error}"),
                    &mut outcome,
                )
                .await;
            }
            Ok(_) if delivery.receive_count > limits.max_attempts => {
                let reason = format!("gave up after {} attempts", limits.max_attempts);
                give_up(backend, &delivery, &reason, &mut outcome).await;
            }
            Ok(intent) if intent.is_stale(now, limits.max_intent_age) => {
                if expire(backend, &intent, &mut outcome).await {
                    acknowledged.push(delivery.receipt.clone());
                }
            }
            Ok(intent) => work.push((delivery, intent)),
        }
    }
    let intents: Vec<Intent> = work.iter().map(|(_, intent)| intent.clone()).collect();
    let started = Instant::now();
    let results = if intents.is_empty() {
        Vec::new()
    } else {
        claim_each(backend, &intents).await
    };
    metrics::histogram!("seatclaim_claim_duration_seconds").record(started.elapsed().as_secs_f64());
    let decided_at = backend.clock.now();
    for ((delivery, intent), result) in work.iter().zip(results) {
        let span =
            info_span!("intent", job_id = %intent.job_id, receive_count = delivery.receive_count);
        async {
            match result {
                Ok(claimed) => {
                    record(&claimed, &mut outcome);
                    if !matches!(claimed, ClaimOutcome::AlreadyDecided(_)) {
                        // Time from POST to decision, the latency the buyer experiences.
                        let waited = decided_at.duration_since(intent.accepted_at).as_secs_f64();
                        metrics::histogram!("seatclaim_decision_latency_seconds")
                            .record(waited.max(0.0));
                    }
                    acknowledged.push(delivery.receipt.clone());
                }
                Err(error) => {
                    retry_or_give_up(backend, delivery, &error, limits.max_attempts, &mut outcome)
                        .await
                }
            }
        }
        .instrument(span)
        .await;
    }
    (outcome, acknowledged)
}

/// Claims the batch in one call; if that fails, claims each intent alone so that one intent's
/// permanent error fails only that intent.
async fn claim_each(
    backend: &Backend,
    intents: &[Intent],
) -> Vec<Result<ClaimOutcome, BackendError>> {
    let now = backend.clock.now();
    match backend.inventory.claim(intents, now).await {
        Ok(outcomes) => outcomes.into_iter().map(Ok).collect(),
        Err(error) if intents.len() == 1 => vec![Err(error)],
        Err(error) => {
            warn!(%error, size = intents.len(), "batch claim failed; claiming one by one");
            let mut results = Vec::with_capacity(intents.len());
            for intent in intents {
                let now = backend.clock.now();
                let result = backend
                    .inventory
                    .claim(std::slice::from_ref(intent), now)
                    .await;
                results.push(result.and_then(|mut single| {
                    single
                        .pop()
                        .ok_or_else(|| BackendError::permanent("claim returned no outcome"))
                }));
            }
            results
        }
    }
}

fn record(claimed: &ClaimOutcome, outcome: &mut BatchOutcome) {
    match claimed {
        ClaimOutcome::Held { seat_ids, until } => {
            outcome.held += 1;
            metrics::counter!("seatclaim_claims_total", "outcome" => "held").increment(1);
            info!(seats = seat_ids.len(), %until, "held");
        }
        ClaimOutcome::Rejected { reason } => {
            outcome.rejected += 1;
            metrics::counter!("seatclaim_claims_total", "outcome" => "rejected").increment(1);
            info!(reason, "rejected");
        }
        ClaimOutcome::AlreadyDecided(status) => {
            outcome.already_decided += 1;
            metrics::counter!("seatclaim_claims_total", "outcome" => "already_decided")
                .increment(1);
            info!(
                status = status.as_str(),
                "already decided; redelivery acknowledged"
            );
        }
    }
}

/// Rejects a stale intent's job ("request expired"); returns whether the message may be
/// acknowledged. Closing is conditional on PENDING, so a stale redelivery of a decided job changes nothing.
async fn expire(backend: &Backend, intent: &Intent, outcome: &mut BatchOutcome) -> bool {
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

async fn retry_or_give_up(
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
            if let Some(job_id) = delivery.job_id {
                if let Err(error) = backend.jobs.note_failure(job_id, &error.message).await {
                    warn!(%error, "could not record the failure on the job");
                }
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
async fn give_up(backend: &Backend, delivery: &Delivery, reason: &str, outcome: &mut BatchOutcome) {
    let job = delivery
        .job_id
        .map_or_else(|| "unknown".to_owned(), |id| id.to_string());
    let span = info_span!("intent", job_id = %job, receive_count = delivery.receive_count);
    async {
        if let Some(job_id) = delivery.job_id {
            if let Err(error) = backend
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
