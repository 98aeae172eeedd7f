//! Property tests: random sequences of claims, redeliveries, confirms, cancels, extensions,
//! expiries and the passing of time, executed against an in-memory inventory by the domain's own decisions, with the
//! invariants checked after every step.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};
use proptest::prelude::*;

use super::*;

const HOLD: SignedDuration = SignedDuration::from_secs(10);
const EXTENSION: HoldExtension = HoldExtension {
    step: SignedDuration::from_secs(4),
    max: 2,
};

#[derive(Debug, Clone)]
enum Op {
    Intent(SeatRequest),
    Deliver(usize),
    Confirm(usize),
    Cancel(usize),
    Extend(usize),
    Advance(i64),
    Sweep,
}

fn seat_ids() -> Vec<SeatId> {
    ["A-1", "A-2", "A-3", "B-1", "B-2", "B-3"]
        .iter()
        .map(|s| SeatId::parse(s).unwrap())
        .collect()
}

fn op() -> impl Strategy<Value = Op> {
    let exact = proptest::sample::subsequence(seat_ids(), 1..=3).prop_map(SeatRequest::Seats);
    let section = (prop_oneof![Just("A"), Just("B")], 1_u8..=3).prop_map(|(s, quantity)| {
        SeatRequest::Section {
            section: Section::parse(s).unwrap(),
            quantity,
            together: false,
        }
    });
    prop_oneof![
        2 => prop_oneof![exact, section].prop_map(Op::Intent),
        4 => (0_usize..12).prop_map(Op::Deliver),
        2 => (0_usize..12).prop_map(Op::Confirm),
        1 => (0_usize..12).prop_map(Op::Cancel),
        2 => (0_usize..12).prop_map(Op::Extend),
        1 => (1_i64..15).prop_map(Op::Advance),
        1 => Just(Op::Sweep),
    ]
}

/// An inventory that applies the domain's decisions the way an adapter must: conditionally, all or none.
struct Model {
    now: Timestamp,
    seats: Vec<Seat>,
    jobs: Vec<Job>,
    /// When each held job's claim was decided, where its hold's length is counted from.
    held_at: HashMap<JobId, Timestamp>,
}

impl Model {
    fn new() -> Self {
        let seats = seat_ids()
            .into_iter()
            .map(|seat_id| Seat {
                section: Section::parse(&seat_id.as_str()[..1]).unwrap(),
                seat_id,
                state: SeatState::Available,
                place: None,
            })
            .collect();
        Self {
            now: Timestamp::UNIX_EPOCH,
            seats,
            jobs: Vec::new(),
            held_at: HashMap::new(),
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Intent(request) => self.jobs.push(Job {
                access: None,
                job_id: JobId::new(),
                event_id: EventId::parse("e").unwrap(),
                buyer_id: BuyerId::parse("b").unwrap(),
                request: request.clone(),
                status: JobStatus::Pending,
                seat_ids: vec![],
                hold_expires_at: None,
                reason: None,
                reason_code: None,
                accepted_at: self.now,
                first_error: None,
                last_error: None,
                amount_due: None,
                payment_ref: None,
                hold_extensions: 0,
            }),
            Op::Deliver(i) => {
                if let Some(index) = self.pick(*i) {
                    self.claim(index);
                }
            }
            Op::Confirm(i) => self.settle(*i, JobAction::Confirm),
            Op::Cancel(i) => self.settle(*i, JobAction::Cancel),
            Op::Extend(i) => self.settle(*i, JobAction::Extend),
            Op::Advance(secs) => self.now += SignedDuration::from_secs(*secs),
            Op::Sweep => {
                for index in 0..self.jobs.len() {
                    self.settle(index, JobAction::Expire);
                }
            }
        }
    }

    fn pick(&self, i: usize) -> Option<usize> {
        (!self.jobs.is_empty()).then(|| i % self.jobs.len())
    }

