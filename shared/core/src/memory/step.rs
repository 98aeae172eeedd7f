//! The core's claim and settle algorithm ([`crate::step`]) on the memory tables: every read and
//! conditional write it asks for, under the store's one lock, inside [`State::atomically`].

use jiff::Timestamp;

use super::codes;
use super::state::{State, StoredEvent};
use super::waitlist;
use crate::domain::{
    Best, BuyerId, CodeHash, CodeRecord, EventId, Intent, Job, JobId, SaleTerms, Seat, SeatId,
    SeatRequest, SeatState, Section, Settlement, Transition, best_first,
};
use crate::ports::BackendError;
use crate::step::StepStore;

/// The locked tables, as the core's step sees them.
pub(super) struct MemoryStep<'a> {
    pub(super) state: &'a mut State,
}

impl StepStore for MemoryStep<'_> {
    fn job(&mut self, job_id: JobId) -> Result<Option<Job>, BackendError> {
        Ok(self.state.job(job_id).cloned())
    }

    fn terms(&mut self, event_id: &EventId) -> Result<Option<SaleTerms>, BackendError> {
        Ok(self.state.events.get(event_id).map(StoredEvent::terms))
    }

    fn channel_events(&mut self) -> Result<Vec<EventId>, BackendError> {
        Ok((self.state.events.iter())
            .filter(|(_, event)| !event.channels.sections.is_empty())
            .map(|(event_id, _)| event_id.clone())
            .collect())
    }

    fn counted_seats(
        &mut self,
        event_id: &EventId,
        buyer: &BuyerId,
        now: Timestamp,
    ) -> Result<u32, BackendError> {
        Ok(waitlist::counted(self.state, event_id, buyer, now))
    }

    fn candidate_seats(
        &mut self,
        intent: &Intent,
        _best: Best,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        // The stored event keeps its seats in its own order of preference.
        let event = self.state.event(&intent.event_id)?;
        Ok(match &intent.request {
            SeatRequest::Seats(wanted) => wanted
                .iter()
                .filter_map(|id| event.position.get(id).map(|at| event.seats[*at].clone()))
                .collect(),
            SeatRequest::Section {
                section,
                quantity,
                together,
            } => {
                let most = if *together {
                    usize::MAX
                } else {
                    usize::from(*quantity)
                };
                claimable_in(event, section, now, most)
            }
        })
    }

    fn code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
    ) -> Result<Option<CodeRecord>, BackendError> {
        Ok(self
            .state
            .codes
            .get(&(event_id.clone(), hash.clone()))
            .cloned())
    }

    fn code_used(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        now: Timestamp,
    ) -> Result<u32, BackendError> {
        Ok(codes::used(self.state, event_id, hash, now))
    }

    fn bind_code(
        &mut self,
        event_id: &EventId,
        hash: &CodeHash,
        buyer: &BuyerId,
    ) -> Result<(), BackendError> {
        // Outside the undo journal: it follows a hold the step then only records.
        if let Some(code) = self.state.codes.get_mut(&(event_id.clone(), hash.clone())) {
            code.bound_to = Some(buyer.clone());
        }
        Ok(())
    }

    fn has_line(&mut self, event_id: &EventId, section: &Section) -> Result<bool, BackendError> {
        Ok(!waitlist::line(self.state, event_id, section).is_empty())
    }

    fn hold_seats(
        &mut self,
        job: &Job,
        seat_ids: &[SeatId],
        now: Timestamp,
        until: Timestamp,
    ) -> Result<bool, BackendError> {
        let event = self.state.event(&job.event_id)?;
        let positions: Option<Vec<usize>> = seat_ids
            .iter()
            .map(|id| {
                event
                    .position
                    .get(id)
                    .copied()
                    .filter(|at| event.seats[*at].state.is_claimable(now))
            })
            .collect();
        let Some(positions) = positions else {
            return Ok(false);
        };
        let held = SeatState::Held {
            job_id: job.job_id,
            until,
        };
        for at in positions {
            self.state.put_seat(&job.event_id, at, held);
        }
        Ok(true)
    }

    fn settle_seats(&mut self, job: &Job, settlement: Settlement) -> Result<usize, BackendError> {
        let job_id = job.job_id;
        let event = self.state.event(&job.event_id)?;
        let held_by_job: Vec<usize> = job
            .seat_ids
            .iter()
            .filter_map(|id| event.position.get(id).copied())
            .filter(|at| match event.seats[*at].state {
                SeatState::Held {
                    job_id: holder,
                    until,
                } => {
                    holder == job_id
                        && !matches!(settlement, Settlement::Extend { from, .. } if from != until)
                }
                _ => false,
            })
            .collect();
        let to = match settlement {
            Settlement::Sell => SeatState::Sold { job_id },
            Settlement::Release => SeatState::Available,
            Settlement::Extend { until, .. } => SeatState::Held { job_id, until },
        };
        for at in &held_by_job {
            self.state.put_seat(&job.event_id, *at, to);
        }
        Ok(held_by_job.len())
    }

    fn save_transition(&mut self, transition: &Transition) -> Result<(), BackendError> {
        self.state.save_transition(transition)
    }

    fn sections_of(
        &mut self,
        event_id: &EventId,
        seat_ids: &[SeatId],
    ) -> Result<Vec<Section>, BackendError> {
        let event = self.state.event(event_id)?;
        Ok(seat_ids
            .iter()
            .filter_map(|id| event.position.get(id))
            .map(|at| event.seats[*at].section.clone())
            .collect())
    }

    fn line_page(
        &mut self,
        event_id: &EventId,
        section: &Section,
        after: Option<JobId>,
        size: usize,
    ) -> Result<Vec<Job>, BackendError> {
        let line = waitlist::line_after(self.state, event_id, section, after);
        Ok(line.into_iter().take(size).collect())
    }

    fn claimable(
        &mut self,
        event_id: &EventId,
        section: &Section,
        now: Timestamp,
    ) -> Result<Vec<Seat>, BackendError> {
        Ok(claimable_in(
            self.state.event(event_id)?,
            section,
            now,
            usize::MAX,
        ))
    }
}

/// Claimable seats of `section` in the event's order of preference, free ones first and then
/// lapsed holds, at most `most` of each.
fn claimable_in(event: &StoredEvent, section: &Section, now: Timestamp, most: usize) -> Vec<Seat> {
    let seats = best_first(event.seats.iter().filter(|seat| &seat.section == section));
    let in_section = || seats.iter().copied();
    let free = in_section().filter(|seat| seat.state == SeatState::Available);
    let lapsed = in_section()
        .filter(|seat| matches!(seat.state, SeatState::Held { until, .. } if until <= now));
    free.take(most).chain(lapsed.take(most)).cloned().collect()
}
