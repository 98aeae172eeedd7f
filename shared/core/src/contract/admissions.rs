//! The contract of admission: idempotent per buyer and key, refusing what the event lacks, and
//! deciding in its own write only behind the queue.

use super::*;

/// Admission is idempotent per buyer and key, and refuses what the event does not have.
pub async fn admission_is_idempotent_and_checks_the_event(f: Fixture) {
    let event = with_event(&f).await;
    let key = IdempotencyKey::parse("k").unwrap();
    let first = keyed(&f, &event, "b1", &key, exact(&["A-1-1"]));
    let admissions = &f.backend.admissions;
    assert_eq!(
        admissions.admit(&key, &first).await.unwrap(),
        Admission::Accepted(first.job_id)
    );
    // A retry is a new request to the API, which asks the store for its job id again.
    let retry = keyed(&f, &event, "b1", &key, exact(&["A-1-1"]));
    assert_eq!(
        admissions.admit(&key, &retry).await.unwrap(),
        Admission::Duplicate(first.job_id)
    );
    let other = keyed(&f, &event, "b1", &key, exact(&["A-1-2"]));
    assert_eq!(
        admissions.admit(&key, &other).await.unwrap(),
        Admission::KeyReused
    );
    let other_buyer = keyed(&f, &event, "b2", &key, exact(&["A-1-1"]));
    assert_eq!(
        admissions.admit(&key, &other_buyer).await.unwrap(),
        Admission::Accepted(other_buyer.job_id)
    );

    let fresh = IdempotencyKey::parse("fresh").unwrap();
    let unknown_event = keyed(
        &f,
        &EventId::parse("nope").unwrap(),
        "b3",
        &fresh,
        exact(&["A-1-1"]),
    );
    assert_eq!(
        admissions.admit(&fresh, &unknown_event).await.unwrap(),
        Admission::UnknownEvent
    );
    let unknown_seat = keyed(&f, &event, "b3", &fresh, exact(&["A-1-1", "Z-1"]));
    assert_eq!(
        admissions.admit(&fresh, &unknown_seat).await.unwrap(),
        Admission::UnknownSeats(vec![SeatId::parse("Z-1").unwrap()])
    );
    let section = SeatRequest::in_section("Z", 1).unwrap();
    let unknown_section = keyed(&f, &event, "b3", &fresh, section);
    assert!(matches!(
        admissions.admit(&fresh, &unknown_section).await.unwrap(),
        Admission::UnknownSection(_)
    ));
    assert_eq!(status(&f, &first).await, JobStatus::Pending);
}

/// `admit_and_decide`: a store may decide the claim in the admission's own write (the job
/// decided, its event in the outbox, nothing queued) or admit and queue as `admit` does; a retry
/// is the same job; and an admission never decides ahead of an intent already queued.
pub async fn an_admission_may_decide_but_never_ahead_of_the_queue(f: Fixture) {
    let event = with_event(&f).await;
    let admissions = &f.backend.admissions;
    let key = fresh_key();
    let first = keyed(&f, &event, "b1", &key, exact(&["A-1-1"]));
    match admissions.admit_and_decide(&key, &first).await.unwrap() {
        Admission::Decided(job) => {
            assert_eq!((job.job_id, job.status), (first.job_id, JobStatus::Held));
            assert_eq!(status(&f, &first).await, JobStatus::Held);
            let depth = f.backend.queue.depth().await.unwrap();
            assert_eq!(
                depth.ready + depth.in_flight,
                0,
                "a decided admission queues nothing"
            );
            let events = f.backend.outbox.unpublished(100).await.unwrap();
            assert!(
                events
                    .iter()
                    .any(|e| e.event.job_id == first.job_id && e.event.status == JobStatus::Held),
                "the decision's event is in the outbox: {events:?}"
            );
        }
        other => assert_eq!(other, Admission::Accepted(first.job_id)),
    }
    assert_eq!(
        admissions.admit_and_decide(&key, &first).await.unwrap(),
        Admission::Duplicate(first.job_id)
    );
    let queued = admitted(&f, &event, "b2", exact(&["A-1-2"])).await;
    let next_key = fresh_key();
    let next = keyed(&f, &event, "b3", &next_key, exact(&["A-1-2"]));
    assert_eq!(
        admissions.admit_and_decide(&next_key, &next).await.unwrap(),
        Admission::Accepted(next.job_id),
        "an intent queued first is decided first"
    );
    assert_eq!(status(&f, &queued).await, JobStatus::Pending);
}
