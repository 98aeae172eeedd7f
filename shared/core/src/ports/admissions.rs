use async_trait::async_trait;

use super::BackendError;
use crate::domain::{
    BuyerId, IdempotencyKey, Intent, Job, JobId, SeatId, SeatRequest, Section, SectionCapacity,
};

/// What admitting an intent did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// A new job was created and its intent enqueued.
    Accepted(JobId),
    /// The job waits in its event's pre-queue (new, or the retry of one that still waits): it
    /// is decided after the sale opens.
    Prequeued(JobId),
    /// A new job was created and decided in the admission's own atomic write (HELD or
    /// REJECTED, with its reservation event); nothing was enqueued. Only
    /// [`Admissions::admit_and_decide`] answers this.
    Decided(Box<Job>),
    /// The buyer sent this key with this request before; this is its job, nothing new was enqueued.
    Duplicate(JobId),
    /// The buyer used this key for a different request.
    KeyReused,
    /// No such event.
    UnknownEvent,
    /// The event has none of these seats.
    UnknownSeats(Vec<SeatId>),
    /// The event has no seats in this section.
    UnknownSection(Section),
    /// The section can never serve this request (more seats than it has, or more together
    /// than its longest row holds), with the reason.
    Unservable(String),
    /// The event's sale has not started and this buyer already waits in its pre-queue with
    /// this job: one intent per buyer there.
    AlreadyQueued(JobId),
}

impl Admission {
    /// The answer to a key the buyer used before, whose record holds `earlier` (the request's
    /// fingerprint) and `job_id`: the same request again gets its job back, any other is refused.
    #[must_use]
    pub fn for_earlier(earlier: &str, intent: &Intent, job_id: JobId) -> Self {
        if earlier == intent.request.fingerprint(&intent.event_id) {
            Self::Duplicate(job_id)
        } else {
            Self::KeyReused
        }
    }

    /// The refusal of a request for seats or a section the event lacks, or that its section can
    /// never serve, if it is one: `found` are the requested seats the event has (for an exact
    /// request); `section` says whether the event has the section (for a section request) and,
    /// where the store knows it, the section's capacity. A client can fix these, so they are
    /// answered at admission rather than becoming a rejected job or a wait that never ends.
    #[must_use]
    pub fn refusal(request: &SeatRequest, found: &[SeatId], section: SectionKnown) -> Option<Self> {
        match (request, section) {
            (SeatRequest::Seats(wanted), _) => {
                let missing: Vec<SeatId> = wanted
                    .iter()
                    .filter(|id| !found.contains(id))
                    .cloned()
                    .collect();
                (!missing.is_empty()).then_some(Self::UnknownSeats(missing))
            }
            (SeatRequest::Section { section, .. }, SectionKnown::No) => {
                Some(Self::UnknownSection(section.clone()))
            }
            (_, SectionKnown::Yes(Some(capacity))) => {
                capacity.refusal(request).map(Self::Unservable)
            }
            (_, SectionKnown::Yes(None)) => None,
        }
    }
}

/// Whether an event has the section a request names, and what it can serve where the store
/// knows (`None`: an event created before capacities were recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKnown {
    /// No such section (or the request names none).
    No,
    /// The section exists.
    Yes(Option<SectionCapacity>),
}

/// Admission: the one write the API makes for a reservation.
#[async_trait]
pub trait Admissions: Send + Sync {
    /// Records the idempotency key, the PENDING job and the queued intent. When this returns
    /// `Accepted` or `Duplicate` the intent is durable and will be decided, even if the API dies
    /// the next instant; that is what lets the API answer 202 without waiting for the worker.
    async fn admit(&self, key: &IdempotencyKey, intent: &Intent)
    -> Result<Admission, BackendError>;

    /// Admits as [`Admissions::admit`] does, but a store that can decide the claim inside the
    /// admission's own write does so when nothing queued is waiting to be decided first
    /// ([`Admission::Decided`]): one durable write per decision. Only a process that runs the
    /// worker asks for this, so that deciding here is what the worker would do next. Stores
    /// that cannot (a queue between API and worker, as on AWS) admit and enqueue.
    async fn admit_and_decide(
        &self,
        key: &IdempotencyKey,
        intent: &Intent,
    ) -> Result<Admission, BackendError> {
        self.admit(key, intent).await
    }

    /// The id of the job `buyer` asks for with `key`: the store that keeps jobs chooses the kind
    /// that suits its keys (SQLite: time-ordered, [`JobId::time_ordered`]; DynamoDB: named by
    /// the key, [`JobId::for_key`], and then it admits only intents whose id is that one).
    fn new_job_id(&self, buyer: &BuyerId, key: &IdempotencyKey) -> JobId;
}
