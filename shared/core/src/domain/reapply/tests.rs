use super::*;
use crate::domain::{BuyerId, EventId, Intent, Transition};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap()
}

fn seat(id: &str) -> SeatId {
    SeatId::parse(id).unwrap()
}

fn pending() -> Job {
    Job::pending(&Intent {
        access: None,
        job_id: JobId::new(),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id: BuyerId::parse("b1").unwrap(),
        request: SeatRequest::in_section("A", 1).unwrap(),
        accepted_at: at(0),
        opens_at: None,
    })
}

/// A pending job held at 10 s until 100 s, then (if `then` says so) settled at 20 s: the live
/// job after each step, and the events the live store published.
fn lived(then: Option<fn(&Job, Timestamp) -> Transition>) -> (Vec<Job>, Vec<ReservationEvent>) {
    let held = pending()
        .hold(vec![seat("A-1-1")], at(100), None, at(10))
        .unwrap();
    let mut jobs = vec![held.job.clone()];
    let mut events = vec![held.event];
    if let Some(settle) = then {
        let settled = settle(&held.job, at(20));
        jobs.push(settled.job);
        events.push(settled.event);
    }
    (jobs, events)
}

fn sell(job: &Job, now: Timestamp) -> Transition {
    job.confirm(&crate::domain::Tender::Nothing, now)
        .unwrap()
        .unwrap()
        .transition
}

fn cancel(job: &Job, now: Timestamp) -> Transition {
    job.cancel(now).unwrap().unwrap().transition
}

#[test]
fn a_stored_job_becomes_what_its_events_made_of_it_live() {
    for then in [
        None,
        Some(sell as fn(&Job, Timestamp) -> Transition),
        Some(cancel),
    ] {
        let (jobs, events) = lived(then);
        let stored = Job {
            job_id: events[0].job_id,
            ..pending()
        };
        let again = reapply(Some(&stored), &events).unwrap().unwrap();
        assert_eq!(&again.job, jobs.last().unwrap());
        assert!(!again.created);
        assert_eq!(again.taken_at, at(10), "the seats were taken by the hold");
        assert_eq!(reapply(Some(&again.job), &events), Ok(None), "idempotent");
    }
}

#[test]
fn a_missing_job_is_recreated_with_its_status_and_seats() {
    let (jobs, events) = lived(Some(sell));
    let again = reapply(None, &events).unwrap().unwrap();
    assert!(again.created);
    let live = jobs.last().unwrap();
    assert_eq!(again.job.status, JobStatus::Sold);
    assert_eq!(again.job.seat_ids, live.seat_ids);
    assert_eq!(again.job.hold_expires_at, live.hold_expires_at);
    assert_eq!(again.job.request, SeatRequest::Seats(live.seat_ids.clone()));
    assert_eq!(
        again.job.accepted_at,
        at(10),
        "no later than its first event"
    );
}

#[test]
fn a_log_that_leaves_the_job_undecided_is_not_reapplied() {
    let stored = pending();
    let waiting = stored.join_waitlist(at(5)).unwrap();
    assert_eq!(
        reapply(Some(&stored), &[waiting.event]),
        Err(NotReapplied::Undecided {
            status: JobStatus::Waitlisted
        })
    );
}

fn reapplied(then: Option<fn(&Job, Timestamp) -> Transition>) -> Reapplied {
    reapply(None, &lived(then).1).unwrap().unwrap()
}

#[test]
fn a_held_or_sold_job_takes_its_free_seats_and_keeps_its_own() {
    let (held, sold) = (reapplied(None), reapplied(Some(sell)));
    let id = held.job.job_id;
    let hold = SeatState::Held {
        job_id: id,
        until: at(100),
    };
    assert_eq!(
        held.seat_after(&seat("A-1-1"), &SeatState::Available),
        Ok(Some(hold))
    );
    assert_eq!(
        held.seat_after(&seat("A-1-1"), &hold),
        Ok(None),
        "already so"
    );
    let own = SeatState::Held {
        job_id: sold.job.job_id,
        until: at(100),
    };
    let sale = SeatState::Sold {
        job_id: sold.job.job_id,
    };
    assert_eq!(sold.seat_after(&seat("A-1-1"), &own), Ok(Some(sale)));
    // Another job's hold that had lapsed when this one took the seat was claimable.
    let lapsed = SeatState::Held {
        job_id: JobId::new(),
        until: at(10),
    };
    assert_eq!(held.seat_after(&seat("A-1-1"), &lapsed), Ok(Some(hold)));
}

#[test]
fn a_seat_another_job_has_is_a_conflict_not_overwritten() {
    let held = reapplied(None);
    let other = JobId::new();
    for (state, sold) in [
        (
            SeatState::Held {
                job_id: other,
                until: at(11),
            },
            false,
        ),
        (SeatState::Sold { job_id: other }, true),
    ] {
        assert_eq!(
            held.seat_after(&seat("A-1-1"), &state),
            Err(NotReapplied::SeatTaken {
                seat_id: seat("A-1-1"),
                holder: other,
                sold
            })
        );
    }
}

#[test]
fn an_ended_job_gives_back_only_the_seats_it_holds() {
    let cancelled = reapplied(Some(cancel));
    let id = cancelled.job.job_id;
    let mine = SeatState::Held {
        job_id: id,
        until: at(100),
    };
    assert_eq!(
        cancelled.seat_after(&seat("A-1-1"), &mine),
        Ok(Some(SeatState::Available))
    );
    for untouched in [
        SeatState::Available,
        SeatState::Held {
            job_id: JobId::new(),
            until: at(100),
        },
        SeatState::Sold {
            job_id: JobId::new(),
        },
    ] {
        assert_eq!(cancelled.seat_after(&seat("A-1-1"), &untouched), Ok(None));
    }
}

#[test]
fn an_ended_job_is_never_moved_back_by_an_event_of_the_same_instant() {
    let (jobs, events) = lived(Some(sell));
    assert_eq!(reapply(Some(&jobs[1]), &events[..1]), Ok(None));
}
