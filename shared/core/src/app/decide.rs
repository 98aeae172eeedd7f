//! The worker's heart, the use case "decide a batch": deciding one received batch. Every message is settled on its own
//! (acknowledged, retried later, or dead-lettered), so one bad intent never holds up the rest.

use std::time::Instant;

use tracing::{Instrument, info, info_span, warn};

use super::batch::{BatchOutcome, Limits};
use super::give_up::{expire, give_up, retry_or_give_up};
use super::relay::publish_and_record;
use crate::domain::Intent;
use crate::ports::{Backend, BackendError, ClaimOutcome, Claims, Delivery, Message, Receipt};

/// Decides a batch of deliveries under `limits` and returns the receipts of the decided ones,
/// for the caller to acknowledge: the worker loop does it together with its next receive.
///
/// Order matters for the invariants: a claim commits before its message is acknowledged, so a
/// crash in between only causes a redelivery, which finds the job decided and changes nothing.
pub async fn decide_batch(
    backend: &Backend,
    deliveries: Vec<Delivery>,
    limits: Limits,
) -> (BatchOutcome, Vec<Receipt>) {
    metrics::histogram!("seatclaim_batch_size").record(deliveries.len() as f64);
    let mut outcome = BatchOutcome::default();
    let mut acknowledged: Vec<Receipt> = Vec::with_capacity(deliveries.len());
    let work = sort_out(backend, deliveries, limits, &mut outcome, &mut acknowledged).await;
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
                    record(&claimed, intent, decided_at, &mut outcome);
                    acknowledged.push(delivery.receipt.clone());
                }
                Err(error) => {
                    retry_or_give_up(backend, delivery, &error, limits.max_attempts, &mut outcome)
                        .await;
                }
            }
        }
        .instrument(span)
        .await;
    }
    (outcome, acknowledged)
}

/// Settles what needs no claim (undecodable messages, attempts exhausted, stale intents) and
/// returns the deliveries left to claim, with their intents.
async fn sort_out(
    backend: &Backend,
    deliveries: Vec<Delivery>,
    limits: Limits,
    outcome: &mut BatchOutcome,
    acknowledged: &mut Vec<Receipt>,
) -> Vec<(Delivery, Intent)> {
    let now = backend.clock.now();
    let mut work = Vec::with_capacity(deliveries.len());
    for delivery in deliveries {
        match &delivery.message {
            Message::Undecodable { error, .. } => {
                let reason = format!("undecodable intent: {error}");
                give_up(backend, &delivery, &reason, outcome).await;
            }
            Message::Intent(_) if delivery.receive_count > limits.max_attempts => {
                let reason = format!("gave up after {} attempts", limits.max_attempts);
                give_up(backend, &delivery, &reason, outcome).await;
            }
            Message::Intent(intent) if intent.is_stale(now, limits.max_intent_age) => {
                if expire(backend, intent, outcome).await {
                    acknowledged.push(delivery.receipt.clone());
                }
            }
            Message::Intent(intent) => {
                let intent = intent.clone();
                work.push((delivery, intent));
            }
        }
    }
    work
}

/// Claims a batch at `now`, then publishes and records the events the backend left unrecorded:
/// when this returns, every decision of the batch has its event, so its intents may be
/// acknowledged.
pub async fn claim(
    backend: &Backend,
    intents: &[Intent],
    now: jiff::Timestamp,
) -> Result<Vec<ClaimOutcome>, BackendError> {
    let Claims {
        outcomes,
        unrecorded,
    } = backend.inventory.claim(intents, now).await?;
    publish_and_record(backend, &unrecorded).await?;
    Ok(outcomes)
}

/// Claims the batch in one call; if that fails, claims each intent alone so that one intent's
/// permanent error fails only that intent.
async fn claim_each(
    backend: &Backend,
    intents: &[Intent],
) -> Vec<Result<ClaimOutcome, BackendError>> {
    let now = backend.clock.now();
    match claim(backend, intents, now).await {
        Ok(outcomes) => outcomes.into_iter().map(Ok).collect(),
        Err(error) if intents.len() == 1 => vec![Err(error)],
        Err(error) => {
            warn!(%error, size = intents.len(), "batch claim failed; claiming one by one");
            let mut results = Vec::with_capacity(intents.len());
            for intent in intents {
                let now = backend.clock.now();
                let result = claim(backend, std::slice::from_ref(intent), now).await;
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

fn record(
    claimed: &ClaimOutcome,
    intent: &Intent,
    decided_at: jiff::Timestamp,
    outcome: &mut BatchOutcome,
) {
    match claimed {
        ClaimOutcome::Held { .. } => outcome.held += 1,
        ClaimOutcome::Rejected { .. } => outcome.rejected += 1,
        ClaimOutcome::Waitlisted => outcome.waitlisted += 1,
        ClaimOutcome::AlreadyDecided(_) => outcome.already_decided += 1,
    }
    record_decision(claimed, intent, decided_at);
}

/// Counts and logs one claim's outcome, wherever it was decided (a worker's batch, or the
/// admission's own write).
pub(super) fn record_decision(
    claimed: &ClaimOutcome,
    intent: &Intent,
    decided_at: jiff::Timestamp,
) {
    if !matches!(claimed, ClaimOutcome::AlreadyDecided(_)) {
        // Time from POST to decision, the latency the buyer experiences.
        let waited = decided_at.duration_since(intent.accepted_at).as_secs_f64();
        metrics::histogram!("seatclaim_decision_latency_seconds").record(waited.max(0.0));
    }
    match claimed {
        ClaimOutcome::Held { seat_ids, until } => {
            metrics::counter!("seatclaim_claims_total", "outcome" => "held").increment(1);
            info!(seats = seat_ids.len(), %until, "held");
        }
        ClaimOutcome::Rejected { reason } => {
            metrics::counter!("seatclaim_claims_total", "outcome" => "rejected").increment(1);
            info!(reason = %reason.text, reason_code = %reason.code, "rejected");
        }
        ClaimOutcome::Waitlisted => {
            metrics::counter!("seatclaim_claims_total", "outcome" => "waitlisted").increment(1);
            info!("waitlisted");
        }
        ClaimOutcome::AlreadyDecided(status) => {
            metrics::counter!("seatclaim_claims_total", "outcome" => "already_decided")
                .increment(1);
            info!(
                status = status.as_str(),
                "already decided; redelivery acknowledged"
            );
        }
    }
}
