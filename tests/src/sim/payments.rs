//! Invariant 10 (docs/simulation.md): no seat is sold without its payment where payments are
//! required. Every payment the simulated provider took is in the buyers' ledger, by reference;
//! a SOLD job whose seats cost something names one of them (`payment_ref`) of exactly its amount
//! due, and no payment sold two jobs. Where payments are waived a priced hold may be sold free,
//! but a payment a job names must still be its amount due.

use std::collections::BTreeMap;

use seatclaim_core::domain::{JobId, JobStatus, Money};
use seatclaim_core::memory::State;

/// The payments the simulated provider took, by reference: what each paid.
pub type Payments = BTreeMap<String, Money>;

/// Checks every SOLD job against `paid`, the payments made; `required`: whether a priced hold
/// may only be sold by its payment.
pub(super) fn check_paid(state: &State, paid: &Payments, required: bool) -> Result<(), String> {
    let mut sold_by: BTreeMap<&str, JobId> = BTreeMap::new();
    for job in state.jobs().filter(|job| job.status == JobStatus::Sold) {
        let Some(reference) = job.payment_ref.as_deref() else {
            if required && job.is_priced() {
                return Err(format!(
                    "job {} was SOLD without its payment: it costs {:?} and names none",
                    job.job_id, job.amount_due
                ));
            }
            continue;
        };
        if paid.get(reference) != job.amount_due.as_ref() {
            return Err(format!(
                "job {} was SOLD by payment {reference} of {:?}, but it costs {:?}",
                job.job_id,
                paid.get(reference),
                job.amount_due
            ));
        }
        if let Some(other) = sold_by.insert(reference, job.job_id) {
            return Err(format!(
                "payment {reference} sold two jobs: {other} and {}",
                job.job_id
            ));
        }
    }
    Ok(())
}
