//! Queue positions on DynamoDB, without a hot key. A sale's line is counted on its counts item
//! (outbox table, key `counts#<event>`: `admitted`, `decided`), but no request adds to it one
//! intent at a time: each process
//! counts its admissions and decisions per event and adds them there at most once a second
//! ([`FLUSH_EVERY`]), so the item takes one write per process per second, whatever the rate.
//!
//! An admission's ticket is the event's admissions so far, this one included, as this process
//! knows them: the total the item returned at its last addition plus what it admitted since (a
//! process's first admission for an event adds itself at once, to learn the total). A PENDING
//! job then has about `ticket - 1 - decided` intents ahead. It is an estimate, off by what other
//! processes admitted or decided in their last second not yet added, and by decisions made out
//! of admission order (SQS keeps no strict order, and workers decide side by side).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError, Weak};
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::ReturnValue;

use crate::DynamoStore;
use crate::dynamo::error::classify;
use crate::dynamo::item::{Item, n, opt_n, s};
use seatclaim_core::codec::from_ms;
use seatclaim_core::domain::{EventId, Job, JobId, Line};
use seatclaim_core::ports::{BackendError, BackgroundTask};

/// The key of an event's counts item, in the outbox table (which every process may update; no
/// task role writes the events table).
fn counts_key(event_id: &EventId) -> Item {
    Item::from([
        ("job_id".to_owned(), s(format!("counts#{event_id}"))),
        ("id".to_owned(), s("counts")),
    ])
}

/// How often each process adds its counts to the counts items.
pub(crate) const FLUSH_EVERY: Duration = Duration::from_secs(1);
/// How long an event's counts, once read, answer the positions of its jobs.
const READ_EVERY: Duration = Duration::from_secs(1);
/// The most events whose counts one process keeps read.
const MOST_READ: usize = 256;

/// One event's counts in this process.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    /// The event's admissions as the item last said, plus those being added now.
    known: Option<u64>,
    /// Admitted here since the last addition.
    admitted: u64,
    /// Decided here since the last addition.
    decided: u64,
}

/// An event's counts as its item holds them.
#[derive(Debug, Clone, Copy)]
struct EventCounts {
    admitted: u64,
    decided: u64,
}

/// This process's counts, and the event counts it read.
#[derive(Debug, Default)]
pub(crate) struct LineCounts {
    tallies: Mutex<HashMap<EventId, Tally>>,
    read: Mutex<HashMap<EventId, (Instant, EventCounts)>>,
}

impl LineCounts {
    fn tallies(&self) -> std::sync::MutexGuard<'_, HashMap<EventId, Tally>> {
        self.tallies.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The ticket of an admission counted here, or `None` before this process knows the
    /// event's total (then the admission adds itself at once: [`DynamoStore::ticket`]).
    fn admit(&self, event_id: &EventId) -> Option<u64> {
        let mut tallies = self.tallies();
        let tally = tallies.entry(event_id.clone()).or_default();
        let known = tally.known?;
        tally.admitted += 1;
        Some(known + tally.admitted)
    }

    /// Counts `count` decisions of `event_id` made here.
    pub(crate) fn decided(&self, event_id: &EventId, count: u64) {
        if count > 0 {
            self.tallies().entry(event_id.clone()).or_default().decided += count;
        }
    }

    /// Takes every count not added yet; the admissions taken count as known from now on.
    fn take(&self) -> Vec<(EventId, Tally)> {
        let mut tallies = self.tallies();
        tallies
            .iter_mut()
            .filter(|(_, tally)| tally.admitted > 0 || tally.decided > 0)
            .map(|(event_id, tally)| {
                let taken = *tally;
                tally.known = tally.known.map(|known| known + taken.admitted);
                (tally.admitted, tally.decided) = (0, 0);
                (event_id.clone(), taken)
            })
            .collect()
    }

