//! Requests that wait for a job's decision: `GET /v1/jobs/{id}?wait=N` and a reservation POST
//! sent with `Prefer: wait=N`. Both take one of a bounded number of slots
//! (`SEATCLAIM_MAX_LONG_POLLS`), so that waiting requests cannot pile up without limit; with
//! none free, a request is answered at once. A buyer holds at most
//! `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` of them at once, so that one buyer cannot take the
//! slots every other buyer waits in.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use seatclaim_core::app;
use seatclaim_core::domain::{BuyerId, Job, JobId};
use seatclaim_core::ports::{Backend, BackendError};
use tokio::sync::{Semaphore, SemaphorePermit};

use crate::settings::ServerLimits;

/// The slots of waiting requests, each buyer's share of them, and how long a `Prefer: wait`
/// may wait.
pub struct LongPolls {
    slots: Semaphore,
    per_buyer: usize,
    /// The slots each buyer holds now; a buyer holding none has no entry.
    held: Mutex<HashMap<BuyerId, usize>>,
    max_prefer_wait_secs: u64,
}

/// Why a request may not wait now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoSlot {
    /// Every slot is taken: the request is answered at once, as the job stands.
    Full,
    /// The buyer already holds its `SEATCLAIM_MAX_LONG_POLLS_PER_BUYER` slots.
    BuyerFull {
        /// The slots the buyer holds.
        held: usize,
    },
}

impl LongPolls {
    /// The slots and caps `limits` set.
    #[must_use]
    pub fn new(limits: &ServerLimits) -> Self {
        Self {
            slots: Semaphore::new(limits.max_long_polls),
            per_buyer: usize::try_from(limits.max_long_polls_per_buyer).unwrap_or(usize::MAX),
            held: Mutex::new(HashMap::new()),
            max_prefer_wait_secs: limits.max_prefer_wait_secs,
        }
    }

    /// The seconds a reservation POST that asked for `asked` waits: at most
    /// `SEATCLAIM_MAX_PREFER_WAIT_SECS`; `None` when that leaves nothing to wait for.
    #[must_use]
    pub fn prefer_wait(&self, asked: u64) -> Option<u64> {
        Some(asked.min(self.max_prefer_wait_secs)).filter(|seconds| *seconds > 0)
    }

    /// A slot to wait in, counted against `buyer`'s share when the request has one (`None`:
    /// only the API's cap applies); or why there is none.
    pub fn take(&self, buyer: Option<&BuyerId>) -> Result<Slot<'_>, NoSlot> {
        if let Some(buyer) = buyer {
            let mut held = self.held();
            let count = held.entry(buyer.clone()).or_insert(0);
            if *count >= self.per_buyer {
                return Err(NoSlot::BuyerFull { held: *count });
            }
            *count += 1;
        }
        let owner = buyer.map(|buyer| (self, buyer.clone()));
        match self.slots.try_acquire() {
            Ok(permit) => Ok(Slot {
                _permit: permit,
                owner,
                _waiting: Waiting::start(),
            }),
            Err(_) => {
                if let Some((_, buyer)) = owner {
                    self.release(&buyer);
                }
                Err(NoSlot::Full)
            }
        }
    }

    /// Gives one of `buyer`'s slots back, forgetting a buyer who holds none.
    fn release(&self, buyer: &BuyerId) {
        let mut held = self.held();
        if let Some(count) = held.get_mut(buyer) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                held.remove(buyer);
            }
        }
    }

    /// The buyers' counts; a panic while they were held left them consistent (each change is
    /// one statement), so a poisoned lock is taken as it is.
    fn held(&self) -> MutexGuard<'_, HashMap<BuyerId, usize>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A taken slot: given back (to the API and to its buyer) when dropped.
pub struct Slot<'a> {
    _permit: SemaphorePermit<'a>,
    owner: Option<(&'a LongPolls, BuyerId)>,
    _waiting: Waiting,
}

impl Slot<'_> {
    /// The job once it has left PENDING, or as it stands after `seconds`, waited for in this
    /// slot, which is given back after.
    pub async fn wait_for_decision(
        self,
        backend: &Backend,
        job_id: JobId,
        seconds: u64,
    ) -> Result<Option<Job>, BackendError> {
        let max = Duration::from_secs(seconds);
        app::jobs::wait_for_decision(backend, job_id, max).await
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Some((polls, buyer)) = &self.owner {
            polls.release(buyer);
        }
    }
}

/// Counts a waiting request in `seatclaim_long_polls_waiting` while it lives.
struct Waiting;

impl Waiting {
    fn start() -> Self {
        metrics::gauge!("seatclaim_long_polls_waiting").increment(1.0);
        Self
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        metrics::gauge!("seatclaim_long_polls_waiting").decrement(1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polls(max: usize, per_buyer: u32) -> LongPolls {
        LongPolls::new(&ServerLimits {
            max_long_polls: max,
            max_long_polls_per_buyer: per_buyer,
            ..ServerLimits::default()
        })
    }

    fn buyer(name: &str) -> BuyerId {
        BuyerId::parse(name).unwrap()
    }

    #[test]
    fn a_buyer_holds_at_most_its_share_and_gets_it_back() {
        let polls = polls(10, 2);
        let b1 = buyer("b1");
        let first = polls.take(Some(&b1)).unwrap();
        let _second = polls.take(Some(&b1)).unwrap();
        assert_eq!(
            polls.take(Some(&b1)).err(),
            Some(NoSlot::BuyerFull { held: 2 })
        );
        assert!(polls.take(Some(&buyer("b2"))).is_ok(), "another buyer");
        assert!(polls.take(None).is_ok(), "a request with no buyer");
        drop(first);
        assert!(polls.take(Some(&b1)).is_ok(), "a slot given back");
    }

    #[test]
    fn past_the_apis_cap_nobody_waits_and_no_share_is_kept() {
        let polls = polls(1, 4);
        let b1 = buyer("b1");
        let taken = polls.take(None).unwrap();
        assert_eq!(polls.take(Some(&b1)).err(), Some(NoSlot::Full));
        drop(taken);
        assert!(polls.held().is_empty(), "the refused buyer holds nothing");
        drop(polls.take(Some(&b1)).unwrap());
        assert!(polls.held().is_empty(), "a buyer holding none is forgotten");
    }
}
