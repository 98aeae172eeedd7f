//! What the simulated clients were told and what they found wrong (the buyers' ledger), and
//! what the adversaries did: the run's record of the clients' side, which the report sums.

use std::collections::BTreeMap;

use seatclaim_core::domain::JobId;

use super::payments::Payments;

/// What the buyers were told, and what they found wrong.
#[derive(Debug, Default)]
pub struct Ledger {
    /// The job each key was answered with.
    pub keys: BTreeMap<String, JobId>,
    /// Broken promises, in the order found.
    pub violations: Vec<String>,
    /// Retries of a request already answered (each must name the same job).
    pub retries: u64,
    /// Confirms and cancels that went through.
    pub settled: u64,
    /// Replays the operator ran.
    pub replays: u64,
    /// Copies the queue delivered on its own.
    pub duplicates: u64,
    /// Every payment the simulated provider took, by reference (`payments.rs`).
    pub payments: Payments,
    /// What the adversaries did.
    pub adversaries: AdversaryCounts,
    /// When the sweeper last began a pass that ended well: a channel's release is served by
    /// the first such pass begun after it.
    pub swept_at: Option<jiff::Timestamp>,
}

impl Ledger {
    /// Notes a broken promise.
    pub(super) fn broken(&mut self, what: String) {
        self.violations.push(what);
    }

    /// Records an answer naming `job_id` for `key`; every answer for a key names one job, and
    /// only the first can be `Accepted`.
    pub(super) fn answered(&mut self, key: &str, job_id: JobId, accepted: bool) {
        match self.keys.get(key) {
            Some(first) if *first != job_id => self.broken(format!(
                "key {key} was answered with job {first}, then with job {job_id}"
            )),
            Some(_) if accepted => {
                self.broken(format!("key {key} was accepted twice (job {job_id})"));
            }
            _ => {
                self.keys.insert(key.to_owned(), job_id);
            }
        }
    }
}

/// What the adversaries did, for the report (each must have happened over a soak).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AdversaryCounts {
    /// Confirms fired by the confirmers.
    pub confirms: u64,
    /// Of them, refused as unpaid (`PaymentRequired`).
    pub unpaid_refused: u64,
    /// Requests refused at admission as never servable.
    pub unservable: u64,
    /// Payers who held a seat and attacked its payment.
    pub payers: u64,
    /// Races of a cancel, an extension and a payment.
    pub races: u64,
}

impl AdversaryCounts {
    /// Adds `other` into these.
    pub fn absorb(&mut self, other: &Self) {
        self.confirms += other.confirms;
        self.unpaid_refused += other.unpaid_refused;
        self.unservable += other.unservable;
        self.payers += other.payers;
        self.races += other.races;
    }
}
