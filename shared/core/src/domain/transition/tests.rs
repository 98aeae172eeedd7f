use super::*;
use crate::domain::{
    BuyerId, Currency, EventId, JobId, Payment, REASON_EXPIRED, ReasonCode, SeatRequest,
};

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap()
}

fn job(status: JobStatus) -> Job {
    Job {
        access: None,
        job_id: JobId::new(),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id: BuyerId::parse("b1").unwrap(),
        request: SeatRequest::in_section("A", 1).unwrap(),
        status,
        seat_ids: vec![SeatId::parse("A-1-1").unwrap()],
        hold_expires_at: Some(at(100)),
        reason: None,
        reason_code: None,
        amount_due: None,
        payment_ref: None,
        accepted_at: at(0),
        first_error: None,
        last_error: None,
        hold_extensions: 0,
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
    let t = pending.hold(seats.clone(), at(70), None, at(10)).unwrap();
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
        assert_eq!(j.hold(vec![], at(9), None, at(1)), Err(decided));
        assert_eq!(j.reject(&Reason::seat_unavailable(), at(1)), Err(decided));
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
    assert_eq!(failed.job.reason_code, Some(ReasonCode::Failed));
    assert_eq!(failed.event.reason_code, Some(ReasonCode::Failed));
    let expired = pending.close(&Closure::RequestExpired, at(5)).unwrap();
    assert_eq!(expired.job.status, JobStatus::Rejected);
    assert_eq!(expired.job.reason.as_deref(), Some(REASON_EXPIRED));
    assert_eq!(expired.job.reason_code, Some(ReasonCode::RequestExpired));
    assert_eq!(expired.event.reason_code, Some(ReasonCode::RequestExpired));
    assert_eq!(expired.event.hold_expires_at, None);
}

#[test]
fn only_a_failed_job_reopens_for_a_replay() {
    let mut failed = job(JobStatus::Failed);
    failed.reason = Some("broken".into());
    failed.reason_code = Some(ReasonCode::Failed);
    let t = failed.reopen(at(3)).unwrap().unwrap();
    assert_eq!(
        (t.from, t.job.status, t.job.reason, t.job.reason_code),
        (JobStatus::Failed, JobStatus::Pending, None, None)
    );
    assert_eq!(t.event.status, JobStatus::Pending);
    assert_eq!(job(JobStatus::Pending).reopen(at(3)), Ok(None));
    for decided in [JobStatus::Held, JobStatus::Rejected, JobStatus::Sold] {
        assert_eq!(job(decided).reopen(at(3)), Err(decided));
    }
}

#[test]
fn a_live_hold_can_be_confirmed_and_a_repeat_confirm_is_a_no_op() {
    let sold = job(JobStatus::Held)
        .confirm(&Tender::Nothing, at(99))
        .unwrap()
        .unwrap();
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
    assert_eq!(
        job(JobStatus::Sold).confirm(&Tender::Nothing, at(500)),
        Ok(None)
    );
}

#[test]
fn a_lapsed_hold_cannot_be_confirmed_or_cancelled_but_can_be_expired() {
    let held = job(JobStatus::Held);
    assert_eq!(
        held.confirm(&Tender::Nothing, at(100)),
        Err(JobConflict::HoldLapsed)
    );
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
    assert!(
        job(JobStatus::Pending)
            .confirm(&Tender::Nothing, at(0))
            .is_err()
    );
    assert_eq!(job(JobStatus::Cancelled).cancel(at(0)), Ok(None));
    let cancelled = job(JobStatus::Held).cancel(at(1)).unwrap().unwrap();
    assert_eq!(
        (cancelled.transition.job.status, cancelled.seats),
        (JobStatus::Cancelled, Settlement::Release)
    );
}

fn eur(amount: u64) -> Money {
    Money {
        amount,
        currency: Currency::parse("EUR").unwrap(),
    }
}

fn paid(amount: u64, reference: &str) -> Payment {
    Payment {
        paid: eur(amount),
        reference: reference.into(),
    }
}

fn priced(status: JobStatus) -> Job {
    Job {
        amount_due: Some(eur(4500)),
        ..job(status)
    }
}

#[test]
fn a_payment_of_the_amount_due_sells_the_hold_and_is_recorded() {
    let sold = priced(JobStatus::Held)
        .settle(
            JobAction::Confirm,
            &Tender::Paid(paid(4500, "pi_1")),
            at(99),
        )
        .unwrap()
        .unwrap();
    assert_eq!(sold.transition.job.status, JobStatus::Sold);
    assert_eq!(sold.transition.job.payment_ref.as_deref(), Some("pi_1"));
    assert_eq!(sold.transition.event.payment_ref.as_deref(), Some("pi_1"));
    assert_eq!(sold.seats, Settlement::Sell);
    let again = sold.transition.job.settle(
        JobAction::Confirm,
        &Tender::Paid(paid(4500, "pi_1")),
        at(200),
    );
    assert_eq!(again, Ok(None), "the same payment again is a repeat");
    let other = sold.transition.job.settle(
        JobAction::Confirm,
        &Tender::Paid(paid(4500, "pi_2")),
        at(99),
    );
    assert_eq!(other, Err(JobConflict::PaidOtherwise));
}

#[test]
fn a_payment_of_another_amount_or_currency_or_after_the_deadline_sells_nothing() {
    let held = priced(JobStatus::Held);
    for wrong in [paid(4499, "pi"), paid(0, "pi")] {
        assert_eq!(
            held.settle(JobAction::Confirm, &Tender::Paid(wrong), at(99)),
            Err(JobConflict::PaymentMismatch {
                due: Some(eur(4500))
            })
        );
    }
    let dollars = Payment {
        paid: Money {
            amount: 4500,
            currency: Currency::parse("USD").unwrap(),
        },
        reference: "pi".into(),
    };
    assert!(
        held.settle(JobAction::Confirm, &Tender::Paid(dollars), at(99))
            .is_err()
    );
    assert_eq!(
        held.settle(JobAction::Confirm, &Tender::Paid(paid(4500, "pi")), at(100)),
        Err(JobConflict::HoldLapsed)
    );
    let free = job(JobStatus::Held);
    assert!(!free.is_priced() && held.is_priced());
    assert!(held.awaits_payment(at(99)) && !free.awaits_payment(at(99)));
    assert!(
        !held.awaits_payment(at(100)),
        "a lapsed hold is refused as lapsed"
    );
    assert!(matches!(
        free.settle(JobAction::Confirm, &Tender::Paid(paid(1, "pi")), at(99)),
        Err(JobConflict::PaymentMismatch { due: None })
    ));
}

#[test]
fn a_priced_hold_is_sold_without_a_payment_only_where_payments_are_waived() {
    let held = priced(JobStatus::Held);
    assert_eq!(
        held.confirm(&Tender::Nothing, at(99)),
        Err(JobConflict::PaymentRequired { due: eur(4500) })
    );
    let waived = held.confirm(&Tender::Waived, at(99)).unwrap().unwrap();
    assert_eq!(waived.transition.job.status, JobStatus::Sold);
    assert_eq!(waived.transition.job.payment_ref, None);
    let free = job(JobStatus::Held).confirm(&Tender::Nothing, at(99));
    assert_eq!(
        free.unwrap().unwrap().transition.job.status,
        JobStatus::Sold,
        "a free hold needs no payment"
    );
    assert_eq!(
        held.confirm(&Tender::Nothing, at(100)),
        Err(JobConflict::HoldLapsed),
        "a lapsed hold is refused as lapsed, paid or not"
    );
    for status in [
        JobStatus::Pending,
        JobStatus::Waitlisted,
        JobStatus::Cancelled,
    ] {
        assert!(
            matches!(
                priced(status).confirm(&Tender::Nothing, at(99)),
                Err(JobConflict::WrongStatus { .. })
            ),
            "a confirm of a job that is not HELD is a conflict: {status:?}"
        );
    }
}
