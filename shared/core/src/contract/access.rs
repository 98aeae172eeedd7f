//! Presale channels and access codes in the port contract: a channel's seats go only to its
//! intents until its release, and a code's seats are counted in the claim's atomic step, so
//! claims racing on one code from several worker loops hold no more than its `max_seats`.

use futures_util::future::join_all;
use jiff::{SignedDuration, Timestamp};

use crate::contract::{Fixture, claim_as_redelivered};
use crate::domain::{
    Access, AccessCode, BuyerId, ChannelName, ChannelSpec, CodeHash, CodeKey, CodeRecord,
    CodeTerms, EventId, EventSpec, IdempotencyKey, Intent, Job, JobAction, JobStatus, NewEvent,
    ReasonCode, SeatRequest, SectionSpec, Tender,
};
use crate::ports::{Admission, CodesCreation, Settled};
use crate::testkit::seeded_rng;

/// Worker loops claiming at once.
const LOOPS: usize = 4;
/// The code's seats in the race.
const CODE_SEATS: u32 = 5;

/// An event whose section `F` (20 seats) is set aside for channel `fanclub` until `release_at`,
/// beside a public section `A`.
async fn presale(f: &Fixture, event: &str, release_at: Option<Timestamp>) -> EventId {
    let times = Times {
        release_at,
        ..Times::default()
    };
    presale_from(f, event, times).await
}

/// When a presale's sales start and its channel's seats are released.
#[derive(Default)]
pub(super) struct Times {
    /// The event's own start.
    pub(super) event_starts: Option<Timestamp>,
    /// The channel's own start.
    pub(super) channel_starts: Option<Timestamp>,
    /// The channel's release.
    pub(super) release_at: Option<Timestamp>,
}

/// [`presale`] at `times`.
pub(super) async fn presale_from(f: &Fixture, event: &str, times: Times) -> EventId {
    let section = |name: &str, channel: Option<&str>| SectionSpec {
        section: name.into(),
        rows: 1,
        seats_per_row: 20,
        price: None,
        channel: channel.map(str::to_owned),
    };
    let event = NewEvent::parse(EventSpec {
        event_id: event.into(),
        name: event.into(),
        sections: Some(vec![section("F", Some("fanclub")), section("A", None)]),
        channels: Some(vec![ChannelSpec {
            name: "fanclub".into(),
            sale_starts_at: times.channel_starts.map(|at| at.to_string()),
            release_at: times.release_at.map(|at| at.to_string()),
        }]),
        sale_starts_at: times.event_starts.map(|at| at.to_string()),
        ..EventSpec::default()
    })
    .expect("a valid event");
    f.backend.catalog.create_event(&event).await.unwrap();
    event.event_id
}

fn key() -> CodeKey {
    CodeKey::new(vec![42; 32]).unwrap()
}

/// Creates code `text` of channel fanclub with `max_seats`, binding or not.
pub(super) async fn code(
    f: &Fixture,
    event: &EventId,
    text: &str,
    max_seats: u32,
    bind: bool,
) -> CodeHash {
    let hash = key().hash(event, &AccessCode::parse(text).unwrap());
    let record = CodeRecord {
        hash: hash.clone(),
        terms: CodeTerms {
            channel: ChannelName::parse("fanclub").unwrap(),
            max_seats,
            valid_from: None,
            valid_until: None,
            bind,
        },
        bound_to: None,
        revoked: false,
    };
    let created = f
        .backend
        .catalog
        .create_codes(event, &[record])
        .await
        .unwrap();
    assert_eq!(created, CodesCreation::Created(1));
    hash
}

/// Admits `buyer`'s intent for one seat of `section`, under `code` if given.
async fn admitted(
    f: &Fixture,
    event: &EventId,
    buyer: &str,
    section: &str,
    code: Option<&CodeHash>,
) -> Intent {
    let (intent, admitted) = admit(f, event, buyer, section, code).await;
    assert_eq!(admitted, Admission::Accepted(intent.job_id));
    intent
}