    /// Records the event's total after an addition; or, if it failed, gives the counts back.
    fn added(&self, event_id: &EventId, taken: Tally, total: Option<u64>) {
        let mut tallies = self.tallies();
        let tally = tallies.entry(event_id.clone()).or_default();
        match total {
            Some(total) => tally.known = Some(total.max(tally.known.unwrap_or(0))),
            None => {
                tally.known = tally
                    .known
                    .map(|known| known.saturating_sub(taken.admitted));
                tally.admitted += taken.admitted;
                tally.decided += taken.decided;
            }
        }
    }
}

impl DynamoStore {
    /// The ticket of a new admission for `event_id` (see the module's doc).
    pub(crate) async fn ticket(&self, event_id: &EventId) -> Result<u64, BackendError> {
        if let Some(ticket) = self.process.lines.admit(event_id) {
            return Ok(ticket);
        }
        let taken = Tally {
            admitted: 1,
            ..Tally::default()
        };
        let total = self.add_counts(event_id, taken).await?;
        self.process
            .lines
            .added(event_id, Tally::default(), Some(total));
        Ok(total)
    }

    /// Adds `taken` to the event's counts item; returns its admissions total after.
    async fn add_counts(&self, event_id: &EventId, taken: Tally) -> Result<u64, BackendError> {
        let as_n = |count: u64| n(i64::try_from(count).unwrap_or(i64::MAX));
        let output = self
            .db
            .update_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(counts_key(event_id)))
            .update_expression("ADD admitted :admitted, decided :decided")
            .expression_attribute_values(":admitted", as_n(taken.admitted))
            .expression_attribute_values(":decided", as_n(taken.decided))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(|e| classify("UpdateItem event counts", e))?;
        let total = output
            .attributes()
            .map(|item| opt_n(item, "admitted"))
            .transpose()?
            .flatten();
        Ok(u64::try_from(total.unwrap_or(0)).unwrap_or(0))
    }

    /// Adds every count this process has not added yet, event by event.
    pub(crate) async fn flush_line_counts(&self) {
        for (event_id, taken) in self.process.lines.take() {
            match self.add_counts(&event_id, taken).await {
                Ok(total) => self.process.lines.added(&event_id, taken, Some(total)),
                Err(error) => {
                    tracing::warn!(%error, event_id = %event_id, "line counts kept for the next second");
                    self.process.lines.added(&event_id, taken, None);
                }
            }
        }
    }

    /// The event's admissions and decisions as its item says, read at most once a second.
    async fn event_counts(&self, event_id: &EventId) -> Result<EventCounts, BackendError> {
        // Real time, not the store's clock: this bounds requests, it decides nothing.
        let now = Instant::now();
        if let Some((at, counts)) = self.lines_read().get(event_id)
            && now.duration_since(*at) < READ_EVERY
        {
            return Ok(*counts);
        }
        let output = self
            .db
            .get_item()
            .table_name(&self.names.outbox_table)
            .set_key(Some(counts_key(event_id)))
            .projection_expression("admitted, decided")
            .send()
            .await
            .map_err(|e| classify("GetItem event counts", e))?;
        let count = |name: &str| -> Result<u64, BackendError> {
            let value = output.item().map(|item| opt_n(item, name)).transpose()?;
            Ok(u64::try_from(value.flatten().unwrap_or(0)).unwrap_or(0))
        };
        let counts = EventCounts {
            admitted: count("admitted")?,
            decided: count("decided")?,
        };
        let mut read = self.lines_read();
        if read.len() >= MOST_READ {
            read.clear();
        }
        read.insert(event_id.clone(), (now, counts));
        Ok(counts)
    }

    fn lines_read(&self) -> std::sync::MutexGuard<'_, HashMap<EventId, (Instant, EventCounts)>> {
        self.process
            .lines
            .read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Where a PENDING job stands: its ticket less one, less the event's decisions so far. A
    /// job admitted before tickets existed counts every admission as ahead of it.
    pub(crate) async fn line_of(&self, job: &Job) -> Result<Line, BackendError> {
        let counts = self.event_counts(&job.event_id).await?;
        let (ticket, prequeued) = self.job_ticket(job.job_id, false).await?;
        if let (None, Some(opens_at)) = (ticket, prequeued) {
            // In the pre-queue, not drawn yet: its place comes with the opening's release.
            return Ok(Line {
                ahead: 0,
                decided: counts.decided,
                opens_at: Some(from_ms(opens_at)?),
            });
        }
        let ticket = ticket.unwrap_or(counts.admitted);
        Ok(Line {
            ahead: ticket.saturating_sub(1).saturating_sub(counts.decided),
            decided: counts.decided,
            opens_at: None,
        })
    }

    /// A job's ticket, and the start its pre-queue waits for if it was pre-queued (read
    /// strongly `consistent` where a decision rests on it).
    pub(crate) async fn job_ticket(
        &self,
        job_id: JobId,
        consistent: bool,
    ) -> Result<(Option<u64>, Option<i64>), BackendError> {
        let output = self
            .db
            .get_item()
            .table_name(&self.names.jobs_table)
            .key("job_id", s(job_id.to_string()))
            .projection_expression("ticket, prequeued")
            .consistent_read(consistent)
            .send()
            .await
            .map_err(|e| classify("GetItem job ticket", e))?;
        let Some(item) = output.item() else {
            return Ok((None, None));
        };
        let ticket = opt_n(item, "ticket")?.and_then(|t| u64::try_from(t).ok());
        Ok((ticket, opt_n(item, "prequeued")?))
    }
}

