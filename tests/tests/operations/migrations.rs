//! An upgrade never loses data: a data folder written by the 407513e binaries (schema version 1,
//! the last build without migrations; `tests/fixtures/v1/make.sh` says how it was made) opens
//! with this build, every record in it reads back, and the intents it left queued are decided;
//! its events open at once (no `sale_starts_at`) and choose seats in the organiser's order.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use seatclaim_runtime::backend;
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use seatclaim_core::Backend;
use seatclaim_core::domain::{
    BuyerId, EventId, HoldExtension, IdempotencyKey, Intent, Job, JobAction, JobConflict, JobId,
    JobStatus, ReasonCode, SeatRequest, SeatView, Waitlist,
};
use seatclaim_core::ports::{Admission, Clock, Settled};
use seatclaim_e2e::process_batch;
use seatclaim_runtime::config::BackendSettings;
use seatclaim_runtime::loops::Limits;

use super::older_schema::take_back;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/v1");

/// "Now" stands still just after the fixture was written, so its holds are live and its queued
/// intents are young, as they were when the old build stopped.
struct StandingClock(Timestamp);

impl Clock for StandingClock {
    fn now(&self) -> Timestamp {
        self.0
    }
}

/// A copy of the fixture in a fresh folder (the committed file stays version 1).
fn copy_of_fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        Path::new(FIXTURE).join("seatclaim.sqlite3"),
        dir.path().join("seatclaim.sqlite3"),
    )
    .unwrap();
    dir
}

fn decided_jobs() -> HashMap<String, JobId> {
    let text = std::fs::read_to_string(Path::new(FIXTURE).join("jobs.json")).unwrap();
    let ids: HashMap<String, String> = serde_json::from_str(&text).unwrap();
    ids.into_iter()
        .map(|(status, id)| (status, JobId::parse(&id).unwrap()))
        .collect()
}

async fn open(dir: &Path, now: Timestamp) -> Backend {
    let settings = BackendSettings::in_folder(dir.to_owned());
    let opened = backend::open_with_clock(&settings, Arc::new(StandingClock(now)))
        .await
        .expect("a version-1 folder opens with this build");
    seatclaim_e2e::running(opened)
}

/// A copy of the fixture opened once by this build (so migrated to its schema version), and its
/// file, for a test that reads the upgraded file's tables and indexes directly.
async fn upgraded_fixture() -> (tempfile::TempDir, rusqlite::Connection) {
    let dir = copy_of_fixture();
    drop(open(dir.path(), Timestamp::now()).await);
    let file = rusqlite::Connection::open(dir.path().join("seatclaim.sqlite3")).unwrap();
    (dir, file)
}

/// The single number `sql` selects from `file`.
fn count_of(file: &rusqlite::Connection, sql: &str) -> i64 {
    file.query_row(sql, [], |row| row.get(0)).unwrap()
}

#[tokio::test]
async fn a_version_one_folder_opens_and_every_record_reads_back() {
    let dir = copy_of_fixture();
    let backend = open(dir.path(), Timestamp::now()).await;
    backend
        .catalog
        .ping()
        .await
        .expect("ready: the file is at this build's version");
    let ids = decided_jobs();
    let expected = [
        ("held", JobStatus::Held, vec!["A-1-1", "A-1-2"]),
        ("sold", JobStatus::Sold, vec!["A-1-3"]),
        ("cancelled", JobStatus::Cancelled, vec!["A-1-5"]),
        ("rejected", JobStatus::Rejected, vec![]),
        ("failed", JobStatus::Failed, vec![]),
        ("expired", JobStatus::Expired, vec!["S-1-1"]),
    ];
    for (name, status, seats) in expected {
        let job = backend.jobs.job(ids[name]).await.unwrap().expect(name);
        assert_eq!(job.status, status, "{name}");
        let seat_ids: Vec<&str> = job.seat_ids.iter().map(|s| s.as_str()).collect();
        assert_eq!(seat_ids, seats, "{name}");
        assert!(
            !backend.jobs.history(ids[name]).await.unwrap().is_empty(),
            "{name} history"
        );
    }
    let failed = backend.jobs.job(ids["failed"]).await.unwrap().unwrap();
    assert_eq!(failed.reason_code, Some(ReasonCode::Failed));
    assert!(failed.reason.unwrap().contains("injected fault"));
    let rejected = backend.jobs.job(ids["rejected"]).await.unwrap().unwrap();
    assert_eq!(rejected.reason.as_deref(), Some("seat no longer available"));
    assert_eq!(
        rejected.reason_code,
        Some(ReasonCode::SeatUnavailable),
        "a rejection stored before codes reads with the code of its text"
    );
    let history = backend.jobs.history(ids["rejected"]).await.unwrap();
    assert_eq!(
        history.last().and_then(|event| event.reason_code),
        Some(ReasonCode::SeatUnavailable),
        "and so does its event"
    );

    let dead = backend
        .queue
        .dead_letters(10, Duration::ZERO)
        .await
        .unwrap();
    assert_eq!(
        dead.iter().map(|d| d.job_id).collect::<Vec<_>>(),
        [Some(ids["failed"])]
    );

    let seats = backend
        .catalog
        .seat_map(&EventId::parse("e1").unwrap())
        .await
        .unwrap()
        .expect("event e1");
    assert_eq!(seats.len(), 10);
    let view = |id: &str| {
        let seat = seats.iter().find(|s| s.seat_id.as_str() == id).unwrap();
        seat.state.view(Timestamp::MIN)
    };
    assert_eq!(view("A-1-3"), SeatView::Sold);
    assert_eq!(view("A-1-5"), SeatView::Available);
}

