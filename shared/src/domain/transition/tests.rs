use super::*;
use crate::domain::{BuyerId, EventId, JobId, SeatRequest};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap()
}

fn job(status: JobStatus) -> Job {
    Job {
        job_id: JobId::new(),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id: BuyerId::parse("b1").unwrap(),
        request: SeatRequest::in_section("A", 1).unwrap(),
        status,
        seat_ids: vec![SeatId::parse("A-1-1").unwrap()],
        hold_expires_at: Some(at(100)),
        reason: None,
        accepted_at: at(0),
        first_error: None,
        last_error: None,
    }
}

#[test]
fn a_hold_moves_a_pending_job_and_records_its_deadline_in_the_event() {
    let pending = Job {
        seat_ids: vec![],
        hold_expires_at: None,
        ..job(JobStatus::Pending)
    };
    let seats = vec![SeatId::parse("A-1-2").unwrap()];
    let t = pending.hold(seats.clone(), at(70), at(10)).unwrap();
    assert_eq!(
        (t.from, t.job.status),
        (JobStatus::Pending, JobStatus::Held)
    );
    assert_eq!(t.job.seat_ids, seats);
    assert_eq!(t.event.status, JobStatus::Held);
    assert_eq!(t.event.hold_expires_at, Some(at(70)));
    assert_eq!(t.event.seat_ids, seats);
    assert_eq!(t.event.occurred_at, at(10));
}

#[test]
fn only_a_pending_job_is_decided_and_a_decided_one_reports_its_status() {
    for decided in JobStatus::ALL
        .into_iter()
        .filter(|s| *s != JobStatus::Pending)
    {
        let j = job(decided);
        assert_eq!(j.hold(vec![], at(9), at(1)), Err(decided));
        assert_eq!(j.reject("taken", at(1)), Err(decided));
        assert_eq!(j.fail("broken", at(1)), Err(decided));
    }
}

#[test]
fn closures_fail_or_reject_with_their_reason() {
    let pending = job(JobStatus::Pending);
    let failed = pending
        .close(
            &Closure::Failed {
                reason: "gave up".into(),
            },
            at(5),
        )
        .unwrap();
    assert_eq!(failed.job.status, JobStatus::Failed);
    assert_eq!(failed.event.reason.as_deref(), Some("gave up"));
    let expired = pending.close(&Closure::RequestExpired, at(5)).unwrap();
    assert_eq!(expired.job.status, JobStatus::Rejected);
    assert_eq!(expired.job.reason.as_deref(), Some(REASON_EXPIRED));
    assert_eq!(expired.event.hold_expires_at, None);
}

#[test]
fn only_a_failed_job_reopens_for_a_replay() {
    let mut failed = job(JobStatus::Failed);
    failed.reason = Some("broken".into());
    let t = failed.reopen(at(3)).unwrap().unwrap();
    assert_eq!(
        (t.from, t.job.status, t.job.reason),
        (JobStatus::Failed, JobStatus::Pending, None)
    );
    assert_eq!(t.event.status, JobStatus::Pending);
    assert_eq!(job(JobStatus::Pending).reopen(at(3)), Ok(None));
    for decided in [JobStatus::Held, JobStatus::Rejected, JobStatus::Sold] {
        assert_eq!(job(decided).reopen(at(3)), Err(decided));
    }
}

#[test]
fn a_live_hold_can_be_confirmed_and_a_repeat_confirm_is_a_no_op() {
    let sold = job(JobStatus::Held).confirm(at(99)).unwrap().unwrap();
    assert_eq!(sold.seats, Settlement::Sell);
    assert_eq!(
        (sold.transition.from, sold.transition.job.status),
        (JobStatus::Held, JobStatus::Sold)
    );
    assert_eq!(sold.transition.event.status, JobStatus::Sold);
    assert_eq!(
        sold.transition.event.hold_expires_at, None,
        "only HELD events carry a deadline"
    );
    assert_eq!(job(JobStatus::Sold).confirm(at(500)), Ok(None));
}

#[test]
fn a_lapsed_hold_cannot_be_confirmed_or_cancelled_but_can_be_expired() {
    let held = job(JobStatus::Held);
    assert_eq!(held.confirm(at(100)), Err(JobConflict::HoldLapsed));
    assert_eq!(held.cancel(at(100)), Err(JobConflict::HoldLapsed));
    let expired = held.expire(at(100)).unwrap().unwrap();
    assert_eq!(
        (expired.transition.job.status, expired.seats),
        (JobStatus::Expired, Settlement::Release)
    );
    assert_eq!(held.expire(at(99)), Err(JobConflict::HoldLive));
}

#[test]
fn a_sold_job_cannot_be_cancelled_and_a_pending_one_cannot_be_confirmed() {
    let err = job(JobStatus::Sold).cancel(at(0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the job is SOLD, so it cannot be cancelled"
    );
    assert!(job(JobStatus::Pending).confirm(at(0)).is_err());
    assert_eq!(job(JobStatus::Cancelled).cancel(at(0)), Ok(None));
    let cancelled = job(JobStatus::Held).cancel(at(1)).unwrap().unwrap();
    assert_eq!(
        (cancelled.transition.job.status, cancelled.seats),
        (JobStatus::Cancelled, Settlement::Release)
    );
}