/// Adds `store`'s counts every [`FLUSH_EVERY`] until `stop` is cancelled (then once more, so
/// what this process counted is added before it exits) or the store is dropped.
pub(crate) fn flusher(store: Weak<DynamoStore>) -> BackgroundTask {
    BackgroundTask::new("line counts", |stop| async move {
        loop {
            let stopping = tokio::select! {
                () = stop.cancelled() => true,
                () = tokio::time::sleep(FLUSH_EVERY) => false,
            };
            let Some(store) = store.upgrade() else {
                return;
            };
            store.flush_line_counts().await;
            if stopping {
                return;
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> EventId {
        EventId::parse("sale").unwrap()
    }

    #[test]
    fn tickets_follow_the_total_the_item_returned_and_this_processs_admissions() {
        let counts = LineCounts::default();
        assert_eq!(
            counts.admit(&event()),
            None,
            "the first admission learns the total"
        );
        counts.added(&event(), Tally::default(), Some(100));
        assert_eq!(counts.admit(&event()), Some(101));
        assert_eq!(counts.admit(&event()), Some(102));
        counts.decided(&event(), 3);
        let taken = counts.take();
        assert_eq!(taken.len(), 1);
        assert_eq!((taken[0].1.admitted, taken[0].1.decided), (2, 3));
        assert_eq!(
            counts.admit(&event()),
            Some(103),
            "taken admissions stay counted"
        );
        assert!(counts.take().iter().all(|(_, t)| t.decided == 0));
    }

    #[test]
    fn an_addition_that_failed_gives_its_counts_back_and_a_later_total_wins() {
        let counts = LineCounts::default();
        counts.added(&event(), Tally::default(), Some(10));
        counts.admit(&event());
        counts.decided(&event(), 4);
        let taken = counts.take();
        counts.added(&event(), taken[0].1, None);
        let again = counts.take();
        assert_eq!((again[0].1.admitted, again[0].1.decided), (1, 4));
        counts.added(&event(), again[0].1, Some(50));
        assert_eq!(
            counts.admit(&event()),
            Some(51),
            "other processes' admissions count"
        );
        assert!(counts.take().iter().all(|(_, t)| t.decided == 0));
    }
}
