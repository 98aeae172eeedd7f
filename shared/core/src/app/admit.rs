//! The use case "admit a reservation": the one durable write behind the API's 202.

use super::decide::record_decision;
use crate::domain::{Access, BuyerId, EventId, IdempotencyKey, Intent, SeatRequest};
use crate::ports::{Admission, Backend, BackendError, ClaimOutcome};

/// Makes a buyer's request durable as a PENDING job with its intent queued (or recognises a
/// retry of it), admitted under `access` (a sales channel, and the code that admits to it) if
/// given, and counts the admission by result. With `decide` (the process runs the
/// worker), the store may decide the claim in the same write ([`Admission::Decided`]), counted
/// as the worker counts its decisions.
pub async fn admit(
    backend: &Backend,
    key: &IdempotencyKey,
    event_id: EventId,
    (buyer_id, access): (BuyerId, Option<Access>),
    request: SeatRequest,
    decide: bool,
) -> Result<Admission, BackendError> {
    let intent = Intent {
        access,
        job_id: backend.admissions.new_job_id(&buyer_id, key),
        event_id,
        buyer_id,
        request,
        accepted_at: backend.clock.now(),
        opens_at: None,
    };
    let admission = if decide {
        backend.admissions.admit_and_decide(key, &intent).await?
    } else {
        backend.admissions.admit(key, &intent).await?
    };
    let result = match &admission {
        Admission::Accepted(_) | Admission::Prequeued(_) => "accepted",
        Admission::Decided(job) => {
            let outcome = ClaimOutcome::of_decided(job);
            record_decision(&outcome, &intent, backend.clock.now());
            "accepted"
        }
        Admission::Duplicate(_) => "duplicate",
        _ => "refused",
    };
    metrics::counter!("seatclaim_intents_admitted_total", "result" => result).increment(1);
    Ok(admission)
}