    fn claim(&mut self, index: usize) {
        let job = &mut self.jobs[index];
        if job.status != JobStatus::Pending {
            return;
        }
        let decided = match decide_claim(
            &job.request,
            &self.seats,
            self.now,
            HOLD,
            &Prices::default(),
            Best::FrontCenter,
        ) {
            ClaimDecision::Hold {
                seat_ids,
                until,
                amount_due,
                ..
            } => {
                assert!(
                    seat_ids.iter().all(|id| {
                        self.seats
                            .iter()
                            .any(|s| &s.seat_id == id && s.state.is_claimable(self.now))
                    }),
                    "the decision named a seat the condition would refuse"
                );
                for seat in self
                    .seats
                    .iter_mut()
                    .filter(|s| seat_ids.contains(&s.seat_id))
                {
                    seat.state = SeatState::Held {
                        job_id: job.job_id,
                        until,
                    };
                }
                self.held_at.insert(job.job_id, self.now);
                job.hold(seat_ids, until, amount_due, self.now)
            }
            ClaimDecision::Reject { reason } => job.reject(&reason, self.now),
            ClaimDecision::Waitlist => panic!("decide_claim keeps no line"),
        };
        *job = decided.expect("a pending job is decided").job;
    }

    fn settle(&mut self, i: usize, action: JobAction) {
        let Some(index) = self.pick(i) else { return };
        let job = &mut self.jobs[index];
        let settled = match action {
            JobAction::Extend => job.extend(EXTENSION, self.now).map(Some),
            action => job.settle(action, &Tender::Waived, self.now),
        };
        let Ok(Some(Settling {
            transition,
            seats: settlement,
        })) = settled
        else {
            return;
        };
        for seat in &mut self.seats {
            if matches!(seat.state, SeatState::Held { job_id, .. } if job_id == job.job_id) {
                seat.state = match settlement {
                    Settlement::Sell => SeatState::Sold { job_id: job.job_id },
                    Settlement::Release => SeatState::Available,
                    Settlement::Extend { from, until } => {
                        assert!(from > self.now, "a lapsed hold was extended");
                        SeatState::Held {
                            job_id: job.job_id,
                            until,
                        }
                    }
                };
            }
        }
        *job = transition.job;
    }

    fn check_invariants(&self) {
        let by_id: HashMap<JobId, &Job> = self.jobs.iter().map(|j| (j.job_id, j)).collect();
        for seat in &self.seats {
            match seat.state {
                SeatState::Held { job_id, .. } => {
                    let job = by_id[&job_id];
                    assert_eq!(
                        job.status,
                        JobStatus::Held,
                        "{} held for a {:?} job",
                        seat.seat_id,
                        job.status
                    );
                    assert!(job.seat_ids.contains(&seat.seat_id));
                }
                SeatState::Sold { job_id } => assert_eq!(by_id[&job_id].status, JobStatus::Sold),
                SeatState::Available => {}
            }
        }
        let sold_seats = self
            .seats
            .iter()
            .filter(|s| matches!(s.state, SeatState::Sold { .. }))
            .count();
        let sold_by_jobs: usize = self
            .jobs
            .iter()
            .filter(|j| j.status == JobStatus::Sold)
            .map(|j| j.seat_ids.len())
            .sum();
        assert_eq!(
            sold_seats, sold_by_jobs,
            "every sold seat belongs to exactly one sold job"
        );
        let longest = HOLD + EXTENSION.step * i32::try_from(EXTENSION.max).unwrap();
        for job in self.jobs.iter().filter(|j| j.status == JobStatus::Held) {
            let until = job.hold_expires_at.unwrap();
            assert!(
                until.duration_since(self.held_at[&job.job_id]) <= longest,
                "a hold outlasts its hold and every extension"
            );
        }
        for job in self
            .jobs
            .iter()
            .filter(|j| j.status == JobStatus::Held && j.hold_expires_at > Some(self.now))
        {
            for id in &job.seat_ids {
                let seat = self.seats.iter().find(|s| &s.seat_id == id).unwrap();
                assert!(
                    matches!(seat.state, SeatState::Held { job_id, .. } if job_id == job.job_id),
                    "a live hold lost seat {id}"
                );
            }
        }
    }
}

proptest! {
    #[test]
    fn no_sequence_of_operations_breaks_the_invariants(ops in proptest::collection::vec(op(), 1..80)) {
        let mut model = Model::new();
        for op in &ops {
            model.apply(op);
            model.check_invariants();
        }
    }

    #[test]
    fn redelivering_a_decided_intent_changes_nothing(ops in proptest::collection::vec(op(), 1..60), again in 0_usize..12) {
        let mut model = Model::new();
        for op in &ops {
            model.apply(op);
        }
        let Some(index) = model.pick(again) else { return Ok(()) };
        model.claim(index);
        let seats = model.seats.clone();
        let jobs = model.jobs.clone();
        model.claim(index);
        prop_assert_eq!(&model.seats, &seats);
        prop_assert_eq!(&model.jobs, &jobs);
    }
}
