use super::*;
use crate::domain::{BuyerId, EventId, SeatRequest, Section};

const LIMITS: AuditLimits = AuditLimits {
    max_pending: SignedDuration::from_secs(60),
    max_outbox_lag: SignedDuration::from_secs(60),
    opens_at: None,
};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap()
}

fn seat(id: &str, state: SeatState) -> Seat {
    Seat {
        seat_id: SeatId::parse(id).unwrap(),
        section: Section::parse("A").unwrap(),
        state,
        place: None,
    }
}

fn job(status: JobStatus, seats: &[&str], until: i64) -> Job {
    Job {
        access: None,
        job_id: JobId::new(),
        event_id: EventId::parse("e").unwrap(),
        buyer_id: BuyerId::parse("b").unwrap(),
        request: SeatRequest::in_section("A", 1).unwrap(),
        status,
        seat_ids: seats.iter().map(|s| SeatId::parse(s).unwrap()).collect(),
        hold_expires_at: Some(at(until)),
        reason: None,
        reason_code: None,
        accepted_at: at(0),
        first_error: None,
        last_error: None,
        amount_due: None,
        payment_ref: None,
        hold_extensions: 0,
    }
}

#[test]
fn a_consistent_sale_passes() {
    let held = job(JobStatus::Held, &["a"], 100);
    let sold = job(JobStatus::Sold, &["b"], 100);
    let seats = [
        seat(
            "a",
            SeatState::Held {
                job_id: held.job_id,
                until: at(100),
            },
        ),
        seat(
            "b",
            SeatState::Sold {
                job_id: sold.job_id,
            },
        ),
        seat("c", SeatState::Available),
    ];
    let rejected = job(JobStatus::Rejected, &[], 0);
    assert_eq!(
        audit(&seats, &[held, sold, rejected], None, at(50), LIMITS),
        []
    );
}

#[test]
fn two_live_jobs_on_one_seat_are_reported() {
    let first = job(JobStatus::Held, &["a"], 100);
    let second = job(JobStatus::Sold, &["a"], 100);
    let seats = [seat(
        "a",
        SeatState::Sold {
            job_id: second.job_id,
        },
    )];
    let found = audit(
        &seats,
        &[first.clone(), second.clone()],
        None,
        at(50),
        LIMITS,
    );
    assert!(
        found.contains(&Violation::SeatClaimedTwice {
            seat: SeatId::parse("a").unwrap(),
            jobs: (first.job_id, second.job_id)
        }),
        "{found:?}"
    );
}

#[test]
fn a_seat_held_for_a_rejected_job_and_a_sold_job_without_its_seat_are_reported() {
    let rejected = job(JobStatus::Rejected, &[], 0);
    let sold = job(JobStatus::Sold, &["b"], 100);
    let seats = [
        seat(
            "a",
            SeatState::Held {
                job_id: rejected.job_id,
                until: at(100),
            },
        ),
        seat("b", SeatState::Available),
    ];
    let found = audit(&seats, &[rejected, sold], None, at(50), LIMITS);
    assert_eq!(found.len(), 2, "{found:?}");
}

#[test]
fn a_lapsed_hold_taken_over_by_a_new_claim_is_fine() {
    let lapsed = job(JobStatus::Held, &["a"], 10);
    let taker = job(JobStatus::Held, &["a"], 100);
    let seats = [seat(
        "a",
        SeatState::Held {
            job_id: taker.job_id,
            until: at(100),
        },
    )];
    assert_eq!(audit(&seats, &[lapsed, taker], None, at(50), LIMITS), []);
}

#[test]
fn long_pending_jobs_and_a_stuck_outbox_are_reported() {
    let pending = job(JobStatus::Pending, &[], 0);
    let found = audit(&[], &[pending], Some(at(0)), at(61), LIMITS);
    assert_eq!(found.len(), 2, "{found:?}");
    assert_eq!(audit(&[], &[], Some(at(0)), at(60), LIMITS), []);
    // A job waiting for its sale's opening at 30 is pending only from then.
    let opening = AuditLimits {
        opens_at: Some(at(30)),
        ..LIMITS
    };
    let waiting = job(JobStatus::Pending, &[], 0);
    assert_eq!(
        audit(&[], std::slice::from_ref(&waiting), None, at(90), opening),
        []
    );
    assert_eq!(audit(&[], &[waiting], None, at(91), opening).len(), 1);
}

#[test]
fn a_log_that_sells_a_seat_to_two_jobs_is_reported_and_one_sale_per_seat_is_not() {
    let first = job(JobStatus::Sold, &["a", "b"], 100);
    let again = job(JobStatus::Sold, &["b"], 100);
    let held = job(JobStatus::Held, &["a"], 100);
    let events: Vec<ReservationEvent> = [&first, &held, &first]
        .into_iter()
        .map(|job| ReservationEvent::of(job, at(1)))
        .collect();
    assert!(
        sold_twice(&events).is_empty(),
        "a hold, and the same sale published twice, are no second sale"
    );
    let events: Vec<ReservationEvent> = [&first, &again]
        .into_iter()
        .map(|job| ReservationEvent::of(job, at(1)))
        .collect();
    assert_eq!(
        sold_twice(&events),
        [Violation::SeatSoldTwice {
            event: EventId::parse("e").unwrap(),
            seat: SeatId::parse("b").unwrap(),
            jobs: (first.job_id, again.job_id),
        }]
    );
}