/// [`admitted`], answered as the backend answers it.
pub(super) async fn admit(
    f: &Fixture,
    event: &EventId,
    buyer: &str,
    section: &str,
    code: Option<&CodeHash>,
) -> (Intent, Admission) {
    let buyer_id = BuyerId::parse(buyer).unwrap();
    let key = IdempotencyKey::parse(&format!("access-{}", uuid::Uuid::new_v4())).unwrap();
    let intent = Intent {
        job_id: f.backend.admissions.new_job_id(&buyer_id, &key),
        event_id: event.clone(),
        buyer_id,
        request: SeatRequest::in_section(section, 1).unwrap(),
        accepted_at: f.backend.clock.now(),
        opens_at: None,
        access: code.map(|hash| Access {
            channel: ChannelName::parse("fanclub").unwrap(),
            code: Some(hash.clone()),
        }),
    };
    let admitted = f.backend.admissions.admit(&key, &intent).await.unwrap();
    (intent, admitted)
}

pub(super) async fn decided(f: &Fixture, intent: &Intent) -> Job {
    claim_as_redelivered(f, std::slice::from_ref(intent)).await;
    f.backend.jobs.job(intent.job_id).await.unwrap().unwrap()
}

pub(super) fn assert_rejected(job: &Job, code: ReasonCode) {
    assert_eq!(job.status, JobStatus::Rejected, "{job:?}");
    assert_eq!(job.reason_code, Some(code), "{job:?}");
}

