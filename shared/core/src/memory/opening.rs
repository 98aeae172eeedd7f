//! Sale openings in memory, as the embedded store makes them: an intent admitted before its
//! event's start waits in the pre-queue (one per buyer); the first receive at or after the start
//! draws the order and queues the intents in it, ready from just before the start, under the
//! same lock. The seed is derived from the event and its pre-queue, not drawn from the operating
//! system, so that a simulated run repeats from its own seed.

use jiff::{SignedDuration, Timestamp};
use sha2::{Digest, Sha256};

use super::state::{Prequeued, State};
use crate::domain::{Draw, EventId, Intent, Job, JobId, JobStatus, Line, Seed};

impl State {
    /// Whether an intent for `event_id` admitted at `now` waits for the event's opening.
    pub(super) fn waits_for_opening(&self, event_id: &EventId, now: Timestamp) -> bool {
        self.events.get(event_id).is_some_and(|event| {
            event.opening.is_none() && event.opens_at.is_some_and(|starts| now < starts)
        })
    }

    /// Parks the intent in its event's pre-queue, or answers the buyer's job already there.
    pub(super) fn park(&mut self, intent: &Intent, body: String) -> Option<JobId> {
        if let Some(queued) = self
            .prequeue
            .iter()
            .find(|p| p.event_id == intent.event_id && p.buyer_id == intent.buyer_id)
        {
            return Some(queued.job_id);
        }
        self.prequeue.push(Prequeued {
            event_id: intent.event_id.clone(),
            buyer_id: intent.buyer_id.clone(),
            job_id: intent.job_id,
            body,
            drawn: None,
        });
        None
    }

    /// Whether `job_id` waits in a pre-queue not drawn yet.
    #[must_use]
    pub fn is_prequeued(&self, job_id: JobId) -> bool {
        self.prequeue
            .iter()
            .any(|p| p.job_id == job_id && p.drawn.is_none())
    }

    /// Where `job_id` was drawn at its sale's opening (the start, and its place in the draw),
    /// if it came from a pre-queue that has been drawn.
    pub(super) fn drawn_place(&self, job_id: JobId) -> Option<(Timestamp, u64)> {
        let queued = self.prequeue.iter().find(|p| p.job_id == job_id)?;
        let starts = self.events.get(&queued.event_id)?.opens_at?;
        Some((starts, queued.drawn?))
    }

    /// Draws every opening due at `now` and queues its pre-queue in the drawn order.
    pub(super) fn open_due(&mut self, now: Timestamp) {
        let due: Vec<(EventId, Timestamp)> = self
            .events
            .iter()
            .filter(|(_, event)| event.opening.is_none())
            .filter_map(|(id, event)| Some((id.clone(), event.opens_at?)))
            .filter(|(_, starts)| *starts <= now)
            .collect();
        for (event_id, starts) in due {
            self.open(&event_id, starts, now);
        }
    }

    fn open(&mut self, event_id: &EventId, starts: Timestamp, now: Timestamp) {
        let queued: Vec<JobId> = self
            .prequeue
            .iter()
            .filter(|p| &p.event_id == event_id)
            .map(|p| p.job_id)
            .collect();
        let seed = Sha256::new()
            .chain_update(format!("memory opening {event_id} of {}", queued.len()))
            .finalize();
        let draw = Draw::new(
            event_id.clone(),
            starts,
            Seed::from_bytes(seed.into()),
            queued,
            now,
        );
        let ready = starts - SignedDuration::from_millis(1);
        for (place, job_id) in draw.order.iter().enumerate() {
            if let Some(parked) = self.prequeue.iter_mut().find(|p| p.job_id == *job_id) {
                parked.drawn = Some(place as u64);
                let body = parked.body.clone();
                self.queue.push_at(body, Some(*job_id), ready);
            }
        }
        if let Some(event) = self.events.get_mut(event_id) {
            event.opening = Some(draw.opened);
        }
    }

    /// A pre-queued job's line; `None` for a job that was not pre-queued.
    pub(super) fn prequeue_line(&self, job: &Job, decided: u64) -> Option<Line> {
        let parked = self.prequeue.iter().find(|p| p.job_id == job.job_id)?;
        let Some(place) = parked.drawn else {
            let opens_at = self.events.get(&job.event_id).and_then(|e| e.opens_at);
            return Some(Line {
                ahead: 0,
                decided,
                opens_at,
            });
        };
        let ahead = self
            .prequeue
            .iter()
            .filter(|p| p.event_id == job.event_id && p.drawn.is_some_and(|d| d < place))
            .filter(|p| {
                self.job(p.job_id)
                    .is_some_and(|j| j.status == JobStatus::Pending)
            })
            .count();
        Some(Line {
            ahead: ahead as u64,
            decided,
            opens_at: None,
        })
    }

    /// How many intents wait in (or were drawn from) the event's pre-queue.
    pub(super) fn prequeued(&self, event_id: &EventId) -> u64 {
        self.prequeue
            .iter()
            .filter(|p| &p.event_id == event_id)
            .count() as u64
    }
}
