//! Payments: a provider's report that a hold was paid for. The domain decides whether the
//! payment sells the hold (`Job::settle` with the payment, in the inventory's atomic step at the
//! store's own time); a payment that sells nothing is published as [`PaymentUnmatched`] for the
//! refund workflow, and never touches a seat.

use crate::domain::{
    JobAction, JobId, Notice, PAYMENT_UNMATCHED, Payment, PaymentUnmatched, Reason, ReasonCode,
    Tender,
};
use crate::ports::{Backend, BackendError, Settled};

/// What a provider reported, as far as it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentReport {
    /// The provider's event id (Stripe's `evt_...`).
    pub provider_event_id: String,
    /// The job the payment names, if it names a valid job id.
    pub job_id: Option<JobId>,
    /// The payment, or why none could be read from the report (no amount, an unknown currency).
    pub payment: Result<Payment, String>,
    /// Why the report pays for nothing whatever it names, decided before any job is looked at
    /// (an event of another mode or of an account this deployment does not take payments for):
    /// it is published as unmatched with this reason.
    pub refused: Option<String>,
}

/// What a report came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PaymentOutcome {
    /// The job is SOLD by this payment (now, or by an earlier report of it).
    Paid(JobId),
    /// It sold nothing; the event was published.
    Unmatched(Box<PaymentUnmatched>),
}

/// Applies a provider's report: the job named is sold if it is HELD, its hold live and the
/// payment its amount due. A payment that cannot sell but already sold a job (reported again,
/// naming no job or naming it otherwise) is that job's, and nothing is published; else the
/// payment is published as unmatched, with the reason.
pub async fn record_payment(
    backend: &Backend,
    report: PaymentReport,
) -> Result<PaymentOutcome, BackendError> {
    let reason = match (&report.refused, &report.job_id, &report.payment) {
        (Some(why), _, _) => Reason::new(ReasonCode::PaymentRefused, why.clone()),
        (None, None, _) => Reason::new(ReasonCode::PaymentNamesNoJob, "the payment names no job"),
        (None, Some(_), Err(why)) => Reason::new(ReasonCode::PaymentUnreadable, why.clone()),
        (None, Some(job_id), Ok(payment)) => {
            match backend
                .inventory
                .settle(*job_id, JobAction::Confirm, &Tender::Paid(payment.clone()))
                .await?
            {
                Settled::Done(job) => return Ok(PaymentOutcome::Paid(job.job_id)),
                Settled::NotFound => {
                    Reason::new(ReasonCode::NotFound, format!("job {job_id} does not exist"))
                }
                Settled::Conflict(conflict) => Reason::new(conflict.code(), conflict.to_string()),
            }
        }
    };
    if let (None, Ok(payment)) = (&report.refused, &report.payment)
        && let Some(sold) = backend.jobs.sold_by_payment(&payment.reference).await?
    {
        tracing::info!(
            job_id = %sold,
            stripe_event_id = %report.provider_event_id,
            "a payment reported again after it sold its job"
        );
        return Ok(PaymentOutcome::Paid(sold));
    }
    let payment = report.payment.ok();
    let unmatched = PaymentUnmatched {
        kind: PAYMENT_UNMATCHED.to_owned(),
        job_id: report.job_id,
        stripe_event_id: report.provider_event_id,
        payment_ref: payment.as_ref().map(|p| p.reference.clone()),
        amount: payment.map(|p| p.paid),
        reason: reason.text,
        reason_code: reason.code,
        occurred_at: backend.clock.now(),
    };
    tracing::warn!(
        job_id = ?unmatched.job_id,
        stripe_event_id = %unmatched.stripe_event_id,
        reason = %unmatched.reason,
        reason_code = %unmatched.reason_code,
        "a payment sold nothing; published for a refund"
    );
    backend
        .publisher
        .publish_notice(&Notice::PaymentUnmatched(unmatched.clone()))
        .await?;
    Ok(PaymentOutcome::Unmatched(Box::new(unmatched)))
}