#[tokio::test]
async fn the_idempotency_records_of_a_version_one_folder_still_decide_retries() {
    let dir = copy_of_fixture();
    let backend = open(dir.path(), Timestamp::now()).await;
    let held = decided_jobs()["held"];
    let (buyer_id, key) = (
        BuyerId::parse("b-held").unwrap(),
        IdempotencyKey::parse("k-held").unwrap(),
    );
    let retry = Intent {
        access: None,
        job_id: backend.admissions.new_job_id(&buyer_id, &key),
        event_id: EventId::parse("e1").unwrap(),
        buyer_id,
        request: SeatRequest::exact(&["A-1-1".into(), "A-1-2".into()]).unwrap(),
        accepted_at: backend.clock.now(),
        opens_at: None,
    };
    assert_eq!(
        backend.admissions.admit(&key, &retry).await.unwrap(),
        Admission::Duplicate(held)
    );
    let other = Intent {
        request: SeatRequest::exact(&["A-1-4".into()]).unwrap(),
        ..retry
    };
    assert_eq!(
        backend.admissions.admit(&key, &other).await.unwrap(),
        Admission::KeyReused
    );
}

/// Schema version 4 replaces the published flag by the relay's cursor: events an older file had
/// not published yet (here the relay was behind at seq 5, and seq 8 was refused past it) are
/// still handed to the relay, in order, and the ones already published are not handed again.
#[tokio::test]
async fn the_events_an_older_folder_had_not_published_are_still_published() {
    let dir = copy_of_fixture();
    let file = rusqlite::Connection::open(dir.path().join("seatclaim.sqlite3")).unwrap();
    file.execute(
        "UPDATE outbox SET published_at = NULL WHERE seq = 5 OR seq = 8",
        [],
    )
    .unwrap();
    let waiting: Vec<String> = file
        .prepare("SELECT body FROM outbox WHERE published_at IS NULL ORDER BY seq")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    drop(file);
    let backend = open(dir.path(), Timestamp::now()).await;
    let unpublished = backend.outbox.unpublished(100).await.unwrap();
    let events: Vec<_> = unpublished
        .iter()
        .map(|entry| entry.event.clone())
        .collect();
    let expected: Vec<_> = waiting
        .iter()
        .map(|body| seatclaim_core::codec::decode_event(body).unwrap())
        .collect();
    assert_eq!(events, expected);
    backend.outbox.mark_published(&unpublished).await.unwrap();
    assert!(backend.outbox.unpublished(100).await.unwrap().is_empty());
}

