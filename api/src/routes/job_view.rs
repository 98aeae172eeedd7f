//! A job as buyers see it: the stored record in the contract's shape, with where it waits (a
//! PENDING job's place in its event's line, a WAITLISTED job's in its section's).

use jiff::Timestamp;
use seatclaim_core::app;
use seatclaim_core::domain::{
    BuyerId, EventId, Job, JobId, JobStatus, Money, QueuePosition, ReasonCode, SeatId,
};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use crate::error::ApiError;
use crate::state::AppState;

/// A job as clients see it.
#[derive(Serialize, ToSchema)]
#[schema(as = Job)]
pub struct JobView {
    /// The job's id.
    #[schema(value_type = String, format = "uuid")]
    job_id: JobId,
    /// Where it stands: PENDING, then HELD, WAITLISTED (in its section's line, for seats that
    /// come free), REJECTED or FAILED; a hold ends SOLD, CANCELLED or EXPIRED, a place in line
    /// HELD, REJECTED or CANCELLED. Every status but PENDING, WAITLISTED and HELD is final.
    #[schema(schema_with = job_status_schema)]
    status: JobStatus,
    /// The event.
    #[schema(value_type = String)]
    event_id: EventId,
    /// The buyer it is for.
    #[schema(value_type = String)]
    buyer_id: BuyerId,
    /// The seats held or sold: empty until a claim succeeds, kept after release.
    #[schema(value_type = Vec<String>)]
    seat_ids: Vec<SeatId>,
    /// When a HELD job's hold lapses; `null` in every other status.
    #[schema(value_type = Option<String>, format = DateTime)]
    hold_expires_at: Option<Timestamp>,
    /// Why a job was REJECTED (or, generically, FAILED), for a person.
    reason: Option<String>,
    /// The stable code of `reason`, for a client to match (`seat_unavailable`, `buyer_limit`,
    /// `no_adjacent_seats`, `request_expired`, ...; `failed` for every FAILED job); `null`
    /// when `reason` is.
    reason_code: Option<ReasonCode>,
    /// What a HELD job's seats cost (minor units); absent when they are free. A SOLD job keeps
    /// it, as what was paid.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<AmountDue>)]
    amount_due: Option<Money>,
    /// How many times the buyer extended the hold (`POST /v1/jobs/{job_id}/extend`).
    hold_extensions: u32,
    /// Where a PENDING job stands in its event's line; absent in every other status.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Queue>)]
    queue: Option<QueuePosition>,
    /// A WAITLISTED job's place in its section's line, from 1, in the order the intents were
    /// admitted; absent in every other status.
    #[serde(skip_serializing_if = "Option::is_none")]
    waitlist_position: Option<u64>,
}

/// A PENDING job's place in line.
#[derive(ToSchema)]
#[allow(
    dead_code,
    reason = "the schema of `QueuePosition`, which the domain serialises"
)]
pub struct Queue {
    /// Intents for the same event to be decided before this one and not decided yet (admitted
    /// before it, or drawn before it at the sale's opening): exact on the embedded backend, an
    /// estimate on AWS (see docs/line.md). Absent while the job waits for the opening.
    ahead: Option<u64>,
    /// When this job may be decided, at the rate the event's intents are being decided;
    /// `null` while no rate is known (before the first decisions). Absent while the job waits
    /// for the opening.
    #[schema(value_type = Option<String>, format = DateTime)]
    estimated_decision_at: Option<String>,
    /// The sale's start, while the job waits in its pre-queue (the only field then): its place
    /// in line is drawn at the opening.
    #[schema(value_type = Option<String>, format = DateTime)]
    opens_at: Option<String>,
}

/// An amount of money, as `amount_due` shows it.
#[derive(ToSchema)]
#[allow(
    dead_code,
    reason = "the schema of `Money`, which the domain serialises"
)]
pub struct AmountDue {
    /// Minor units of the currency (cents for EUR).
    amount: u64,
    /// The ISO 4217 code, three capital letters.
    currency: String,
}

/// The schema of a job's status: every [`JobStatus`]'s wire name.
fn job_status_schema() -> impl Into<RefOr<Schema>> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(JobStatus::ALL.map(JobStatus::as_str)))
}

/// What buyers read as a FAILED job's reason: the error itself (a backend's message) is for the
/// logs and `seatclaimctl jobs show`.
const FAILED_REASON: &str = "processing failed; the request will not be retried";

impl From<Job> for JobView {
    fn from(job: Job) -> Self {
        let (reason, reason_code) = match job.status {
            JobStatus::Failed => (Some(FAILED_REASON.to_owned()), Some(ReasonCode::Failed)),
            _ => (job.reason, job.reason_code),
        };
        Self {
            hold_expires_at: job
                .hold_expires_at
                .filter(|_| job.status == JobStatus::Held),
            job_id: job.job_id,
            status: job.status,
            event_id: job.event_id,
            buyer_id: job.buyer_id,
            seat_ids: job.seat_ids,
            reason,
            reason_code,
            amount_due: job.amount_due,
            hold_extensions: job.hold_extensions,
            queue: None,
            waitlist_position: None,
        }
    }
}

/// The job as buyers see it, with where it waits: a PENDING job's place in its event's line and
/// a WAITLISTED job's in its section's.
pub(crate) async fn view(state: &AppState, job: Job) -> Result<JobView, ApiError> {
    let backend = &state.backend;
    let queue = app::jobs::queue_position(backend, &state.line_rates, &job).await?;
    let waitlist_position = backend.jobs.waitlist_position(&job).await?;
    Ok(JobView {
        queue,
        waitlist_position,
        ..job.into()
    })
}
