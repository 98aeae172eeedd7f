//! Upgrading an AWS deployment from schema version 1 loses nothing: tables laid out and filled as
//! version 1 wrote them (seats keyed by event and seat, one outbox index key, jobs indexed by
//! event) are migrated by `seatclaimctl migrate`'s code, and then every stored fact still holds
//! and every operation works on the old event. On DynamoDB Local.

#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, ScalarAttributeType,
};
use jiff::SignedDuration;
use seatclaim_aws::{AwsNames, AwsSettings, LegacyNames};
use seatclaim_core::app::{self, audit_event, relay_once, sweep_once};
use seatclaim_core::codec::{JobRecord, encode_event};
use seatclaim_core::domain::{
    AuditLimits, BuyerId, EventId, EventSpec, IdempotencyKey, Intent, Job, JobId, JobStatus,
    NewEvent, Reason, ReasonCode, SeatId, SeatRequest, SeatState, SectionSpec,
};
use seatclaim_core::ports::{Admission, ClaimOutcome, Clock};
use seatclaim_e2e::JumpClock;
use seatclaim_e2e::emulator::{emulator_config, fresh_settings};

const VISIBILITY: Duration = Duration::from_secs(30);
type Item = std::collections::HashMap<String, AttributeValue>;

fn s(text: impl Into<String>) -> AttributeValue {
    AttributeValue::S(text.into())
}

fn n(number: i64) -> AttributeValue {
    AttributeValue::N(number.to_string())
}

/// A table as version 1 created it: `keys` are (name, hash or range), `indexes` (name, hash
/// attribute, range attribute); every key attribute is a string but `position`/`hold_until`.
async fn create_v1_table(
    db: &aws_sdk_dynamodb::Client,
    name: &str,
    keys: &[(&str, KeyType)],
    indexes: &[(&str, &str, &str)],
) {
    let kind = |attribute: &str| match attribute {
        "position" | "hold_until" => ScalarAttributeType::N,
        _ => ScalarAttributeType::S,
    };
    let element = |attribute: &str, key: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(attribute)
            .key_type(key)
            .build()
            .unwrap()
    };
    let mut attributes: Vec<&str> = keys.iter().map(|(a, _)| *a).collect();
    for (_, hash, range) in indexes {
        attributes.extend([*hash, *range]);
    }
    attributes.sort_unstable();
    attributes.dedup();
    let mut request = db
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest);
    for attribute in attributes {
        request = request.attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(attribute)
                .attribute_type(kind(attribute))
                .build()
                .unwrap(),
        );
    }
    for (attribute, key) in keys {
        request = request.key_schema(element(attribute, key.clone()));
    }
    for (index, hash, range) in indexes {
        request = request.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(*index)
                .key_schema(element(hash, KeyType::Hash))
                .key_schema(element(range, KeyType::Range))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        );
    }
    request.send().await.unwrap();
}