#[tokio::test]
async fn the_intents_a_version_one_folder_left_queued_are_decided() {
    let dir = copy_of_fixture();
    let e1 = EventId::parse("e1").unwrap();
    let pending: Vec<Job> = {
        let backend = open(dir.path(), Timestamp::now()).await;
        let jobs = backend.jobs.of_event(&e1).await.unwrap();
        jobs.into_iter()
            .filter(|j| j.status == JobStatus::Pending)
            .collect()
    };
    assert_eq!(pending.len(), 2, "the fixture left two intents queued");
    let newest = pending.iter().map(|j| j.accepted_at).max().unwrap();
    let backend = open(dir.path(), newest + SignedDuration::from_secs(1)).await;
    let deliveries = backend
        .queue
        .receive(10, Duration::from_secs(1))
        .await
        .unwrap();
    assert_eq!(deliveries.len(), 2);
    let outcome = process_batch(&backend, deliveries, Limits::attempts(5)).await;
    assert_eq!(outcome.held, 2, "{outcome:?}");
    for job in pending {
        let decided = backend.jobs.job(job.job_id).await.unwrap().unwrap();
        assert_eq!(decided.status, JobStatus::Held, "{}", job.buyer_id);
    }
    assert_eq!(backend.queue.depth().await.unwrap().ready, 0);
}

#[tokio::test]
async fn a_version_one_folder_keeps_its_records_until_the_retention_deletes_what_it_may() {
    // Schema version 3's indexes serve the retention delete on a migrated folder too: once the
    // retention has passed, its decided jobs go, and what must stay stays.
    let dir = copy_of_fixture();
    let retention = seatclaim_core::domain::Retention::default();
    let later = Timestamp::now() + retention.period() + SignedDuration::from_hours(24);
    let backend = open(dir.path(), later).await;
    let purged = seatclaim_core::app::purge_once(&backend, retention)
        .await
        .unwrap();
    assert_eq!(purged, 3, "the rejection, the cancellation and the expiry");
    let ids = decided_jobs();
    for name in ["rejected", "cancelled", "expired"] {
        assert!(
            backend.jobs.job(ids[name]).await.unwrap().is_none(),
            "{name}"
        );
    }
    // A sale, a hold the sweeper has not released, and a failure whose intent is still in
    // the dead-letter queue (a replay needs its job) are kept whatever their age.
    for name in ["sold", "held", "failed"] {
        assert!(
            backend.jobs.job(ids[name]).await.unwrap().is_some(),
            "{name}"
        );
    }
}

/// Schema version 5 narrows the index by event and buyer to the HELD and SOLD jobs the seat
/// limit counts, and version 14 widens it to the WAITLISTED ones: an older folder's held, sold
/// and waiting jobs are all in `jobs_counted`, and the older indexes are gone.
#[tokio::test]
async fn an_older_folders_held_and_sold_jobs_are_all_in_the_seat_limits_index() {
    let (_dir, file) = upgraded_fixture().await;
    let count = |sql: &str| count_of(&file, sql);
    let counted = "status = 'HELD' OR status = 'SOLD' OR status = 'WAITLISTED'";
    let holding = count(&format!("SELECT count(*) FROM jobs WHERE {counted}"));
    assert!(holding >= 2, "the fixture has a HELD and a SOLD job");
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM jobs INDEXED BY jobs_counted WHERE {counted}"
        )),
        holding
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM sqlite_master
             WHERE name IN ('jobs_by_event_buyer', 'jobs_holding')"
        ),
        0
    );
}

/// Schema version 19 states the condition of `jobs_decided` (the index the retention delete walks)
/// as a chain of comparisons instead of an `IN` list: an older folder's rejected, failed, expired
/// and cancelled jobs are all in it, and no job index keeps an `IN` list.
#[tokio::test]
async fn an_older_folders_decided_jobs_are_all_in_the_retention_index() {
    let (_dir, file) = upgraded_fixture().await;
    let count = |sql: &str| count_of(&file, sql);
    let decided =
        "status = 'REJECTED' OR status = 'FAILED' OR status = 'EXPIRED' OR status = 'CANCELLED'";
    let jobs = count(&format!("SELECT count(*) FROM jobs WHERE {decided}"));
    assert_eq!(
        jobs, 4,
        "the fixture has a job in each of the four statuses"
    );
    assert_eq!(
        count(&format!(
            "SELECT count(*) FROM jobs INDEXED BY jobs_decided WHERE {decided}"
        )),
        jobs
    );
    assert_eq!(
        count(
            "SELECT count(*) FROM sqlite_master
             WHERE type = 'index' AND tbl_name = 'jobs' AND sql LIKE '% IN (%'"
        ),
        0
    );
}

