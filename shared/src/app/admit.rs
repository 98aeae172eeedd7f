//! The use case "admit a reservation": the one durable write behind the API's 202.

use crate::domain::{BuyerId, EventId, IdempotencyKey, Intent, SeatRequest};
use crate::ports::{Admission, Backend, BackendError};

/// Makes a buyer's request durable as a PENDING job with its intent queued (or recognises a
/// retry of it), and counts the admission by result. Nothing about the seats is decided here.
pub async fn admit(
    backend: &Backend,
    key: &IdempotencyKey,
    event_id: EventId,
    buyer_id: BuyerId,
    request: SeatRequest,
) -> Result<Admission, BackendError> {
    let intent = Intent {
        job_id: backend.admissions.new_job_id(&buyer_id, key),
        event_id,
        buyer_id,
        request,
        accepted_at: backend.clock.now(),
    };
    let admission = backend.admissions.admit(key, &intent).await?;
    let result = match &admission {
        Admission::Accepted(_) => "accepted",
        Admission::Duplicate(_) => "duplicate",
        _ => "refused",
    };
    metrics::counter!("seatclaim_intents_admitted_total", "result" => result).increment(1);
    Ok(admission)
}
