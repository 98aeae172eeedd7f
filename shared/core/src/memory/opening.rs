//! Sale openings in memory, as the embedded store makes them: an intent admitted before its
//! start (its channel's own, or its event's) waits in that start's pre-queue (one per buyer);
//! the first receive at or after the start draws the order and queues the intents in it, ready
//! from just before the start, under the same lock. The seed is derived from the event, the
//! channel and the pre-queue, not drawn from the operating system, so that a simulated run
//! repeats from its own seed.

use std::collections::BTreeMap;

use jiff::{SignedDuration, Timestamp};
use sha2::{Digest, Sha256};

use super::state::{Prequeued, State, StoredOpening};
use crate::domain::{
    ChannelName, Channels, Draw, EventId, Intent, Job, JobId, JobStatus, Line, Seed, Start,
};

/// The openings of a new event: its own start, and each channel's that has one of its own.
pub(super) fn openings_of(
    starts: Option<Timestamp>,
    channels: &Channels,
) -> BTreeMap<Option<ChannelName>, StoredOpening> {
    let own = starts.map(|at| (None, at));
    let of_channels = (channels.channels.iter())
        .filter_map(|channel| Some((Some(channel.name.clone()), channel.sale_starts_at?)));
    own.into_iter()
        .chain(of_channels)
        .map(|(channel, starts)| {
            let opening = StoredOpening {
                starts,
                draw: None,
                published: false,
            };
            (channel, opening)
        })
        .collect()
}

impl State {
    /// Whether an intent for `event_id` admitted at `now` waits for `start`: it is still to come
    /// and its draw is not made.
    pub(super) fn waits_for_opening(
        &self,
        event_id: &EventId,
        start: &Start,
        now: Timestamp,
    ) -> bool {
        let opening = self
            .events
            .get(event_id)
            .and_then(|e| e.openings.get(&start.channel));
        opening.is_some_and(|opening| opening.draw.is_none() && now < start.at)
    }

    /// Parks the intent in `start`'s pre-queue, or answers the buyer's job already there.
    pub(super) fn park(&mut self, intent: &Intent, start: Start, body: String) -> Option<JobId> {
        if let Some(queued) = self.prequeue.iter().find(|p| {
            p.event_id == intent.event_id
                && p.start.channel == start.channel
                && p.buyer_id == intent.buyer_id
        }) {
            return Some(queued.job_id);
        }
        self.prequeue.push(Prequeued {
            event_id: intent.event_id.clone(),
            start,
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
        Some((queued.start.at, queued.drawn?))
    }

    /// Draws every opening due at `now` and queues its pre-queue in the drawn order.
    pub(super) fn open_due(&mut self, now: Timestamp) {
        let due: Vec<(EventId, Start)> = (self.events.iter())
            .flat_map(|(id, event)| {
                (event.openings.iter())
                    .filter(|(_, opening)| opening.draw.is_none() && opening.starts <= now)
                    .map(|(channel, opening)| {
                        let start = Start {
                            channel: channel.clone(),
                            at: opening.starts,
                        };
                        (id.clone(), start)
                    })
            })
            .collect();
        for (event_id, start) in due {
            self.open(&event_id, start, now);
        }
    }

    fn open(&mut self, event_id: &EventId, start: Start, now: Timestamp) {
        let queued: Vec<JobId> = (self.prequeue.iter())
            .filter(|p| &p.event_id == event_id && p.start.channel == start.channel)
            .map(|p| p.job_id)
            .collect();
        // The event's own opening keeps the seed it always had: a seed's run repeats.
        let opening = match &start.channel {
            None => event_id.to_string(),
            Some(channel) => format!("{event_id}#{channel}"),
        };
        let seed = Sha256::new()
            .chain_update(format!("memory opening {opening} of {}", queued.len()))
            .finalize();
        let key = start.channel.clone();
        let ready = start.at - SignedDuration::from_millis(1);
        let draw = Draw::new(
            event_id.clone(),
            start,
            Seed::from_bytes(seed.into()),
            queued,
            now,
        );
        for (place, job_id) in draw.order.iter().enumerate() {
            if let Some(parked) = self.prequeue.iter_mut().find(|p| p.job_id == *job_id) {
                parked.drawn = Some(place as u64);
                let body = parked.body.clone();
                self.queue.push_at(body, Some(*job_id), ready);
            }
        }
        let opening = (self.events.get_mut(event_id)).and_then(|e| e.openings.get_mut(&key));
        if let Some(opening) = opening {
            opening.draw = Some(draw.opened);
        }
    }

    /// A pre-queued job's line; `None` for a job that was not pre-queued.
    pub(super) fn prequeue_line(&self, job: &Job, decided: u64) -> Option<Line> {
        let parked = self.prequeue.iter().find(|p| p.job_id == job.job_id)?;
        let Some(place) = parked.drawn else {
            return Some(Line {
                ahead: 0,
                decided,
                opens_at: Some(parked.start.at),
            });
        };
        let ahead = (self.prequeue.iter())
            .filter(|p| p.event_id == job.event_id && p.start.channel == parked.start.channel)
            .filter(|p| p.drawn.is_some_and(|d| d < place))
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

    /// How many intents wait in (or were drawn from) the pre-queue of `event_id`'s opening for
    /// `channel` (`None`: the event's own).
    pub(super) fn prequeued(&self, event_id: &EventId, channel: Option<&ChannelName>) -> u64 {
        (self.prequeue.iter())
            .filter(|p| &p.event_id == event_id && p.start.channel.as_ref() == channel)
            .count() as u64
    }
}