/// Twenty buyers race one-seat claims on one code of five seats from four loops: exactly five
/// are held, the rest are rejected naming the code; a cancelled hold gives its seat back to the
/// code, and the standing counts what was held and sold.
pub async fn racing_claims_on_one_code_hold_no_more_than_its_seats(f: Fixture) {
    let event = presale(&f, "presale-race", None).await;
    let hash = code(&f, &event, "FAN-RACE", CODE_SEATS, false).await;
    let mut intents = Vec::new();
    for n in 0..20 {
        intents.push(admitted(&f, &event, &format!("fan{n}"), "F", Some(&hash)).await);
    }
    seeded_rng().shuffle(&mut intents);
    let shares: Vec<Vec<Intent>> = (0..LOOPS)
        .map(|l| intents.iter().skip(l).step_by(LOOPS).cloned().collect())
        .collect();
    join_all(shares.iter().map(|share| claim_as_redelivered(&f, share))).await;
    let mut held = Vec::new();
    for intent in &intents {
        let job = f.backend.jobs.job(intent.job_id).await.unwrap().unwrap();
        match job.status {
            JobStatus::Held => held.push(job),
            _ => assert_rejected(&job, ReasonCode::AccessCodeUsedUp),
        }
    }
    assert_eq!(
        held.len(),
        CODE_SEATS as usize,
        "held under a code of {CODE_SEATS}"
    );
    let (sold, cancelled) = (&held[0], &held[1]);
    let settle = |job: &Job, action| {
        f.backend
            .inventory
            .settle(job.job_id, action, &Tender::Waived)
    };
    assert!(matches!(
        settle(sold, JobAction::Confirm).await.unwrap(),
        Settled::Done(_)
    ));
    assert!(matches!(
        settle(cancelled, JobAction::Cancel).await.unwrap(),
        Settled::Done(_)
    ));
    let now = f.backend.clock.now();
    let standing = f
        .backend
        .catalog
        .code(&event, &hash, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((standing.held, standing.sold), (CODE_SEATS - 2, 1));
    let again = admitted(&f, &event, "late-fan", "F", Some(&hash)).await;
    assert_eq!(decided(&f, &again).await.status, JobStatus::Held);
    let over = admitted(&f, &event, "later-fan", "F", Some(&hash)).await;
    assert_rejected(&decided(&f, &over).await, ReasonCode::AccessCodeUsedUp);
}

/// A channel's seats go to its intents only, and its intents take only its seats; from the
/// channel's release on, its free seats are public.
pub async fn a_channels_seats_go_to_its_intents_until_its_release(f: Fixture) {
    let release_at = f.backend.clock.now() + SignedDuration::from_secs(3_600);
    let event = presale(&f, "presale-channel", Some(release_at)).await;
    let hash = code(&f, &event, "FAN-CHANNEL", 10, false).await;
    let public = admitted(&f, &event, "public", "F", None).await;
    assert_rejected(&decided(&f, &public).await, ReasonCode::ChannelSeats);
    let astray = admitted(&f, &event, "fan-astray", "A", Some(&hash)).await;
    assert_rejected(&decided(&f, &astray).await, ReasonCode::ChannelSeats);
    let fan = admitted(&f, &event, "fan", "F", Some(&hash)).await;
    assert_eq!(decided(&f, &fan).await.status, JobStatus::Held);
    f.clock.advance(SignedDuration::from_secs(3_601));
    let after = admitted(&f, &event, "public-after", "F", None).await;
    assert_eq!(decided(&f, &after).await.status, JobStatus::Held);
}

/// An unknown or revoked code is rejected naming it, and a binding code serves its first buyer
/// only.
pub async fn codes_that_do_not_admit_are_rejected_naming_why(f: Fixture) {
    let event = presale(&f, "presale-codes", None).await;
    let unknown = key().hash(&event, &AccessCode::parse("NOT-A-CODE").unwrap());
    let stranger = admitted(&f, &event, "stranger", "F", Some(&unknown)).await;
    assert_rejected(&decided(&f, &stranger).await, ReasonCode::AccessCodeUnknown);
    let bound = code(&f, &event, "FAN-BIND", 4, true).await;
    let first = admitted(&f, &event, "first", "F", Some(&bound)).await;
    assert_eq!(decided(&f, &first).await.status, JobStatus::Held);
    let second = admitted(&f, &event, "second", "F", Some(&bound)).await;
    assert_rejected(&decided(&f, &second).await, ReasonCode::AccessCodeBound);
    let again = admitted(&f, &event, "first", "F", Some(&bound)).await;
    assert_eq!(decided(&f, &again).await.status, JobStatus::Held);
    assert!(f.backend.catalog.revoke_code(&event, &bound).await.unwrap());
    let revoked = admitted(&f, &event, "first", "F", Some(&bound)).await;
    assert_rejected(&decided(&f, &revoked).await, ReasonCode::AccessCodeRevoked);
    let twice = CodeRecord {
        hash: bound,
        terms: CodeTerms {
            channel: ChannelName::parse("fanclub").unwrap(),
            max_seats: 1,
            valid_from: None,
            valid_until: None,
            bind: false,
        },
        bound_to: None,
        revoked: false,
    };
    let exists = f
        .backend
        .catalog
        .create_codes(&event, &[twice])
        .await
        .unwrap();
    assert_eq!(exists, CodesCreation::Exists);
}

/// The summary's tallies count an event's codes and the seats held and sold under them, its
/// line and its holds lapsing before the horizon; an unknown event has none.
pub async fn an_events_tallies_count_its_codes_lines_and_lapsing_holds(f: Fixture) {
    let event = presale(&f, "presale-tallies", None).await;
    let hash = code(&f, &event, "FAN-TALLY", 4, false).await;
    code(&f, &event, "FAN-IDLE", 4, false).await;
    let held = admitted(&f, &event, "fan-held", "F", Some(&hash)).await;
    let sold = admitted(&f, &event, "fan-sold", "F", Some(&hash)).await;
    let public = admitted(&f, &event, "public", "A", None).await;
    for intent in [&held, &sold, &public] {
        assert_eq!(decided(&f, intent).await.status, JobStatus::Held);
    }
    let confirm = JobAction::Confirm;
    let settled = f
        .backend
        .inventory
        .settle(sold.job_id, confirm, &Tender::Waived);
    assert!(matches!(settled.await.unwrap(), Settled::Done(_)));
    let now = f.backend.clock.now();
    let tallies = |horizon: Timestamp| {
        let (catalog, event) = (f.backend.catalog.clone(), event.clone());
        async move {
            catalog
                .tallies(&event, now, horizon)
                .await
                .unwrap()
                .unwrap()
        }
    };
    let day = tallies(now + SignedDuration::from_hours(24)).await;
    assert_eq!(
        (day.codes_issued, day.code_seats_held, day.code_seats_sold),
        (2, 1, 1)
    );
    assert_eq!((day.waitlisted, day.holds_expiring), (0, 2), "{day:?}");
    let minute = tallies(now + SignedDuration::from_secs(60)).await;
    assert_eq!(minute.holds_expiring, 0, "holds last 300 s: {minute:?}");
    let unknown = EventId::parse("no-such-event").unwrap();
    let none = f.backend.catalog.tallies(&unknown, now, now).await.unwrap();
    assert_eq!(none, None);
}
