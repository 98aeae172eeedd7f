//! The memory store's tables: plain maps behind the store's one lock, so every port call is one
//! atomic step, as one SQLite transaction is. Writes that can fail half-way keep an undo journal
//! ([`State::atomically`]), SQLite's rollback; the simulator reads the tables through the public
//! accessors to check the invariants after every step.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};

use super::queue::Queue;
use crate::domain::{
    Best, BuyerId, ChannelName, Channels, CodeHash, CodeRecord, EventId, HoldExtension, Job, JobId,
    JobStatus, Prices, ReservationEvent, SaleOpened, SaleTerms, Seat, SeatId, SeatLimit, SeatState,
    Start, Transition, Waitlist,
};
use crate::ports::BackendError;

/// An event as stored: its terms of sale and its seats in the organiser's order.
#[derive(Debug, Clone)]
pub(super) struct StoredEvent {
    pub(super) name: String,
    pub(super) hold: SignedDuration,
    pub(super) limit: Option<SeatLimit>,
    pub(super) prices: Prices,
    pub(super) extension: HoldExtension,
    pub(super) waitlist: Waitlist,
    pub(super) seats: Vec<Seat>,
    /// Where each seat is in `seats`.
    pub(super) position: BTreeMap<SeatId, usize>,
    /// Creation order, for the event list.
    pub(super) created: u64,
    /// When its sale starts, if announced.
    pub(super) opens_at: Option<Timestamp>,
    /// Which seats it prefers.
    pub(super) best: Best,
    /// Its openings: the event's own (`None`) and each channel's with a start of its own.
    pub(super) openings: BTreeMap<Option<ChannelName>, StoredOpening>,
    /// Its sales channels.
    pub(super) channels: Channels,
}

impl StoredEvent {
    /// The terms a claim decides under.
    pub(super) fn terms(&self) -> SaleTerms {
        SaleTerms {
            hold: self.hold,
            limit: self.limit,
            prices: std::sync::Arc::new(self.prices.clone()),
            extension: self.extension,
            waitlist: self.waitlist,
            opens_at: self.opens_at,
            best: self.best,
            channels: std::sync::Arc::new(self.channels.clone()),
        }
    }
}

/// One recorded reservation event: the outbox and the jobs' history in one list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// Its place in the outbox, from 1.
    pub seq: i64,
    /// The event.
    pub event: ReservationEvent,
    /// When the relay (or the worker, for an event recorded as published) published it.
    pub published_at: Option<Timestamp>,
}

/// An idempotency record: what the key was first used for, and the job it made.
#[derive(Debug, Clone)]
pub(super) struct KeyRecord {
    pub(super) fingerprint: String,
    pub(super) job_id: JobId,
}

/// What a failed write must put back.
#[derive(Debug, Default)]
struct Undo {
    jobs: Vec<(JobId, Option<Job>)>,
    seats: Vec<(EventId, usize, SeatState)>,
    outbox: usize,
}

/// One opening of an event (`opening.rs`): its start, and its draw once made.
#[derive(Debug, Clone)]
pub(super) struct StoredOpening {
    pub(super) starts: Timestamp,
    pub(super) draw: Option<SaleOpened>,
    /// Whether the relay published the draw.
    pub(super) published: bool,
}

/// An intent waiting for its opening (`opening.rs`).
#[derive(Debug, Clone)]
pub(super) struct Prequeued {
    pub(super) event_id: EventId,
    /// The start it waits for.
    pub(super) start: Start,
    pub(super) buyer_id: BuyerId,
    pub(super) job_id: JobId,
    pub(super) body: String,
    /// Its place in the drawn order, once drawn.
    pub(super) drawn: Option<u64>,
}

/// Every table of the store.
#[derive(Debug, Default)]
pub struct State {
    pub(super) events: BTreeMap<EventId, StoredEvent>,
    pub(super) jobs: BTreeMap<JobId, Job>,
    pub(super) keys: BTreeMap<(BuyerId, String), KeyRecord>,
    pub(super) outbox: Vec<Recorded>,
    pub(super) queue: Queue,
    pub(super) prequeue: Vec<Prequeued>,
    /// Access codes, by event and hash.
    pub(super) codes: BTreeMap<(EventId, CodeHash), CodeRecord>,
    undo: Option<Undo>,
}

impl State {
    /// Every job, in id order.
    pub fn jobs(&self) -> impl Iterator<Item = &Job> {
        self.jobs.values()
    }

    /// One job as stored (a lapsed hold still reads HELD here: this is the table, not a view).
    #[must_use]
    pub fn job(&self, job_id: JobId) -> Option<&Job> {
        self.jobs.get(&job_id)
    }

