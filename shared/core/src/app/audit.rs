//! The use case "audit an event": the domain's invariants checked over what the backend stores.

use std::collections::BTreeMap;

use crate::domain::{AuditLimits, EventId, Violation, audit};
use crate::ports::{Backend, BackendError};

/// What an audit found.
#[derive(Debug, Clone)]
pub struct AuditReport {
    /// How many seats the event has.
    pub seats: usize,
    /// How many of its jobs are in each status.
    pub jobs: BTreeMap<&'static str, usize>,
    /// The broken invariants; empty means the audit passed.
    pub violations: Vec<Violation>,
}

/// Audits `event_id` now under `limits` (the event's own opening, if any, counted in); `None` for
/// an unknown event.
pub async fn audit_event(
    backend: &Backend,
    event_id: &EventId,
    limits: AuditLimits,
) -> Result<Option<AuditReport>, BackendError> {
    let Some(seats) = backend.catalog.seat_map(event_id).await? else {
        return Ok(None);
    };
    let jobs = backend.jobs.of_event(event_id).await?;
    let oldest_unpublished = backend.outbox.oldest_unpublished().await?;
    let opening = backend.catalog.opening(event_id, None).await?;
    let limits = AuditLimits {
        opens_at: opening.map(|opening| opening.sale_starts_at),
        ..limits
    };
    let violations = audit(
        &seats,
        &jobs,
        oldest_unpublished,
        backend.clock.now(),
        limits,
    );
    let mut statuses = BTreeMap::new();
    for job in &jobs {
        *statuses.entry(job.status.as_str()).or_default() += 1;
    }
    Ok(Some(AuditReport {
        seats: seats.len(),
        jobs: statuses,
        violations,
    }))
}
