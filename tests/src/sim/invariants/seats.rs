//! Invariant 1 (docs/simulation.md): no seat held or sold by two jobs, the seat table agrees
//! with the jobs, and a sold seat stays sold to its buyer for ever.

use std::collections::BTreeMap;

use jiff::Timestamp;
use seatclaim_core::domain::{Job, JobId, JobStatus, SeatId, SeatState};
use seatclaim_core::memory::State;

use super::Observer;

impl Observer {
    /// The seat table and the jobs agree, and a sold seat stays sold to its buyer.
    pub(super) fn check_seats(&mut self, state: &State, now: Timestamp) -> Result<(), String> {
        for (_, seats, _) in state.events() {
            let table: BTreeMap<&SeatId, SeatState> =
                seats.iter().map(|s| (&s.seat_id, s.state)).collect();
            for seat in seats {
                self.check_seat(state, &seat.seat_id, seat.state)?;
            }
            for job in state.jobs() {
                let wanted = match job.status {
                    JobStatus::Sold => SeatState::Sold { job_id: job.job_id },
                    JobStatus::Held => match job.hold_expires_at {
                        Some(until) if until > now => SeatState::Held {
                            job_id: job.job_id,
                            until,
                        },
                        _ => continue,
                    },
                    _ => continue,
                };
                if let Some(seat) = job.seat_ids.iter().find(|s| table.get(s) != Some(&wanted)) {
                    return Err(format!(
                        "job {} is {} but seat {seat} is {:?}",
                        job.job_id,
                        job.status.as_str(),
                        table.get(seat)
                    ));
                }
            }
        }
        Ok(())
    }

    fn check_seat(&mut self, state: &State, seat: &SeatId, at: SeatState) -> Result<(), String> {
        let (job_id, fits): (Option<JobId>, fn(&Job) -> bool) = match at {
            SeatState::Available => (None, |_| true),
            SeatState::Held { job_id, .. } => (Some(job_id), |j| j.status == JobStatus::Held),
            SeatState::Sold { job_id } => (Some(job_id), |j| j.status == JobStatus::Sold),
        };
        if let Some(buyer) = self.sold.get(seat)
            && at != (SeatState::Sold { job_id: *buyer })
        {
            return Err(format!(
                "seat {seat} was sold to job {buyer} but is now {at:?}"
            ));
        }
        let Some(job_id) = job_id else {
            return Ok(());
        };
        let job = state.job(job_id);
        let agrees = job.is_some_and(|job| {
            fits(job)
                && job.seat_ids.contains(seat)
                && match at {
                    SeatState::Held { until, .. } => job.hold_expires_at == Some(until),
                    _ => true,
                }
        });
        if !agrees {
            return Err(format!(
                "seat {seat} is {at:?} but its job is {:?}",
                job.map(|j| (j.status, &j.seat_ids, j.hold_expires_at))
            ));
        }
        if matches!(at, SeatState::Sold { .. }) {
            self.sold.insert(seat.clone(), job_id);
        }
        Ok(())
    }
}
