//! The line's invariants (docs/simulation.md, invariants 9 and 10): nobody passes a line, and no
//! seat sits free while a waiter it can serve waits. A section's line is served first fit in
//! line order (admission order, and a sale's pre-queue in the order its draw gave, ahead of those
//! admitted after the opening: `domain::line_place`): released seats go to the earliest waiter
//! they fit, one they do not fit keeps its place. So a job served from the line leaves no waiter
//! ahead of it that its seats would have served, the jobs one release serves come in line order,
//! a claim takes no free seat that a waiter fits, and after every step the section's free seats
//! fit none of its waiters. The draw's order is read from the queue, which the opening fills in
//! it (`Observer::note_draws`).

use std::collections::{BTreeMap, BTreeSet};

use jiff::Timestamp;
use seatclaim_core::domain::{
    BuyerId, ClaimDecision, Job, JobId, JobStatus, ReservationEvent, SaleTerms, Seat, SeatRequest,
    SeatState, Section, hand_out, line_place,
};
use seatclaim_core::memory::State;

/// What the line's checks read at one recorded event: the tables, the terms, every job's
/// events before this one (in commit order) and the jobs that waited in a pre-queue.
pub(super) struct Lines<'a> {
    pub(super) state: &'a State,
    pub(super) terms: &'a SaleTerms,
    pub(super) recorded: &'a BTreeMap<JobId, Vec<ReservationEvent>>,
    pub(super) prequeued: &'a BTreeSet<JobId>,
    /// Each drawn pre-queued job's place in its draw.
    pub(super) drawn: &'a BTreeMap<JobId, u64>,
    pub(super) now: Timestamp,
    /// Whether the run decides on the AWS shape, where a claim or a serving reads the line and
    /// commits a flight later: a waiter that joins in between (ahead, by its admission) is not
    /// seen, so nobody passing a line is the interactive step's invariant alone there.
    pub(super) optimistic: bool,
}

impl Lines<'_> {
    /// Nobody passes a line at `event`, a hold of `job`: served from its line, it leaves no
    /// earlier waiter its seats fit, and comes after every job the same step served from that
    /// line (`served`: the last one per section); held by its claim, an exact request found no
    /// line in its seats' sections, a section request took no seat a waiter fits (it takes only
    /// seats given back, never a lapsed hold: finding 3).
    pub(super) fn check_hold(
        &self,
        job: &Job,
        event: &ReservationEvent,
        served: &mut BTreeMap<Section, (String, JobId)>,
    ) -> Result<(), String> {
        if event.status != JobStatus::Held || event.hold_extensions.is_some() {
            return Ok(());
        }
        let from_line = self
            .recorded
            .get(&job.job_id)
            .and_then(|history| history.last())
            .is_some_and(|last| last.status == JobStatus::Waitlisted);
        let seats = self.seats_as_free(job, event);
        match (&job.request, from_line) {
            (SeatRequest::Seats(_), _) => {
                let sections: BTreeSet<&Section> = seats.iter().map(|s| &s.section).collect();
                match self
                    .waiting()
                    .find(|w| w.request.section().is_some_and(|s| sections.contains(s)))
                {
                    Some(waiter) => Err(format!(
                        "job {} came to hold seats of a section while job {} waited in its line",
                        job.job_id, waiter.job_id
                    )),
                    None => Ok(()),
                }
            }
            (SeatRequest::Section { section, .. }, true) => {
                let place = self.place(job);
                if let Some((last_place, last)) =
                    served.insert(section.clone(), (place.clone(), job.job_id))
                    && self.ordered(last, job.job_id)
                    && last_place > place
                {
                    return Err(format!(
                        "job {} was served from section {section}'s line after job {last}, \
                         behind it in line, in the same step",
                        job.job_id
                    ));
                }
                match self.fitting(job, section, &seats, true) {
                    Some(waiter) => Err(format!(
                        "job {} was served from section {section}'s line while job {}, ahead \
                         of it in line and still waiting, fits its seats {:?} (places {} and {})",
                        job.job_id,
                        waiter.job_id,
                        event.seat_ids,
                        self.place(job),
                        self.place(waiter)
                    )),
                    None => Ok(()),
                }
            }
            // A line is the public's: a channel's claim takes its channel's seats past it.
            (SeatRequest::Section { .. }, false) if job.access.is_some() => Ok(()),
            (SeatRequest::Section { section, .. }, false) => {
                match self.fitting(job, section, &seats, false) {
                    Some(waiter) => Err(format!(
                        "job {}'s claim took seats {:?} of section {section} that job {}, \
                         waiting in its line, fits",
                        job.job_id, event.seat_ids, waiter.job_id
                    )),
                    None => Ok(()),
                }
            }
        }
    }

    /// Whether two jobs' places are known: neither waits in a pre-queue whose draw was missed.
    fn ordered(&self, a: JobId, b: JobId) -> bool {
        let known = |id: &JobId| !self.prequeued.contains(id) || self.drawn.contains_key(id);
        known(&a) && known(&b)
    }

    /// `job`'s place in its line, as the domain orders it.
    fn place(&self, job: &Job) -> String {
        place(self.state, self.drawn, job)
    }

    /// The jobs waiting in a line as the events recorded so far say.
    fn waiting(&self) -> impl Iterator<Item = &Job> {
        self.recorded
            .iter()
            .filter(|(_, history)| {
                !self.optimistic
                    && history
                        .last()
                        .is_some_and(|e| e.status == JobStatus::Waitlisted)
            })
            .filter_map(|(id, _)| self.state.job(*id))
    }

    /// A waiter of `section` other than `job` (ahead of it in line, if `earlier`) that `seats`
    /// would serve, its buyer's limit allowing.
    fn fitting(&self, job: &Job, section: &Section, seats: &[Seat], earlier: bool) -> Option<&Job> {
        let counted = counts(self.state, self.now);
        self.waiting().find(|waiter| {
            waiter.job_id != job.job_id
                && waiter.request.section() == Some(section)
                && (!earlier
                    || (self.ordered(waiter.job_id, job.job_id)
                        && self.place(waiter) < self.place(job)))
                && self.terms.limit.is_none_or(|limit| {
                    let has = counted.get(&waiter.buyer_id).copied().unwrap_or(0);
                    limit.admits(has, waiter.request.quantity())
                })
                && matches!(
                    self.terms.decide_freely(&waiter.request, seats, self.now),
                    ClaimDecision::Hold { .. }
                )
        })
    }

    /// The seats `event` holds, as they were before it: free.
    fn seats_as_free(&self, job: &Job, event: &ReservationEvent) -> Vec<Seat> {
        self.state
            .events()
            .filter(|(id, _, _)| **id == job.event_id)
            .flat_map(|(_, seats, _)| seats)
            .filter(|seat| event.seat_ids.contains(&seat.seat_id))
            .map(|seat| Seat {
                state: SeatState::Available,
                ..seat.clone()
            })
            .collect()
    }
}