/// Schema version 18 keeps only the free seats in the indexes a claim reads them through: an
/// older folder's free seats are all in both, its held and sold seats in neither, and the index
/// by state is gone.
#[tokio::test]
async fn an_older_folders_free_seats_are_all_in_the_free_seat_indexes() {
    let (_dir, file) = upgraded_fixture().await;
    let count = |sql: &str| count_of(&file, sql);
    let free = count("SELECT count(*) FROM seats WHERE state = 'AVAILABLE'");
    let taken = count("SELECT count(*) FROM seats WHERE state <> 'AVAILABLE'");
    assert!(
        free > 0 && taken > 0,
        "the fixture has free and taken seats"
    );
    for index in ["seats_free_best", "seats_free_rows"] {
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM seats INDEXED BY {index} WHERE state = 'AVAILABLE'"
            )),
            free,
            "{index}"
        );
        assert_eq!(
            count(&format!(
                "SELECT count(*) FROM sqlite_master
                 WHERE name = '{index}' AND sql LIKE '%WHERE state = ''AVAILABLE''%'"
            )),
            1,
            "{index} holds the free seats only"
        );
    }
    assert_eq!(
        count(
            "SELECT count(*) FROM sqlite_master
             WHERE name IN ('seats_by_section_state', 'seats_best')"
        ),
        0
    );
}

/// Schema version 6 adds prices and payments: an older folder's events are free and its jobs
/// owe nothing (its live hold is still the buyer's to confirm), and a priced event created after
/// the upgrade keeps a hold's amount due across a restart.
#[tokio::test]
async fn an_older_folders_events_are_free_and_new_prices_survive_a_restart() {
    let dir = copy_of_fixture();
    let now = Timestamp::now();
    let backend = open(dir.path(), now).await;
    let events = backend.catalog.events().await.unwrap();
    assert!(!events.is_empty());
    assert!(
        events.iter().all(|event| event.prices.is_free()),
        "{events:?}"
    );
    let held = backend
        .jobs
        .job(decided_jobs()["held"])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(held.amount_due, None);
    assert!(!held.awaits_payment(now), "an older hold needs no payment");

    let spec: seatclaim_core::domain::EventSpec = serde_json::from_value(serde_json::json!({
        "event_id": "priced", "name": "Priced", "currency": "EUR",
        "sections": [{"section": "P", "rows": 1, "seats_per_row": 4, "price": 700}],
    }))
    .unwrap();
    let event = seatclaim_core::domain::NewEvent::parse(spec).unwrap();
    backend.catalog.create_event(&event).await.unwrap();
    let intent = Intent {
        access: None,
        job_id: JobId::new(),
        event_id: event.event_id.clone(),
        buyer_id: BuyerId::parse("payer").unwrap(),
        request: SeatRequest::exact(&["P-1-1".into(), "P-1-2".into()]).unwrap(),
        accepted_at: now,
        opens_at: None,
    };
    let key = IdempotencyKey::parse("priced-1").unwrap();
    assert!(matches!(
        backend.admissions.admit(&key, &intent).await.unwrap(),
        Admission::Accepted(_)
    ));
    backend
        .inventory
        .claim(std::slice::from_ref(&intent), now)
        .await
        .unwrap();
    drop(backend);

    let reopened = open(dir.path(), now).await;
    let job = reopened.jobs.job(intent.job_id).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Held);
    let due = job.amount_due.expect("the hold's amount due");
    assert_eq!((due.amount, due.currency.as_str()), (1400, "EUR"));
    assert!(job.awaits_payment(now));
    let listed = reopened.catalog.events().await.unwrap();
    let priced = listed
        .iter()
        .find(|e| e.event_id == event.event_id)
        .unwrap();
    assert!(!priced.prices.is_free());
}

#[tokio::test]
async fn an_older_folder_gains_no_extension_or_waitlist_and_its_queued_intents_stand_in_line() {
    let dir = copy_of_fixture();
    let held_id = decided_jobs()["held"];
    let until = {
        let backend = open(dir.path(), Timestamp::now()).await;
        let held = backend.jobs.job(held_id).await.unwrap().unwrap();
        assert_eq!(held.hold_extensions, 0);
        held.hold_expires_at.unwrap()
    };
    // While the older hold is live, it is refused an extension: its event allows none.
    let backend = open(dir.path(), until - SignedDuration::from_secs(1)).await;
    let events = backend.catalog.events().await.unwrap();
    assert!(
        events
            .iter()
            .all(|e| e.extension == HoldExtension::NONE && e.waitlist == Waitlist::None),
        "{events:?}"
    );
    let extended = backend
        .inventory
        .settle(
            held_id,
            JobAction::Extend,
            &seatclaim_core::domain::Tender::Nothing,
        )
        .await
        .unwrap();
    assert!(
        matches!(extended, Settled::Conflict(JobConflict::NotExtendable)),
        "{extended:?}"
    );

    // The intents the older build left queued are in their event's line, on the new index.
    let e1 = EventId::parse("e1").unwrap();
    let mut aheads = Vec::new();
    for job in backend.jobs.of_event(&e1).await.unwrap() {
        if job.status == JobStatus::Pending {
            let line = backend.jobs.line(&job).await.unwrap();
            assert_eq!(line.decided, 0, "an older event starts its count afresh");
            aheads.push(line.ahead);
        }
    }
    aheads.sort_unstable();
    assert_eq!(aheads, [0, 1]);
}

