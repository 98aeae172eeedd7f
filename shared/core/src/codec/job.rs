//! The job's stored shape: one flat record of text and numbers, the same for a SQLite row and a
//! DynamoDB item.

use super::{from_json, from_ms, to_json, to_ms};
use serde::{Deserialize, Serialize};

use crate::domain::{BuyerId, EventId, Job, JobId, JobStatus, Money, ReasonCode};
use crate::ports::BackendError;

/// A job as stored: ids as text, the request and seat list as JSON, instants as milliseconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRecord {
    /// The job id.
    pub job_id: String,
    /// The event.
    pub event_id: String,
    /// The buyer.
    pub buyer_id: String,
    /// The seat request, JSON.
    pub request: String,
    /// The status's storage spelling.
    pub status: String,
    /// The seats held or sold, a JSON list.
    pub seat_ids: String,
    /// The hold's deadline, while it has one.
    pub hold_until: Option<i64>,
    /// Why it was rejected or failed.
    pub reason: Option<String>,
    /// The code of `reason`; `None` on a job stored before codes, whose code is read from its
    /// status and text ([`reason_code`]).
    pub reason_code: Option<String>,
    /// When admission accepted it.
    pub accepted_at: i64,
    /// The first transient failure met.
    pub first_error: Option<String>,
    /// The latest transient failure met.
    pub last_error: Option<String>,
    /// What a priced hold costs and the payment that sold it, JSON; `None` for free seats.
    pub payment: Option<String>,
    /// How many times the hold was extended.
    pub hold_extensions: i64,
    /// The channel and access code it was admitted under, JSON; `None` for a public job (and
    /// every job stored before channels).
    pub access: Option<String>,
}

/// The money side of a job, stored as one JSON value (most jobs have none).
#[derive(Default, Serialize, Deserialize)]
struct Charges {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    amount_due: Option<Money>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    payment_ref: Option<String>,
}

/// A job's stored money side (its record's `payment`): what it owes and the payment that sold
/// it, or `None` for a free job. A transition's write needs this field alone.
pub fn encode_payment(job: &Job) -> Result<Option<String>, BackendError> {
    match (&job.amount_due, &job.payment_ref) {
        (None, None) => Ok(None),
        (amount_due, payment_ref) => to_json(&Charges {
            amount_due: *amount_due,
            payment_ref: payment_ref.clone(),
        })
        .map(Some),
    }
}

impl JobRecord {
    /// The record of `job`.
    pub fn of(job: &Job) -> Result<Self, BackendError> {
        Ok(Self {
            job_id: job.job_id.to_string(),
            event_id: job.event_id.as_str().to_owned(),
            buyer_id: job.buyer_id.as_str().to_owned(),
            request: to_json(&job.request)?,
            status: job.status.as_str().to_owned(),
            seat_ids: to_json(&job.seat_ids)?,
            hold_until: job.hold_expires_at.map(to_ms),
            reason: job.reason.clone(),
            reason_code: job.reason_code.map(|code| code.as_str().to_owned()),
            accepted_at: to_ms(job.accepted_at),
            first_error: job.first_error.clone(),
            last_error: job.last_error.clone(),
            payment: encode_payment(job)?,
            hold_extensions: i64::from(job.hold_extensions),
            access: job.access.as_ref().map(to_json).transpose()?,
        })
    }

    /// Checks every field and turns the record into a job.
    pub fn into_job(self) -> Result<Job, BackendError> {
        let id = self.job_id.clone();
        let corrupt = |what: &str| BackendError::permanent(format!("job {id} has {what}"));
        let charges: Charges = self
            .payment
            .as_deref()
            .map(from_json)
            .transpose()?
            .unwrap_or_default();
        let status = JobStatus::parse(&self.status).ok_or_else(|| corrupt("an unknown status"))?;
        let reason_code = reason_code(status, self.reason_code.as_deref(), self.reason.as_deref());
        Ok(Job {
            job_id: JobId::parse(&self.job_id).ok_or_else(|| corrupt("an invalid id"))?,
            event_id: EventId::parse(&self.event_id).map_err(|_| corrupt("an invalid event id"))?,
            buyer_id: BuyerId::parse(&self.buyer_id).map_err(|_| corrupt("an invalid buyer id"))?,
            request: from_json(&self.request)?,
            status,
            seat_ids: from_json(&self.seat_ids)?,
            hold_expires_at: self.hold_until.map(from_ms).transpose()?,
            reason: self.reason,
            reason_code,
            amount_due: charges.amount_due,
            payment_ref: charges.payment_ref,
            hold_extensions: u32::try_from(self.hold_extensions)
                .map_err(|_| corrupt("an invalid extension count"))?,
            accepted_at: from_ms(self.accepted_at)?,
            first_error: self.first_error,
            last_error: self.last_error,
            access: self.access.as_deref().map(from_json).transpose()?,
        })
    }
}

/// The code of a stored reason: the one stored beside it; for one stored before codes (or by
/// a build that knows a code this one does not), FAILED's `failed` or the code its fixed text
/// says. `None` when there is no reason, or a text no rejection had.
#[must_use]
pub fn reason_code(
    status: JobStatus,
    stored: Option<&str>,
    reason: Option<&str>,
) -> Option<ReasonCode> {
    let reason = reason?;
    stored
        .and_then(ReasonCode::parse)
        .or_else(|| (status == JobStatus::Failed).then_some(ReasonCode::Failed))
        .or_else(|| ReasonCode::of_legacy_text(reason))
}