/// `job`'s place in its line (`domain::line_place`), `drawn` giving pre-queued jobs' draws.
pub(super) fn place(state: &State, drawn: &BTreeMap<JobId, u64>, job: &Job) -> String {
    let draw = drawn
        .get(&job.job_id)
        .and_then(|at| Some((state.opens_at(&job.event_id)?, *at)));
    line_place(job, draw)
}

/// No seat sits free past the step that freed it while a waiter it can serve waits: each
/// section's AVAILABLE seats, handed to its line first fit with the buyers' limits counted as
/// the store's hand-out does, serve nobody.
///
/// A channel's section is served from its release on (its seats are the channel's before): the
/// release frees no seat in a step of its own, and the sweeper's first pass begun after it, and
/// after its line's last waiter was first seen (`swept_at`, `waiting_since`: a claim decided at
/// an instant before the release may join the line after a pass), serves its line; a claim of
/// the section in between serves the line first itself.
pub(super) fn check_served(
    state: &State,
    terms: &SaleTerms,
    (drawn, swept_at, waiting_since): (&BTreeMap<JobId, u64>, Option<Timestamp>, &Since),
    now: Timestamp,
) -> Result<(), String> {
    let unserved = |section: &Section, line: &[Job]| {
        let released = terms.channels.released_at(section);
        let joined = line
            .iter()
            .filter_map(|job| waiting_since.get(&job.job_id))
            .max();
        let swept_after = |at: Timestamp| swept_at.is_some_and(|swept| swept >= at);
        !terms.serves_line(section, now)
            || released.is_some_and(|at| {
                !swept_after(at) || joined.is_some_and(|j| !swept_after(*j + ONE_MS))
            })
    };
    let counted = counts(state, now);
    for (event_id, seats, _) in state.events() {
        let mut lines: BTreeMap<&Section, Vec<Job>> = BTreeMap::new();
        for job in state.jobs() {
            if job.status == JobStatus::Waitlisted
                && &job.event_id == event_id
                && let Some(section) = job.request.section()
            {
                lines.entry(section).or_default().push(job.clone());
            }
        }
        for (section, mut line) in lines.into_iter().filter(|(s, line)| !unserved(s, line)) {
            line.sort_by_cached_key(|job| place(state, drawn, job));
            let free: Vec<Seat> = seats
                .iter()
                .filter(|s| &s.section == section && s.state == SeatState::Available)
                .cloned()
                .collect();
            let steps = hand_out(&line, &free, terms, now, |buyer| {
                counted.get(buyer).copied().unwrap_or(0)
            });
            if let Some(step) = steps.iter().find(|step| !step.seats.is_empty()) {
                return Err(format!(
                    "seats {:?} of section {section} are AVAILABLE while job {}, waiting in \
                     its line, fits them",
                    step.seats, step.transition.job.job_id
                ));
            }
        }
    }
    Ok(())
}

/// When the observer first saw each job waiting in a line.
pub(super) type Since = BTreeMap<JobId, Timestamp>;

/// A millisecond: a pass begun at the instant a waiter was seen may have run before it joined.
const ONE_MS: jiff::SignedDuration = jiff::SignedDuration::from_millis(1);

/// The seats each buyer counts against the limit at `now`: SOLD and live HELD (one event).
fn counts(state: &State, now: Timestamp) -> BTreeMap<BuyerId, u32> {
    let mut counted: BTreeMap<BuyerId, u32> = BTreeMap::new();
    for job in state.jobs() {
        let counts = match job.status {
            JobStatus::Sold => true,
            JobStatus::Held => job.hold_expires_at.is_some_and(|until| until > now),
            _ => false,
        };
        if counts {
            *counted.entry(job.buyer_id.clone()).or_default() +=
                u32::try_from(job.seat_ids.len()).unwrap_or(u32::MAX);
        }
    }
    counted
}
