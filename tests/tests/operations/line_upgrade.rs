//! An upgrade keeps a line's order: schema version 13 orders a section's waitlist by each job's
//! place (`line_place`) where version 12 ordered it by job id, so the jobs an older build left
//! waiting are given their places as the migration runs, in the order they were admitted, and
//! the line is served in that order after the upgrade.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::path::Path;
use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::Backend;
use seatclaim_core::domain::{
    BuyerId, EventId, EventSpec, IdempotencyKey, Intent, JobAction, JobStatus, NewEvent,
    SeatRequest, SectionSpec, Tender,
};
use seatclaim_core::ports::{Clock, EventCreation, Settled};
use seatclaim_runtime::backend;
use seatclaim_runtime::config::BackendSettings;

use super::older_schema::take_back;

/// A clock the test sets, so each admission has an instant of its own.
struct SetClock(Mutex<Timestamp>);

impl Clock for SetClock {
    fn now(&self) -> Timestamp {
        *self.0.lock().unwrap()
    }
}

async fn open(dir: &Path, clock: Arc<SetClock>) -> Backend {
    let settings = BackendSettings::in_folder(dir.to_owned());
    seatclaim_e2e::running(backend::open_with_clock(&settings, clock).await.unwrap())
}

/// Admits a request for one seat of section W as `buyer` at the clock's instant and claims it.
async fn reserve(backend: &Backend, event: &EventId, buyer: &str) -> Intent {
    let buyer = BuyerId::parse(buyer).unwrap();
    let key = IdempotencyKey::parse("k").unwrap();
    let intent = Intent {
        access: None,
        job_id: backend.admissions.new_job_id(&buyer, &key),
        event_id: event.clone(),
        buyer_id: buyer,
        request: SeatRequest::in_section("W", 1).unwrap(),
        accepted_at: backend.clock.now(),
        opens_at: None,
    };
    backend.admissions.admit(&key, &intent).await.unwrap();
    seatclaim_core::app::claim(backend, std::slice::from_ref(&intent), backend.clock.now())
        .await
        .unwrap();
    intent
}

/// Takes a migrated file back to schema version 12: no places, the line indexed by job id, and
/// the seat limit's index as version 5 made it.
fn as_version_12_left_it(dir: &Path) {
    let file = rusqlite::Connection::open(dir.join("seatclaim.sqlite3")).unwrap();
    take_back(&file, 12);
}

#[tokio::test]
async fn a_line_an_older_build_left_keeps_its_admission_order() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(SetClock(Mutex::new(Timestamp::now())));
    let backend = open(dir.path(), clock.clone()).await;
    let event = NewEvent::parse(EventSpec {
        event_id: "upgraded-line".into(),
        name: "a line across an upgrade".into(),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "W".into(),
            rows: 1,
            seats_per_row: 1,
            price: None,
        }]),
        waitlist: Some(true),
        ..EventSpec::default()
    })
    .unwrap();
    let created = backend.catalog.create_event(&event).await.unwrap();
    assert!(matches!(created, EventCreation::Created(1)), "{created:?}");
    let holder = reserve(&backend, &event.event_id, "holder").await;
    let mut waiting = Vec::new();
    for n in 0..6 {
        *clock.0.lock().unwrap() += SignedDuration::from_millis(5);
        waiting.push(reserve(&backend, &event.event_id, &format!("waiter{n}")).await);
    }
    drop(backend);
    as_version_12_left_it(dir.path());

    let backend = open(dir.path(), clock.clone()).await;
    for (place, intent) in waiting.iter().enumerate() {
        let job = backend.jobs.job(intent.job_id).await.unwrap().unwrap();
        assert_eq!(job.status, JobStatus::Waitlisted);
        let position = backend.jobs.waitlist_position(&job).await.unwrap();
        assert_eq!(position, Some(place as u64 + 1), "admission order");
    }
    // The seat that comes free goes to the first admitted, and the rest move up.
    let cancelled = backend
        .inventory
        .settle(holder.job_id, JobAction::Cancel, &Tender::Nothing)
        .await
        .unwrap();
    assert!(matches!(cancelled, Settled::Done(_)), "{cancelled:?}");
    let served = backend.jobs.job(waiting[0].job_id).await.unwrap().unwrap();
    assert_eq!(served.status, JobStatus::Held, "the head is served");
    for (place, intent) in waiting[1..].iter().enumerate() {
        let job = backend.jobs.job(intent.job_id).await.unwrap().unwrap();
        let position = backend.jobs.waitlist_position(&job).await.unwrap();
        assert_eq!(
            position,
            Some(place as u64 + 1),
            "the rest move up in order"
        );
    }
}
