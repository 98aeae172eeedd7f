//! A waitlist served by several worker processes at once: buyers for a few seats form a line,
//! every hold lapses after six seconds, and the three workers' sweepers race to expire the
//! holds and hand the seats to the line, round after round, until every buyer has held a seat
//! and let it lapse. The line is served in admission order and no seat is ever held by two
//! jobs at once, however the sweepers interleave.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use jiff::Timestamp;
use seatclaim_e2e::{TestApp, eventually};
use serde_json::{Value, json};

use super::sale_with_workers;

const SEATS: u32 = 4;
const BUYERS: usize = 16;
/// Long enough that all the buyers are admitted before the first hold lapses, on a loaded machine.
const HOLD_SECONDS: u32 = 6;

/// When a published event happened.
fn occurred(event: &Value) -> Timestamp {
    event["detail"]["occurred_at"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

/// Every job's published events by kind (`Held`, `Expired`, ...), gathered until each of
/// `job_ids` has an `Expired` one (the consumer queue hands each event over once; the event
/// log every time, hence the map).
async fn lifetimes(app: &TestApp, job_ids: &[String]) -> HashMap<(String, String), Value> {
    let seen = std::sync::Mutex::new(HashMap::new());
    eventually(
        Duration::from_secs(60),
        "every lapse to be published",
        || async {
            let published = app.published_events().await;
            let mut seen = seen.lock().unwrap();
            for event in published {
                let job = event["detail"]["job_id"].as_str().unwrap().to_owned();
                let kind = event["detail"]["status"].as_str().unwrap().to_owned();
                seen.entry((job, kind)).or_insert(event);
            }
            let expired = |job: &String| seen.contains_key(&(job.clone(), "EXPIRED".into()));
            job_ids.iter().all(expired).then_some(())
        },
    )
    .await;
    seen.into_inner().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_sweepers_hand_lapsed_seats_to_the_line_in_order() {
    let (app, workers) = sale_with_workers(json!({"event_id": "wl", "name": "Lapsing",
        "waitlist": true, "hold_seconds": HOLD_SECONDS,
        "sections": [{"section": "W", "rows": 1, "seats_per_row": SEATS}]}))
    .await;
    // One after another, so admission order is the buyers' order on every backend.
    let mut job_ids = Vec::with_capacity(BUYERS);
    for n in 0..BUYERS {
        let body = json!({"buyer_id": format!("b{n}"), "section": "W", "quantity": 1});
        job_ids.push(app.reserve_ok("wl", &format!("k{n}"), &body).await);
    }
    let events = lifetimes(&app, &job_ids).await;
    let at = |job: &String, kind: &str| events.get(&(job.clone(), kind.to_owned())).map(occurred);

    // Served in admission order: among the jobs that waited, a later one never held first.
    let served: Vec<Timestamp> = job_ids
        .iter()
        .filter(|job| at(job, "WAITLISTED").is_some())
        .map(|job| at(job, "HELD").expect("every job held its seat in the end"))
        .collect();
    assert!(
        BUYERS - served.len() <= SEATS as usize,
        "only the first buyers found a free seat: {} waited",
        served.len()
    );
    assert!(
        served.windows(2).all(|pair| pair[0] <= pair[1]),
        "the line was passed: {served:?}"
    );
    // A seat's next hold starts only after the last one lapsed.
    let mut holds: BTreeMap<String, Vec<(Timestamp, Timestamp)>> = BTreeMap::new();
    for job in &job_ids {
        let held = &events[&(job.clone(), "HELD".to_owned())];
        let seat = held["detail"]["seat_ids"][0].as_str().unwrap().to_owned();
        let span = (occurred(held), at(job, "EXPIRED").unwrap());
        holds.entry(seat).or_default().push(span);
    }
    for (seat, spans) in &mut holds {
        spans.sort();
        assert!(
            spans.windows(2).all(|pair| pair[0].1 <= pair[1].0),
            "{seat} was held by two jobs at once: {spans:?}"
        );
    }
    drop(workers);
    app.assert_audit_passes("wl");
}