#[tokio::test]
async fn an_older_folder_opens_at_once_and_its_section_claims_take_seats_in_the_organisers_order() {
    let dir = copy_of_fixture();
    let backend = open(dir.path(), Timestamp::now()).await;
    let e1 = EventId::parse("e1").unwrap();
    let events = backend.catalog.events().await.unwrap();
    assert!(
        events.iter().all(|e| e.sale_starts_at.is_none()),
        "{events:?}"
    );
    assert_eq!(backend.catalog.opening(&e1, None).await.unwrap(), None);
    let seats = backend.catalog.seat_map(&e1).await.unwrap().unwrap();
    assert!(
        seats.iter().all(|seat| seat.place.is_none()),
        "no places before version 11"
    );

    // A section request takes the first free seats of the section as the organiser listed them,
    // as before; a block finds no adjacent seats among seats without places.
    let free = seats
        .iter()
        .find(|seat| seat.state == seatclaim_core::domain::SeatState::Available)
        .expect("the fixture left a seat free");
    let section = free.section.as_str().to_owned();
    let intent_for = |key: &str, request: SeatRequest| {
        let buyer = BuyerId::parse("upgraded").unwrap();
        let key = IdempotencyKey::parse(key).unwrap();
        Intent {
            access: None,
            job_id: backend.admissions.new_job_id(&buyer, &key),
            event_id: e1.clone(),
            buyer_id: buyer,
            request,
            accepted_at: backend.clock.now(),
            opens_at: None,
        }
    };
    let intent = intent_for("k-upgrade", SeatRequest::in_section(&section, 1).unwrap());
    let key = IdempotencyKey::parse("k-upgrade").unwrap();
    assert!(matches!(
        backend.admissions.admit(&key, &intent).await.unwrap(),
        Admission::Accepted(_) | Admission::Decided(_)
    ));
    assert_eq!(
        backend
            .jobs
            .line(&backend.jobs.job(intent.job_id).await.unwrap().unwrap())
            .await
            .unwrap()
            .opens_at,
        None
    );
    let decided =
        seatclaim_core::app::claim(&backend, std::slice::from_ref(&intent), backend.clock.now())
            .await
            .unwrap();
    let job = backend.jobs.job(intent.job_id).await.unwrap().unwrap();
    assert_eq!(
        job.seat_ids,
        std::slice::from_ref(&free.seat_id),
        "{decided:?}"
    );
}

/// Schema version 12 finds a sale by its payment: the index covers the payments older builds
/// recorded (schema version 6's `payment` JSON) as well as new ones, so a payment reported again
/// after an upgrade is still known as the sold job's, never refunded as unmatched.
#[tokio::test]
async fn a_sale_an_older_build_recorded_is_found_by_its_payment() {
    let dir = copy_of_fixture();
    drop(open(dir.path(), Timestamp::now()).await);
    let sold = decided_jobs()["sold"];
    // As schema version 11 left it: the sale's payment recorded, no index of it yet, and the
    // line ordered by job id.
    let file = rusqlite::Connection::open(dir.path().join("seatclaim.sqlite3")).unwrap();
    take_back(&file, 11);
    file.execute(
        "UPDATE jobs SET payment = '{\"payment_ref\":\"pi_before\"}' WHERE job_id = ?1",
        [sold.to_string()],
    )
    .unwrap();
    drop(file);

    let backend = open(dir.path(), Timestamp::now()).await;
    assert_eq!(
        backend.jobs.sold_by_payment("pi_before").await.unwrap(),
        Some(sold)
    );
    assert_eq!(
        backend.jobs.sold_by_payment("pi_other").await.unwrap(),
        None
    );
}