async fn put(db: &aws_sdk_dynamodb::Client, table: &str, item: Item) {
    db.put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

/// A job item as version 1 wrote it (a HELD job in one of 4 `held#` shards).
fn v1_job(job: &Job, now: i64) -> Item {
    let record = JobRecord::of(job).unwrap();
    let mut item = Item::from([
        ("job_id".into(), s(record.job_id)),
        ("event_id".into(), s(record.event_id)),
        ("buyer_id".into(), s(record.buyer_id)),
        ("request".into(), s(record.request)),
        ("status".into(), s(record.status)),
        ("seat_ids".into(), s(record.seat_ids)),
        ("accepted_at".into(), n(record.accepted_at)),
        ("updated_at".into(), n(now)),
    ]);
    if let Some(until) = record.hold_until {
        item.insert("hold_until".into(), n(until));
        let bits = uuid::Uuid::parse_str(&job.job_id.to_string())
            .unwrap()
            .as_u128();
        item.insert("held_shard".into(), s(format!("held#{}", bits % 4)));
    }
    if let Some(reason) = record.reason {
        item.insert("reason".into(), s(reason));
    }
    item
}

/// A version 1 seat item.
fn v1_seat(event: &str, seat: &str, position: i64, state: &str, job: Option<&Job>) -> Item {
    let mut item = Item::from([
        ("event_id".into(), s(event)),
        ("seat_id".into(), s(seat)),
        ("section".into(), s("A")),
        ("position".into(), n(position)),
        ("state".into(), s(state)),
    ]);
    match job {
        Some(job) => {
            item.insert("job_id".into(), s(job.job_id.to_string()));
            if let Some(until) = job.hold_expires_at {
                item.insert("hold_until".into(), n(until.as_millisecond()));
            }
        }
        None => {
            item.insert("free_key".into(), s(format!("{event}#A")));
        }
    }
    item
}

/// An intent of `buyer`, sent with the key `buyer`.
fn intent(event: &EventId, buyer: &str, at: jiff::Timestamp) -> Intent {
    let buyer_id = BuyerId::parse(buyer).unwrap();
    Intent {
        access: None,
        job_id: JobId::for_key(&buyer_id, &IdempotencyKey::parse(buyer).unwrap()),
        event_id: event.clone(),
        buyer_id,
        request: SeatRequest::in_section("A", 1).unwrap(),
        accepted_at: at,
        opens_at: None,
    }
}

/// The three jobs of the old sale: one HELD (A-1-1), one SOLD (A-1-3), one REJECTED.
struct OldSale {
    held: Job,
    sold: Job,
    rejected: Job,
}

async fn write_version_1(
    db: &aws_sdk_dynamodb::Client,
    prefix: &str,
    clock: &JumpClock,
) -> OldSale {
    let (names, legacy) = (
        AwsNames::from_settings(&AwsSettings {
            aws_prefix: prefix.into(),
            ..AwsSettings::default()
        }),
        LegacyNames::for_prefix(prefix),
    );
    create_v1_table(db, &names.events_table, &[("event_id", KeyType::Hash)], &[]).await;
    create_v1_table(
        db,
        &legacy.seats_table,
        &[("event_id", KeyType::Hash), ("seat_id", KeyType::Range)],
        &[("free-by-section", "free_key", "position")],
    )
    .await;
    create_v1_table(
        db,
        &legacy.jobs_table,
        &[("job_id", KeyType::Hash)],
        &[
            ("held-by-deadline", "held_shard", "hold_until"),
            ("by-event", "event_id", "job_id"),
        ],
    )
    .await;
    create_v1_table(
        db,
        &legacy.outbox_table,
        &[("id", KeyType::Hash)],
        &[("unpublished", "pending", "id"), ("by-job", "job_id", "id")],
    )
    .await;

    let now = clock.now();
    let event = EventId::parse("old").unwrap();
    let decided = |buyer: &str| Job::pending(&intent(&event, buyer, now));
    let held = decided("b1")
        .hold(
            vec![SeatId::parse("A-1-1").unwrap()],
            now + SignedDuration::from_mins(10),
            None,
            now,
        )
        .unwrap();
    let sold_hold = decided("b2")
        .hold(
            vec![SeatId::parse("A-1-3").unwrap()],
            now + SignedDuration::from_mins(10),
            None,
            now,
        )
        .unwrap();
    let sold = sold_hold
        .job
        .confirm(&seatclaim_core::domain::Tender::Waived, now)
        .unwrap()
        .unwrap()
        .transition;
    let rejected = decided("b3")
        .reject(&Reason::seat_unavailable(), now)
        .unwrap();

    put(
        db,
        &names.events_table,
        Item::from([
            ("event_id".into(), s("old")),
            ("name".into(), s("Before the upgrade")),
            ("hold_ms".into(), n(600_000)),
            ("sections".into(), AttributeValue::Ss(vec!["A".into()])),
            ("seat_count".into(), n(3)),
            ("status".into(), s("READY")),
        ]),
    )
    .await;
    for (seat, position, state, job) in [
        ("A-1-1", 0, "HELD", Some(&held.job)),
        ("A-1-2", 1, "AVAILABLE", None),
        ("A-1-3", 2, "SOLD", Some(&sold.job)),
    ] {
        put(
            db,
            &legacy.seats_table,
            v1_seat("old", seat, position, state, job),
        )
        .await;
    }
    let ms = now.as_millisecond();
    for job in [&held.job, &sold.job, &rejected.job] {
        put(db, &legacy.jobs_table, v1_job(job, ms)).await;
    }
    for (sequence, (transition, pending)) in [(&held, true), (&sold, false), (&rejected, true)]
        .into_iter()
        .enumerate()
    {
        let mut entry = Item::from([
            ("id".into(), s(format!("{ms:013}-{sequence:012}-v1"))),
            ("job_id".into(), s(transition.job.job_id.to_string())),
            ("body".into(), s(encode_event(&transition.event).unwrap())),
            ("created_at".into(), n(ms)),
        ]);
        if pending {
            entry.insert("pending".into(), s("pending"));
        }
        put(db, &legacy.outbox_table, entry).await;
    }
    OldSale {
        held: held.job,
        sold: sold.job,
        rejected: rejected.job,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_deployment_migrates_without_losing_anything() {
    let config = emulator_config().await;
    let settings = fresh_settings();
    let db = aws_sdk_dynamodb::Client::new(&config);
    let clock = Arc::new(JumpClock::default());
    let old = write_version_1(&db, &settings.aws_prefix, &clock).await;

    let migration = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    eprintln!("{migration}");
    let done = &migration.done;
    assert_eq!(
        (done.seats, done.outbox_entries, done.jobs),
        (3, 3, 3),
        "{migration}"
    );
    assert!(
        migration.to_string().contains("copied 3 seats"),
        "{migration}"
    );

    let backend = seatclaim_e2e::emulator::open(&config, &settings, VISIBILITY, clock.clone())
        .await
        .unwrap();
    let event = EventId::parse("old").unwrap();
    let seats = backend
        .catalog
        .seat_map(&event)
        .await
        .unwrap()
        .expect("the old event");
    let states: Vec<_> = seats.iter().map(|seat| seat.state).collect();
    assert!(matches!(states[0], SeatState::Held { job_id, .. } if job_id == old.held.job_id));
    assert_eq!(states[1], SeatState::Available);
    assert!(matches!(states[2], SeatState::Sold { job_id } if job_id == old.sold.job_id));
    let jobs = event_jobs(&backend, &event).await;
    let mut expected = vec![old.held.job_id, old.sold.job_id, old.rejected.job_id];
    expected.sort();
    assert_eq!(jobs, expected, "the audit index has every old job");
    let rejected = backend
        .jobs
        .job(old.rejected.job_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (rejected.reason.as_deref(), rejected.reason_code),
        (
            Some("seat no longer available"),
            Some(ReasonCode::SeatUnavailable)
        ),
        "a job item stored before codes reads with the code of its reason"
    );
    assert_eq!(
        backend.jobs.history(old.sold.job_id).await.unwrap().len(),
        1
    );
    assert_eq!(
        relay_once(&backend).await.unwrap(),
        2,
        "the two unpublished entries"
    );
    assert_eq!(relay_once(&backend).await.unwrap(), 0);

    // The free list, the sweeper's shards and the release path work on the old seats.
    let claim = |buyer: &'static str| {
        let backend = backend.clone();
        let event = event.clone();
        async move {
            let intent = intent(&event, buyer, backend.clock.now());
            let key = IdempotencyKey::parse(buyer).unwrap();
            backend.admissions.admit(&key, &intent).await.unwrap();
            app::claim(&backend, &[intent], backend.clock.now())
                .await
                .unwrap()
                .remove(0)
        }
    };
    assert!(
        matches!(claim("new-1").await, ClaimOutcome::Held { seat_ids, .. } if seat_ids[0].as_str() == "A-1-2")
    );
    assert!(matches!(
        claim("new-2").await,
        ClaimOutcome::Rejected { .. }
    ));
    clock.advance(SignedDuration::from_mins(11));
    assert_eq!(
        sweep_once(&backend).await.unwrap(),
        2,
        "the old hold and the new one lapse"
    );
    let job = backend.jobs.job(old.held.job_id).await.unwrap().unwrap();
    assert_eq!(job.status, JobStatus::Expired);
    assert!(
        matches!(claim("new-3").await, ClaimOutcome::Held { .. }),
        "the released seats are free again"
    );
    let limits = AuditLimits {
        max_pending: SignedDuration::from_mins(5),
        max_outbox_lag: SignedDuration::from_hours(1),
        opens_at: None,
    };
    let report = audit_event(&backend, &event, limits)
        .await
        .unwrap()
        .unwrap();
    assert!(report.violations.is_empty(), "{:?}", report.violations);

    let again = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    assert_eq!(
        (again.done.seats, again.done.jobs),
        (0, 0),
        "a second run copies nothing: {again}"
    );
}

/// Version 3 keeps a key's record in its job item and no longer uses version 2's
/// `by-event-shard` index of jobs: `migrate` copies version 2's idempotency records as aliases
/// (once), so a retry with a key admitted before the upgrade still gets its job, and reports the
/// index; the audit's read (a scan) finds the version 2 job and the new one, and the new one
/// stays out of the old index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_2_deployment_keeps_its_keys_and_loses_its_jobs_by_event_index() {
    let config = emulator_config().await;
    let settings = fresh_settings();
    let db = aws_sdk_dynamodb::Client::new(&config);
    let names = AwsNames::from_settings(&settings);
    create_v1_table(
        &db,
        &names.jobs_table,
        &[("job_id", KeyType::Hash)],
        &[
            ("held-by-deadline", "held_shard", "hold_until"),
            ("by-event-shard", "event_shard", "job_id"),
        ],
    )
    .await;
    create_v1_table(&db, &names.idempotency_table, &[("id", KeyType::Hash)], &[]).await;
    let event = EventId::parse("v2").unwrap();
    // Version 2 gave jobs random ids and kept the key's record apart.
    let earlier = intent(&event, "b1", jiff::Timestamp::now());
    let job = Job::pending(&Intent {
        job_id: JobId::new(),
        ..earlier.clone()
    });
    let mut item = v1_job(&job, 1_000);
    item.insert("event_shard".to_owned(), s("v2#7"));
    put(&db, &names.jobs_table, item).await;
    let fingerprint = earlier.request.fingerprint(&event);
    let record = Item::from([
        ("id".to_owned(), s("b1#b1")),
        ("fingerprint".to_owned(), s(fingerprint)),
        ("job_id".to_owned(), s(job.job_id.to_string())),
        ("created_at".to_owned(), n(1_000)),
        ("expires_at".to_owned(), n(4_000_000_000)),
    ]);
    put(&db, &names.idempotency_table, record).await;

    let migration = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    let unused = format!("{}/by-event-shard", names.jobs_table);
    assert_eq!(
        migration.done.unused_indexes,
        std::slice::from_ref(&unused),
        "{migration}"
    );
    assert!(
        migration
            .to_string()
            .contains(&format!("unused indexes: {unused}"))
    );
    assert_eq!(migration.done.keys, 1, "{migration}");
    let again = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    assert_eq!(again.done.keys, 0, "{again}");

    let backend = seatclaim_e2e::emulator::open(
        &config,
        &settings,
        VISIBILITY,
        Arc::new(JumpClock::default()),
    )
    .await
    .unwrap();
    let key = IdempotencyKey::parse("b1").unwrap();
    assert_eq!(
        backend.admissions.admit(&key, &earlier).await.unwrap(),
        Admission::Duplicate(job.job_id),
        "a retry across the upgrade gets the job it was given before"
    );
    let other = Intent {
        request: SeatRequest::in_section("A", 2).unwrap(),
        ..earlier.clone()
    };
    assert_eq!(
        backend.admissions.admit(&key, &other).await.unwrap(),
        Admission::KeyReused
    );
    assert!(
        backend.jobs.job(earlier.job_id).await.unwrap().is_none(),
        "the alias is no job"
    );
    let jobs = backend.jobs.of_event(&event).await.unwrap();
    assert_eq!(
        jobs.iter().map(|j| j.job_id).collect::<Vec<_>>(),
        [job.job_id]
    );
    let fresh = intent(&event, "b2", jiff::Timestamp::now());
    backend.catalog.create_event(&v2_event()).await.unwrap();
    let key = IdempotencyKey::parse("b2").unwrap();
    assert_eq!(
        backend.admissions.admit(&key, &fresh).await.unwrap(),
        Admission::Accepted(fresh.job_id)
    );
    let mut want = vec![job.job_id, fresh.job_id];
    want.sort();
    assert_eq!(event_jobs(&backend, &event).await, want);
    let indexed = db
        .scan()
        .table_name(&names.jobs_table)
        .index_name("by-event-shard")
        .send()
        .await
        .unwrap();
    assert_eq!(
        indexed.count(),
        1,
        "only the version 2 job is in the old index"
    );
}

/// The ids of an event's jobs as the audit reads them, sorted.
async fn event_jobs(backend: &seatclaim_core::Backend, event: &EventId) -> Vec<JobId> {
    let mut jobs: Vec<_> = backend
        .jobs
        .of_event(event)
        .await
        .unwrap()
        .iter()
        .map(|j| j.job_id)
        .collect();
    jobs.sort();
    jobs
}

/// The event of the version 2 test: section A of one seat.
fn v2_event() -> NewEvent {
    NewEvent::parse(v2_event_spec()).unwrap()
}

fn v2_event_spec() -> EventSpec {
    EventSpec {
        event_id: "v2".into(),
        name: "v2".into(),
        hold_seconds: Some(600),
        sections: Some(vec![SectionSpec {
            channel: None,
            section: "A".into(),
            rows: 1,
            seats_per_row: 1,
            price: None,
        }]),
        ..EventSpec::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_3_code_item_joins_the_summarys_index() {
    let config = emulator_config().await;
    let settings = fresh_settings();
    let db = aws_sdk_dynamodb::Client::new(&config);
    let names = AwsNames::from_settings(&settings);
    let first = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    assert_eq!(first.done.codes_indexed, 0, "{first}");
    let backend = seatclaim_e2e::emulator::open(
        &config,
        &settings,
        VISIBILITY,
        Arc::new(JumpClock::default()),
    )
    .await
    .unwrap();
    let spec = EventSpec {
        channels: Some(vec![seatclaim_core::domain::ChannelSpec {
            name: "fanclub".into(),
            sale_starts_at: None,
            release_at: None,
        }]),
        ..v2_event_spec()
    };
    let event = EventId::parse("v2").unwrap();
    backend
        .catalog
        .create_event(&NewEvent::parse(spec).unwrap())
        .await
        .unwrap();
    // A code as version 3 stored it: its terms and count, no index keys.
    let hash = "ab".repeat(32);
    let item = Item::from([
        ("seat_key".to_owned(), s(format!("v2#code#{hash}"))),
        ("channel".to_owned(), s("fanclub")),
        ("max_seats".to_owned(), n(4)),
        ("bind".to_owned(), n(0)),
        ("seats".to_owned(), n(3)),
        ("sold".to_owned(), n(1)),
    ]);
    put(&db, &names.seats_table, item).await;
    let now = jiff::Timestamp::now();
    let tallies = |backend: &seatclaim_core::Backend| {
        let catalog = backend.catalog.clone();
        let event = event.clone();
        async move { catalog.tallies(&event, now, now).await.unwrap().unwrap() }
    };
    assert_eq!(tallies(&backend).await.codes_issued, 0, "not indexed yet");

    let migration = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    assert_eq!(migration.done.codes_indexed, 1, "{migration}");
    let counted = tallies(&backend).await;
    assert_eq!(
        (
            counted.codes_issued,
            counted.code_seats_held,
            counted.code_seats_sold
        ),
        (1, 2, 1)
    );
    let code = seatclaim_core::domain::CodeHash::parse(&hash).unwrap();
    let standing = backend.catalog.code(&event, &code, now).await.unwrap();
    assert_eq!(
        standing.map(|s| (s.held, s.sold)),
        Some((2, 1)),
        "the code still reads"
    );
    let again = seatclaim_aws::migrate_for(&settings, VISIBILITY, 3)
        .await
        .unwrap();
    assert_eq!(again.done.codes_indexed, 0, "{again}");
}