    /// Up to `limit` HELD jobs whose hold lapsed by `now`, the earliest deadline first: the
    /// sweeper's list.
    #[must_use]
    pub fn lapsed_holds(&self, now: Timestamp, limit: usize) -> Vec<JobId> {
        let mut lapsed: Vec<(Timestamp, JobId)> = (self.jobs())
            .filter(|job| job.status == JobStatus::Held)
            .filter_map(|job| job.hold_expires_at.map(|until| (until, job.job_id)))
            .filter(|(until, _)| *until <= now)
            .collect();
        lapsed.sort_unstable();
        lapsed.into_iter().take(limit).map(|(_, id)| id).collect()
    }

    /// Every event's id, seats (in the organiser's order) and per-buyer limit.
    pub fn events(&self) -> impl Iterator<Item = (&EventId, &[Seat], Option<SeatLimit>)> {
        self.events
            .iter()
            .map(|(id, event)| (id, event.seats.as_slice(), event.limit))
    }

    /// When the event's sale starts, if it announced a start.
    #[must_use]
    pub fn opens_at(&self, event_id: &EventId) -> Option<Timestamp> {
        self.events.get(event_id).and_then(|event| event.opens_at)
    }

    /// Every recorded reservation event, oldest first.
    #[must_use]
    pub fn outbox(&self) -> &[Recorded] {
        &self.outbox
    }

    /// How many idempotency records there are: one per job admission created.
    #[must_use]
    pub fn key_records(&self) -> usize {
        self.keys.len()
    }

    /// The queue's messages, both queues.
    #[must_use]
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    /// Runs `work` as one transaction: if it fails, every job, seat and outbox write it made
    /// through [`State::put_job`], [`State::put_seat`] and [`State::save_transition`] is undone.
    pub(super) fn atomically<T>(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<T, BackendError>,
    ) -> Result<T, BackendError> {
        self.undo = Some(Undo {
            outbox: self.outbox.len(),
            ..Undo::default()
        });
        let result = work(self);
        if let Some(undo) = self.undo.take()
            && result.is_err()
        {
            self.roll_back(undo);
        }
        result
    }

    fn roll_back(&mut self, undo: Undo) {
        self.outbox.truncate(undo.outbox);
        for (event_id, position, state) in undo.seats.into_iter().rev() {
            if let Some(seat) = self
                .events
                .get_mut(&event_id)
                .and_then(|event| event.seats.get_mut(position))
            {
                seat.state = state;
            }
        }
        for (job_id, job) in undo.jobs.into_iter().rev() {
            match job {
                Some(job) => self.jobs.insert(job_id, job),
                None => self.jobs.remove(&job_id),
            };
        }
    }

    /// Stores `job`, remembering what it replaced for a rollback.
    pub(super) fn put_job(&mut self, job: Job) {
        let before = self.jobs.insert(job.job_id, job.clone());
        if let Some(undo) = &mut self.undo {
            undo.jobs.push((job.job_id, before));
        }
    }

    /// Sets the seat at `position` of `event_id` to `state`, remembering the old state.
    pub(super) fn put_seat(&mut self, event_id: &EventId, position: usize, state: SeatState) {
        let Some(seat) = self
            .events
            .get_mut(event_id)
            .and_then(|event| event.seats.get_mut(position))
        else {
            return;
        };
        let before = std::mem::replace(&mut seat.state, state);
        if let Some(undo) = &mut self.undo {
            undo.seats.push((event_id.clone(), position, before));
        }
    }

    /// Appends an event to the outbox, published already or not.
    pub(super) fn append_event(
        &mut self,
        event: ReservationEvent,
        published_at: Option<Timestamp>,
    ) {
        let seq = i64::try_from(self.outbox.len()).unwrap_or(i64::MAX) + 1;
        self.outbox.push(Recorded {
            seq,
            event,
            published_at,
        });
    }

    /// Persists a transition on its condition (the stored job still has the status it moved
    /// from) together with its event: the memory twin of the SQLite adapter's conditional
    /// `UPDATE` and outbox `INSERT` in one transaction.
    pub(super) fn save_transition(&mut self, transition: &Transition) -> Result<(), BackendError> {
        let job_id = transition.job.job_id;
        match self.jobs.get(&job_id) {
            Some(stored) if stored.status == transition.from => {}
            _ => {
                // The caller read the job under the same lock, so only a bug gets here.
                return Err(BackendError::permanent(format!(
                    "job {job_id} was no longer {} when its transition was written",
                    transition.from.as_str()
                )));
            }
        }
        self.put_job(transition.job.clone());
        self.append_event(transition.event.clone(), None);
        Ok(())
    }

    /// The event a claim or an admission names, or the permanent error for an unknown one.
    pub(super) fn event(&self, event_id: &EventId) -> Result<&StoredEvent, BackendError> {
        self.events
            .get(event_id)
            .ok_or_else(|| BackendError::permanent(format!("unknown event {event_id}")))
    }
}
